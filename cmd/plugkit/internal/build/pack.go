package build

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/input"
	"github.com/plugkit/plugkit/internal/atomicfile"
	"github.com/plugkit/plugkit/snapshot"
)

// packResult is pack's --json document.
type packResult struct {
	Digest      string                   `json:"digest"`
	Size        int                      `json:"size"`
	Path        string                   `json:"path"`
	Name        string                   `json:"name"`
	Version     string                   `json:"version,omitempty"`
	Root        string                   `json:"root,omitempty"`
	Files       int                      `json:"files"`
	Diagnostics []agentplugin.Diagnostic `json:"diagnostics"`
}

// packOptions are the flags of plugkit pack.
type packOptions struct {
	out         string
	pack        PackDirOptions
	asJSON      bool
	allowErrors bool
}

// NewCmdPack builds plugkit pack, which runs with fac.
func NewCmdPack(fac *factory.Factory) *cobra.Command {
	opts := &packOptions{}
	cmd := &cobra.Command{
		Use:   "pack DIR",
		Short: "Validate a plugin directory and write its deterministic archive",
		Long: `Pack reads the plugin directory DIR as validate does, refuses a plugin the
specification rejects, and writes a deterministic gzip-compressed USTAR
archive atomically (a temporary sibling renamed into place). It prints the
archive's digest, size and path, after any diagnostics.

A plugin with error diagnostics (an invalid skill, a server that will not
start) is refused, as push, publish and install refuse it: its report is
printed as validate prints it and nothing is written, unless --allow-errors.

Links: a symbolic link whose target stays inside DIR is packed as the file or
directory it points to, exactly as validate and inspect read it; a link that
escapes DIR, loops or dangles is left out with a warning. --strict-links
refuses any link or special file instead.

The default output is NAME-VERSION.tar.gz (NAME.tar.gz without a version)
in the current directory, or beside DIR when the current directory is inside
it, so that "plugkit pack ." never writes into the plugin. An -o path inside
DIR is never packed itself. In the name, characters other than letters,
digits, '.', '_', '+' and '-' become '_'. --root puts every entry under a
folder, as the OCI profile requires (--root NAME with the plugin's name).

Memory: only plugin.json, mcp.json and each SKILL.md are held; the other
files are read again as the archive is written. A file that changed in
between (removed, replaced, or of another size) fails the pack with
"FILE changed while packing" and no archive is written.

Exit status: 0 written, 1 the plugin is rejected, has error diagnostics
(without --allow-errors) or cannot be packed, 2 usage or I/O error.`,
		Example: `  plugkit pack ./my-plugin
  cd my-plugin && plugkit pack .          # writes ../my-plugin-1.0.0.tar.gz
  plugkit pack ./my-plugin -o dist/my-plugin.tar.gz --json
  plugkit pack ./my-plugin --strict-links
  plugkit pack ./my-plugin --root my-plugin -o layer.tar.gz
  plugkit pack ./broken-plugin --allow-errors -o broken.tar.gz   # a fixture for a test`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPack(cmd, args[0], opts.out, opts.pack, opts.asJSON, opts.allowErrors)
		},
	}
	cmd.Flags().StringVarP(&opts.out, "output", "o", "", "archive to write (default NAME-VERSION.tar.gz, outside DIR)")
	cmd.Flags().StringVar(&opts.pack.Root, "root", "", "put every entry under this folder")
	input.RegisterStrictLinks(cmd, &opts.pack.StrictLinks)
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	cmd.Flags().BoolVar(&opts.allowErrors, "allow-errors", false, "pack a plugin that loads with error diagnostics")
	return cmd
}

func runPack(cmd *cobra.Command, dir, out string, opts PackDirOptions, asJSON, allowErrors bool) error {
	opts.Exclude = out
	pkg, part, err := loadPackPartial(dir, opts)
	if err != nil {
		return command.Explain(cmd, err)
	}
	defer part.Close()
	if agentplugin.HasErrors(pkg.Diagnostics) && !allowErrors {
		if !asJSON {
			PrintValidateReport(cmd.OutOrStdout(), ReportOf(dir, false, pkg), false)
		}
		return command.ErrorDiagnosticsRefused(dir, "packed", "packs", pkg.Diagnostics)
	}
	if out == "" {
		if out, err = defaultOutput(dir, defaultArchiveName(pkg.Name, pkg.Version)); err != nil {
			return command.Usage(err)
		}
	}
	if err := cmd.Context().Err(); err != nil {
		return err // interrupted: write nothing
	}
	digest, err := packToFile(out, part, opts.Root)
	if err != nil {
		return command.Explain(cmd, err)
	}
	res := packResult{Digest: digest.Digest(), Size: int(digest.Size()), Path: out, Name: pkg.Name, Version: pkg.Version,
		Root: opts.Root, Files: part.Len(), Diagnostics: command.NonNil(pkg.Diagnostics)}
	return command.Output(cmd, asJSON, res, func(w io.Writer) {
		command.PrintDiagnostics(w, res.Diagnostics)
		command.Printf(w, "digest: %s\nsize:   %d\npath:   %s\n", res.Digest, res.Size, res.Path)
	})
}

// PackDirOptions say how a plugin directory becomes an archive. pack and
// publish share them, and inspect and validate read with the same link
// rule, so that what validate accepts is what pack packs and what inspect's
// digest names.
type PackDirOptions struct {
	// Root puts every entry under this folder (archive.PackOptions.Root).
	Root string
	// StrictLinks refuses any link or special file instead of reading links
	// that stay inside the root as what they point to.
	StrictLinks bool
	// Exclude names the archive being written, as the user gave it: when
	// it lies inside the directory it is left out, so that packing twice
	// never packs the previous archive.
	Exclude string
}

