package build

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
)

// digestOptions are the flags of plugkit digest.
type digestOptions struct {
	asJSON bool
}

// NewCmdDigest builds plugkit digest, which runs with fac.
func NewCmdDigest(fac *factory.Factory) *cobra.Command {
	opts := &digestOptions{}
	cmd := &cobra.Command{
		Use:   "digest FILE",
		Short: "Print the sha256 digest that identifies an archive",
		Long: `Digest prints "sha256:" and the 64 lowercase hex digits of the SHA-256 of
FILE's bytes: the identity of a plugin archive in registries and lock files.
It reads FILE as bytes and does not check that it is an archive.

Exit status: 0 printed, 2 usage or I/O error.`,
		Example: `  plugkit digest demo-1.0.0.tar.gz
  plugkit digest demo-1.0.0.tar.gz --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, n, err := fileDigest(args[0])
			if err != nil {
				return command.Usage(err)
			}
			res := struct {
				Digest string `json:"digest"`
				Size   int64  `json:"size"`
				Path   string `json:"path"`
			}{d, n, args[0]}
			return command.Output(cmd, opts.asJSON, res, func(w io.Writer) { fmt.Fprintln(w, d) })
		},
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}
