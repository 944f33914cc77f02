package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

func init() { verbs = append(verbs, newUnpackCmd) }

func newUnpackCmd() *cobra.Command {
	var root string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "unpack FILE DIR",
		Short: "Check an archive and extract it into a new directory",
		Long: `Unpack reads the archive FILE in memory, refusing anything but regular files
and directories and any malformed or ambiguous header (see package archive),
within the default limits. It then writes the files, with their permission
bits, into a temporary sibling of DIR and renames it to DIR: DIR is either
left as it was or complete. DIR must not exist or be an empty directory; its
parent must exist. --root requires every entry under that folder and strips it.

Exit status: 0 extracted, 1 the archive is refused, 2 usage or I/O error
(DIR not empty included).`,
		Example: `  plugkit unpack demo-1.0.0.tar.gz ./demo
  plugkit unpack layer.tar.gz ./demo --root demo --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUnpack(cmd, args[0], args[1], root, asJSON)
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "folder every entry must be under; it is stripped")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func runUnpack(cmd *cobra.Command, file, dir, root string, asJSON bool) error {
	if err := checkFreshDir(dir); err != nil {
		return usage(err)
	}
	b, err := readArchiveBytes(file)
	if err != nil {
		return usage(err)
	}
	snap, err := archive.Unpack(b, archive.UnpackOptions{Root: root})
	if err != nil {
		return failed(err)
	}
	if err := writeTreeAtomic(dir, snap); err != nil {
		return usage(err)
	}
	res := struct {
		Digest string `json:"digest"`
		Size   int    `json:"size"`
		Path   string `json:"path"`
		Files  int    `json:"files"`
		Bytes  int64  `json:"bytes"`
	}{archive.Digest(b), len(b), dir, len(snap.Files), snap.Size()}
	w := cmd.OutOrStdout()
	if asJSON {
		if err := json.NewEncoder(w).Encode(res); err != nil {
			return usage(err)
		}
		return nil
	}
	fmt.Fprintf(w, "digest: %s\nfiles:  %d (%d bytes)\npath:   %s\n", res.Digest, res.Files, res.Bytes, res.Path)
	return nil
}

// readArchiveBytes reads at most one byte more than the default archive
// limit, so that a huge file is refused by Unpack without being read whole.
func readArchiveBytes(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, archive.DefaultMaxArchiveBytes+1))
}

// checkFreshDir accepts a path that does not exist or is an empty
// directory.
func checkFreshDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s: directory is not empty", dir)
	}
	return nil
}

// writeTreeAtomic writes the snapshot into a temporary sibling of dir and
// renames it to dir; on any failure the sibling is removed and dir is left
// as it was. Files are created through an os.Root, so no path can land
// outside the new tree.
func writeTreeAtomic(dir string, s *snapshot.Snapshot) (err error) {
	dir = filepath.Clean(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".unpack-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	r, err := os.OpenRoot(tmp)
	if err != nil {
		return err
	}
	defer r.Close()
	// Files are written through a root for their own directory, so each
	// costs one openat; the paths are sorted, so the directory changes
	// at most twice per directory.
	cur, curDir := r, "."
	defer func() {
		if cur != r {
			cur.Close()
		}
	}()
	for _, p := range s.Paths() {
		if d := path.Dir(p); d != curDir {
			if cur != r {
				cur.Close()
			}
			cur, curDir = r, "."
			if err := r.MkdirAll(d, 0o755); err != nil {
				return err
			}
			if cur, err = r.OpenRoot(d); err != nil {
				cur = r
				return err
			}
			curDir = d
		}
		if err := writeRootFile(cur, path.Base(p), s.Files[p], s.Mode(p)); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// os.Rename never replaces a directory, even an empty one: remove the
	// empty DIR first (Remove fails should it have been filled meanwhile).
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(tmp, dir)
}

// writeRootFile creates the new file p under r with exactly mode, whatever
// the umask.
func writeRootFile(r *os.Root, p string, data []byte, mode os.FileMode) error {
	f, err := r.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
