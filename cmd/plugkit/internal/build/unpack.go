package build

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/source"
)

// unpackOptions are the flags of plugkit unpack.
type unpackOptions struct {
	root   string
	asJSON bool
}

// NewCmdUnpack builds plugkit unpack, which runs with fac.
func NewCmdUnpack(fac *factory.Factory) *cobra.Command {
	opts := &unpackOptions{}
	cmd := &cobra.Command{
		Use:   "unpack FILE DIR",
		Short: "Check an archive and extract it into a new directory",
		Long: `Unpack reads the archive FILE as a stream, refusing anything but regular files
and directories and any malformed or ambiguous header (see package archive),
within the default limits. It writes the files into a temporary sibling of
DIR as they are checked and, once the whole archive is accepted, flushes
them to disk and renames the sibling to DIR; on a refusal the sibling is
removed. DIR is either left as it was or complete and durable. Files are
written 0755 when the archive gives them an execute bit and 0644 otherwise,
whatever the archive says and whatever the umask, so no file is group- or
world-writable. DIR must not exist or be an empty directory; its parent
must exist. --root requires every entry under that folder and strips it.

Exit status: 0 extracted, 1 the archive is refused, 2 usage or I/O error
(DIR not empty included).`,
		Example: `  plugkit unpack demo-1.0.0.tar.gz ./demo
  plugkit unpack layer.tar.gz ./demo --root demo --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUnpack(cmd, args[0], args[1], opts.root, opts.asJSON)
		},
	}
	cmd.Flags().StringVar(&opts.root, "root", "", "folder every entry must be under; it is stripped")
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}

func runUnpack(cmd *cobra.Command, file, dir, root string, asJSON bool) error {
	if err := snapshot.CheckNewDir(dir); err != nil {
		return command.Usage(err)
	}
	f, err := os.Open(file)
	if err != nil {
		return command.Usage(err)
	}
	defer f.Close()
	// The archive is read as a stream and hashed as it goes, and the
	// files go to the writer only: memory holds what is not written yet,
	// not the archive and its payload (on a machine where each new page
	// of memory costs a fault, those were a third of the CPU time).
	digest := archive.NewDigestWriter()
	out := NewOutDir(dir)
	defer out.Abort()
	snap, err := archive.UnpackFrom(io.TeeReader(f, digest), archive.UnpackOptions{Root: root, OnFile: out.Write, NoData: true})
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &pathErr): // reading the file failed
		return command.Usage(err)
	case err != nil:
		return command.Failed(source.ArchiveFileError(file, err))
	}
	if err := out.Commit(); err != nil {
		return command.Usage(err)
	}
	res := struct {
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
		Path   string `json:"path"`
		Files  int    `json:"files"`
		Bytes  int64  `json:"bytes"`
	}{digest.Digest(), digest.Size(), dir, len(snap.Files), out.bytes}
	return command.Output(cmd, asJSON, res, func(w io.Writer) {
		command.Printf(w, "digest: %s\nfiles:  %d (%d bytes)\npath:   %s\n", res.Digest, res.Files, res.Bytes, res.Path)
	})
}
