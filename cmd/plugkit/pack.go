package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/internal/atomicfile"
	"github.com/plugkit/plugkit/snapshot"
)

func init() { verbs = append(verbs, newPackCmd) }

// packResult is what pack reports, as text or as its one JSON document.
type packResult struct {
	Digest      string                   `json:"digest,omitempty"`
	Size        int                      `json:"size,omitempty"`
	Path        string                   `json:"path,omitempty"`
	Name        string                   `json:"name,omitempty"`
	Version     string                   `json:"version,omitempty"`
	Root        string                   `json:"root,omitempty"`
	Files       int                      `json:"files,omitempty"`
	Error       string                   `json:"error,omitempty"`
	Diagnostics []agentplugin.Diagnostic `json:"diagnostics"`
}

func newPackCmd() *cobra.Command {
	var out, root string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pack DIR",
		Short: "Validate a plugin directory and write its deterministic archive",
		Long: `Pack reads the plugin directory DIR strictly (any symbolic link, hard-to-name
file or special file is an error: what is packed is exactly what is on disk),
validates it, and refuses a plugin the specification rejects. It then writes a
deterministic gzip-compressed USTAR archive atomically (a temporary sibling
renamed into place) and prints its digest and size.

The default output is NAME-VERSION.tar.gz (NAME.tar.gz without a version) in
the current directory, from the manifest; characters other than letters,
digits, '.', '_', '+' and '-' become '_'. --root puts every entry under a
folder, as the OCI profile requires (--root NAME with the plugin's name).

Exit status: 0 written, 1 the plugin is rejected or cannot be packed, 2 usage
or I/O error.`,
		Example: `  plugkit pack ./my-plugin
  plugkit pack ./my-plugin -o dist/my-plugin.tar.gz --json
  plugkit pack ./my-plugin --root my-plugin -o layer.tar.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPack(cmd, args[0], out, root, asJSON)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "archive to write (default NAME-VERSION.tar.gz)")
	cmd.Flags().StringVar(&root, "root", "", "put every entry under this folder")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func runPack(cmd *cobra.Command, dir, out, root string, asJSON bool) error {
	res := packResult{Root: root, Diagnostics: []agentplugin.Diagnostic{}}
	report := func(exit func(error) error, err error) error {
		if asJSON {
			res.Error = err.Error()
			if e := writeJSON(cmd.OutOrStdout(), res); e != nil {
				return usage(e)
			}
		}
		printDiagnostics(cmd.ErrOrStderr(), res.Diagnostics)
		return exit(err)
	}

	pkg, err := loadPackDir(dir)
	if err != nil {
		if ds, rejected := agentplugin.Diagnostics(err); rejected {
			res.Diagnostics = ds
		}
		return report(func(e error) error { return e }, err) // loadPackDir chose the exit code
	}
	res.Name, res.Version, res.Files = pkg.Name, pkg.Version, len(pkg.Snapshot.Files)
	res.Diagnostics = append(res.Diagnostics, pkg.Diagnostics...)
	if out == "" {
		out = defaultArchiveName(pkg.Name, pkg.Version)
	}
	digest, err := packToFile(out, pkg, root)
	if err != nil {
		return report(func(e error) error { return e }, err) // packToFile chose the exit code
	}
	res.Digest, res.Size, res.Path = digest.Digest(), int(digest.Size()), out

	err = output(cmd, asJSON, res, func(w io.Writer) {
		fmt.Fprintf(w, "digest: %s\nsize:   %d\npath:   %s\n", res.Digest, res.Size, res.Path)
	})
	if err != nil {
		return err
	}
	printDiagnostics(cmd.ErrOrStderr(), res.Diagnostics)
	return nil
}

// loadPackDir reads dir strictly (what is packed is exactly what is on
// disk) and loads it, refusing a rejected plugin. Errors come as failed or
// usage; a rejection carries its diagnostics (agentplugin.Diagnostics).
func loadPackDir(dir string) (*agentplugin.Package, error) {
	snap, err := snapshot.ReadDir(dir, snapshot.Options{Strict: true})
	if errors.Is(err, snapshot.ErrNotRegular) || errors.Is(err, snapshot.ErrLimit) {
		return nil, failed(err)
	} else if err != nil {
		return nil, usage(err)
	}
	pkg, err := agentplugin.Load(snap, agentplugin.Options{})
	if err != nil {
		return nil, failed(err)
	}
	return pkg, nil
}

// packDir is loadPackDir and the archive in memory: what publish sends.
func packDir(dir, root string) (*agentplugin.Package, []byte, error) {
	pkg, err := loadPackDir(dir)
	if err != nil {
		return nil, nil, err
	}
	b, err := archive.Pack(pkg.Snapshot, archive.PackOptions{Root: root})
	if err != nil {
		return nil, nil, failed(err)
	}
	if err := checkArchiveSize(int64(len(b))); err != nil {
		return nil, nil, err
	}
	return pkg, b, nil
}

// packToFile streams the archive into path through a temporary sibling
// renamed into place, so that the archive is never held in memory; on any
// error path is untouched.
func packToFile(path string, pkg *agentplugin.Package, root string) (*archive.DigestWriter, error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, usage(err)
	}
	defer f.Abort()
	digest := archive.NewDigestWriter()
	if err := archive.PackTo(io.MultiWriter(f, digest), pkg.Snapshot, archive.PackOptions{Root: root}); err != nil {
		if isArchiveError(err) {
			return nil, failed(err)
		}
		return nil, usage(err)
	}
	if err := checkArchiveSize(digest.Size()); err != nil {
		return nil, err
	}
	if err := f.Commit(); err != nil {
		return nil, usage(err)
	}
	return digest, nil
}

// checkArchiveSize refuses an archive installers would refuse: they unpack
// with the default limits, and the directory reader already held the
// others, so only the compressed size is left.
func checkArchiveSize(n int64) error {
	if n > archive.DefaultMaxArchiveBytes {
		return failed(&archive.LimitError{Limit: "MaxArchiveBytes", Value: archive.DefaultMaxArchiveBytes})
	}
	return nil
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
