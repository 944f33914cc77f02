package registrycmd

import (
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/distribution"
)

// installationsOptions are the flags of plugkit installations.
type installationsOptions struct {
	registry remote.RegistryFlags
}

// NewCmdInstallations builds plugkit installations, which runs with fac.
func NewCmdInstallations(fac *factory.Factory) *cobra.Command {
	opts := &installationsOptions{}
	cmd := &cobra.Command{
		Use:   "installations [PLUGIN]",
		Short: "List the installation reports a registry holds",
		Long: `Installations lists the installation reports that clients sent to a
registry, of one PLUGIN or of every plugin: the plugin, its release, the
status, the reporting host and the identity of the token that reported it.
The registry serves them in pages; installations follows them all.

Reports and their listing need a token unless the registry was started with
--anonymous-reports; it comes from $PLUGKIT_TOKEN or --token-file.

Exit status: 0 listed, 1 refused or unreachable, 2 usage error.`,
		Example: `  plugkit installations --registry http://127.0.0.1:8080
  plugkit installations release-notes --registry https://plugins.example.com --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			plugin := ""
			if len(args) == 1 {
				plugin = args[0]
				if err := distribution.CheckPluginID(plugin); err != nil {
					return command.Usage(err)
				}
			}
			c, err := opts.registry.Client()
			if err != nil {
				return err
			}
			list, err := c.Installations(cmd.Context(), plugin)
			if err != nil {
				return opts.registry.Refused(cmd, c, remote.Request{Action: "list installations", Role: "reader", PluginID: plugin}, err)
			}
			return command.Output(cmd, opts.registry.JSON, distribution.Installations{Installations: list}, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				command.Printf(tw, "PLUGIN\tRELEASE\tSTATUS\tHOST\tREPORTER\tREPORTED\tID\n")
				for _, in := range list {
					command.Printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", in.PluginID, in.ReleaseID, in.Status,
						orDash(in.Host), orDash(in.Reporter), in.ReportedAt.Format("2006-01-02 15:04:05Z"), in.ID)
				}
				tw.Flush()
			})
		},
	}
	opts.registry.Register(cmd)
	return cmd
}

// orDash shows an empty field as "-", so that columns stay aligned.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
