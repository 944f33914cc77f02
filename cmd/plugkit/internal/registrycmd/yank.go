package registrycmd

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/distribution"
)

// yankOptions are the flags of plugkit yank.
type yankOptions struct {
	registry remote.RegistryFlags
	undo     bool
}

// NewCmdYank builds plugkit yank, which runs with fac.
func NewCmdYank(fac *factory.Factory) *cobra.Command {
	opts := &yankOptions{}
	cmd := &cobra.Command{
		Use:   "yank RELEASE",
		Short: "Withdraw a release from its channels (or restore it with --undo)",
		Long: `Yank marks RELEASE (PLUGIN@VERSION) yanked on a registry: channels that
point at it resolve to nothing until they are moved, and the catalog leaves
them out. The release stays resolvable by its ID and downloadable by its
digest, so that installations pinned to it keep working. --undo restores it.

It needs a publisher token that owns the plugin, or an admin token, from
$PLUGKIT_TOKEN or --token-file.

Exit status: 0 done, 1 refused or not found, 2 usage error.`,
		Example: `  plugkit yank release-notes@1.2.0 --registry http://127.0.0.1:8080
  plugkit yank release-notes@1.2.0 --undo --registry http://127.0.0.1:8080 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := distribution.CheckReleaseID(id); err != nil {
				return command.Usage(err)
			}
			c, err := opts.registry.Client()
			if err != nil {
				return err
			}
			rel, err := c.Yank(cmd.Context(), id, !opts.undo)
			if err != nil {
				return opts.registry.Refused(cmd, c, remote.Request{Action: "yank", Role: "publisher",
					PluginID: pluginOfRelease(id), ReleaseID: id}, err)
			}
			return command.Output(cmd, opts.registry.JSON, rel, func(w io.Writer) {
				if rel.Yanked {
					command.Printf(w, "yanked %s\n", rel.ID)
				} else {
					command.Printf(w, "restored %s\n", rel.ID)
				}
			})
		},
	}
	opts.registry.Register(cmd)
	cmd.Flags().BoolVar(&opts.undo, "undo", false, "restore a yanked release")
	return cmd
}

// pluginOfRelease is the plugin part of a release ID.
func pluginOfRelease(id string) string {
	plugin, _, _ := strings.Cut(id, "@")
	return plugin
}