// loadPackDir reads dir with the link rule and loads it, refusing a
// rejected plugin. Errors come as failed or usage; a rejection carries its
// diagnostics (agentplugin.Diagnostics).
func loadPackDir(dir string, opts PackDirOptions) (*agentplugin.Package, error) {
	snap, err := snapshot.ReadDir(dir, input.ReadOptions(opts.StrictLinks))
	if err != nil {
		return nil, readDirError(err)
	}
	if rel, ok := excluded(dir, opts); ok {
		delete(snap.Files, rel)
		delete(snap.Modes, rel)
	}
	return loadedOrFailed(agentplugin.Load(snap, agentplugin.Options{}))
}

// loadPackPartial is loadPackDir holding the bytes of only the files the
// loader reads: pack streams the others from the directory, so that it
// never holds the payload. Close the Partial.
func loadPackPartial(dir string, opts PackDirOptions) (*agentplugin.Package, *snapshot.Partial, error) {
	part, err := snapshot.ReadPartial(dir, input.ReadOptions(opts.StrictLinks), agentplugin.ReadsContent)
	if err != nil {
		return nil, nil, readDirError(err)
	}
	if rel, ok := excluded(dir, opts); ok {
		part.Remove(rel)
	}
	pkg, err := loadedOrFailed(agentplugin.LoadPartial(part, agentplugin.Options{}))
	if err != nil {
		part.Close()
		return nil, nil, err
	}
	return pkg, part, nil
}

// readDirError is how pack and publish report an error of reading the
// plugin directory.
func readDirError(err error) error {
	switch {
	case errors.Is(err, snapshot.ErrNotRegular):
		return command.Failed(fmt.Errorf("%w (--strict-links refuses links and special files)", err))
	case errors.Is(err, snapshot.ErrLimit):
		return command.Failed(err)
	}
	return command.Usage(err)
}

// excluded is the package path of the archive being written, when it lies
// inside dir.
func excluded(dir string, opts PackDirOptions) (string, bool) {
	if opts.Exclude == "" {
		return "", false
	}
	return pathInside(dir, opts.Exclude)
}

// loadedOrFailed gives the loader's refusal exit status 1 (failed), for the
// two ways pack and publish load a plugin directory.
func loadedOrFailed(pkg *agentplugin.Package, err error) (*agentplugin.Package, error) {
	if err != nil {
		return nil, command.Failed(err)
	}
	return pkg, nil
}

// PackDir is loadPackDir and the archive in memory: what publish sends.
func PackDir(dir string, opts PackDirOptions) (*agentplugin.Package, []byte, error) {
	pkg, err := loadPackDir(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	b, err := archive.Pack(pkg.Snapshot, archive.PackOptions{Root: opts.Root})
	if err != nil {
		return nil, nil, command.Failed(err)
	}
	if err := checkArchiveSize(int64(len(b))); err != nil {
		return nil, nil, err
	}
	return pkg, b, nil
}

// packToFile streams the archive of part into path through a temporary
// sibling renamed into place, so that neither the archive nor the payload
// is held in memory; on any error, a deferred file that changed included,
// path is untouched.
func packToFile(path string, part *snapshot.Partial, root string) (*archive.DigestWriter, error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, command.Usage(err)
	}
	defer f.Abort()
	digest := archive.NewDigestWriter()
	if err := archive.PackPartialTo(io.MultiWriter(f, digest), part, archive.PackOptions{Root: root}); err != nil {
		if command.IsArchiveError(err) || errors.Is(err, snapshot.ErrChanged) {
			return nil, command.Failed(err)
		}
		return nil, command.Usage(err)
	}
	if err := checkArchiveSize(digest.Size()); err != nil {
		return nil, err
	}
	if err := f.Commit(); err != nil {
		return nil, command.Usage(err)
	}
	return digest, nil
}

// checkArchiveSize refuses an archive installers would refuse: they unpack
// with the default limits, and the directory reader already held the
// others, so only the compressed size is left.
func checkArchiveSize(n int64) error {
	if n > archive.DefaultMaxArchiveBytes {
		return command.Failed(&archive.LimitError{Limit: "MaxArchiveBytes", Value: archive.DefaultMaxArchiveBytes})
	}
	return nil
}

// pathInside reports whether p, once links are resolved, lies inside the
// directory dir, and returns its package path there. p need not exist.
func pathInside(dir, p string) (string, bool) {
	root, err := realPath(dir)
	if err != nil {
		return "", false
	}
	real, err := realPath(p)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// realPath is p absolute and free of links; a p that does not exist yet is
// resolved through its parent.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, filepath.Base(abs)), nil
}

// defaultOutput is where pack writes name without -o: the current
// directory, unless that is inside the plugin directory dir, where the
// archive would be packed by the next run; then beside dir. It is returned
// relative to the current directory, as the user would type it.
func defaultOutput(dir, name string) (string, error) {
	if _, inside := pathInside(dir, name); !inside {
		return name, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(filepath.Dir(abs), name)
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, out); err == nil {
			return rel, nil
		}
	}
	return out, nil
}

// defaultArchiveName is NAME-VERSION.tar.gz, or NAME.tar.gz without a
// version, with any byte that is not safe in a file name replaced by '_'.
func defaultArchiveName(name, version string) string {
	safe := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._+-", r):
				return r
			}
			return '_'
		}, s)
	}
	base := safe(name)
	if version != "" {
		base += "-" + safe(version)
	}
	return base + ".tar.gz"
}
