package main

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
		for _, d := range res.Diagnostics {
			fmt.Fprintln(cmd.ErrOrStderr(), d.String())
		}
		return exit(err)
	}

	pkg, b, err := packDir(dir, root)
	if err != nil {
		if ds, rejected := agentplugin.Diagnostics(err); rejected {
			res.Diagnostics = ds
		}
		return report(func(e error) error { return e }, err) // packDir chose the exit code

	}
	res.Name, res.Version, res.Files = pkg.Name, pkg.Version, len(pkg.Snapshot.Files)
	res.Diagnostics = append(res.Diagnostics, pkg.Diagnostics...)
	if out == "" {
		out = defaultArchiveName(pkg.Name, pkg.Version)
	}
	if err := writeArchiveAtomic(out, b, 0o644); err != nil {
		return report(usage, err)
	}
	res.Digest, res.Size, res.Path = archive.Digest(b), len(b), out

	err = output(cmd, asJSON, res, func(w io.Writer) {
		fmt.Fprintf(w, "digest: %s\nsize:   %d\npath:   %s\n", res.Digest, res.Size, res.Path)
	})
	if err != nil {
		return err
	}
	for _, d := range res.Diagnostics {
		fmt.Fprintln(cmd.ErrOrStderr(), d.String())
	}
	return nil
}

// packDir reads dir strictly (what is packed is exactly what is on disk),
// loads it, refusing a rejected plugin, and packs it: the archive pack
// writes and publish sends. Errors come as failed or usage; a rejection
// carries its diagnostics (agentplugin.Diagnostics).
func packDir(dir, root string) (*agentplugin.Package, []byte, error) {
	snap, err := snapshot.ReadDir(dir, snapshot.Options{Strict: true})
	if errors.Is(err, snapshot.ErrNotRegular) || errors.Is(err, snapshot.ErrLimit) {
		return nil, nil, failed(err)
	} else if err != nil {
		return nil, nil, usage(err)
	}
	pkg, err := agentplugin.Load(snap, agentplugin.Options{})
	if err != nil {
		return nil, nil, failed(err)
	}
	b, err := archive.Pack(snap, archive.PackOptions{Root: root})
	if err != nil {
		return nil, nil, failed(err)
	}
	// Installers unpack with the default limits; the directory reader
	// already held the others, so only the compressed size is left.
	if len(b) > archive.DefaultMaxArchiveBytes {
		return nil, nil, failed(&archive.LimitError{Limit: "MaxArchiveBytes", Value: archive.DefaultMaxArchiveBytes})
	}
	return pkg, b, nil
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

// writeArchiveAtomic writes b to path through a temporary sibling that is
// synced and renamed into place: path is either untouched or complete.
func writeArchiveAtomic(path string, b []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(b); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
