package registrycmd

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/distribution"
)

// NewCmdChannel builds plugkit channel, which runs with fac.
func NewCmdChannel(fac *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "channel",
		Short: "Manage a plugin's release channels on a registry",
		Long: `Channel manages the channels of a plugin on a registry: named pointers
("stable", "beta") that installs and updates follow.`,
	}
	cmd.AddCommand(newChannelSetCmd())
	return cmd
}

// channelSetOptions are the flags of plugkit channel set.
type channelSetOptions struct {
	registry remote.RegistryFlags
}

func newChannelSetCmd() *cobra.Command {
	opts := &channelSetOptions{}
	cmd := &cobra.Command{
		Use:   "set PLUGIN CHANNEL RELEASE",
		Short: "Point a channel of a plugin at one of its releases",
		Long: `Set points CHANNEL of PLUGIN at RELEASE (PLUGIN@VERSION, or just VERSION),
creating the channel if needed. The release must be one of the plugin's and
not yanked. It needs a publisher token that owns the plugin, or an admin
token, from $PLUGKIT_TOKEN or --token-file.

Exit status: 0 set, 1 refused or not found, 2 usage error.`,
		Example: `  plugkit channel set release-notes stable 1.2.0 --registry http://127.0.0.1:8080
  plugkit channel set release-notes beta release-notes@1.3.0-rc.1 --registry https://plugins.example.com --json`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			u := distribution.ChannelUpdate{PluginID: args[0], Channel: args[1], ReleaseID: remote.QualifyRelease(args[0], args[2])}
			for _, err := range []error{
				distribution.CheckPluginID(u.PluginID),
				distribution.CheckChannel(u.Channel),
				distribution.CheckReleaseID(u.ReleaseID),
			} {
				if err != nil {
					return command.Usage(err)
				}
			}
			c, err := opts.registry.Client()
			if err != nil {
				return err
			}
			rel, err := c.SetChannel(cmd.Context(), u)
			if err != nil {
				return opts.registry.Refused(cmd, c, remote.Request{Action: "move a channel", Role: "publisher",
					PluginID: u.PluginID, ReleaseID: u.ReleaseID}, err)
			}
			return command.Output(cmd, opts.registry.JSON, rel, func(w io.Writer) {
				command.Printf(w, "%s: %s now points at %s\n", u.PluginID, u.Channel, rel.ID)
			})
		},
	}
	opts.registry.Register(cmd)
	return cmd
}
