package ocicmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/internal/terminal"
	"github.com/plugkit/plugkit/oci"
)

// logoutOptions are the flags of plugkit logout.
type logoutOptions struct {
	asJSON bool
}

// NewCmdLogout builds plugkit logout, which runs with fac.
func NewCmdLogout(fac *factory.Factory) *cobra.Command {
	opts := &logoutOptions{}
	cmd := &cobra.Command{
		Use:   "logout REGISTRY",
		Short: "Remove the stored credentials of an OCI registry",
		Long: `Logout removes the credentials of REGISTRY from the Docker config or its
credential helper (what plugkit login, docker login and oras login store).
Logging out of a registry without stored credentials succeeds.

Exit status: 0 removed, 2 usage or I/O error.`,
		Example: `  plugkit logout ghcr.io`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := oci.DockerCredentials()
			if err != nil {
				return command.Usage(err)
			}
			if err := oci.Logout(cmd.Context(), store, args[0]); err != nil {
				return command.Usage(err)
			}
			return command.Output(cmd, opts.asJSON, map[string]string{"registry": args[0]}, func(w io.Writer) {
				fmt.Fprintf(w, "logged out of %s\n", terminal.Safe(args[0]))
			})
		},
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}
