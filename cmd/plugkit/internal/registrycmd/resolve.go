package registrycmd

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/distribution"
)

// resolveOptions are the flags of plugkit resolve.
type resolveOptions struct {
	registry remote.RegistryFlags
	q        distribution.ResolveQuery
}

// NewCmdResolve builds plugkit resolve, which runs with fac.
func NewCmdResolve(fac *factory.Factory) *cobra.Command {
	opts := &resolveOptions{}
	cmd := &cobra.Command{
		Use:   "resolve PLUGIN",
		Short: "Resolve a plugin's channel or release to its artifact digest",
		Long: `Resolve asks the registry which release a channel (default "stable") of
PLUGIN points at, or looks up one release by --release, and prints its ID,
version and artifact digest. A yanked release is not found by channel, only
by --release. The answer is checked: it must be a release of PLUGIN (and the
one --release names).

Exit status: 0 resolved, 1 refused or not found, 2 usage error.`,
		Example: `  plugkit resolve release-notes --registry http://127.0.0.1:8080
  plugkit resolve release-notes --channel beta --registry http://127.0.0.1:8080 --json
  plugkit resolve release-notes --release release-notes@1.2.0 --registry http://127.0.0.1:8080`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.q.PluginID = args[0]
			if err := remote.CheckResolveQuery(&opts.q); err != nil {
				return command.Usage(err)
			}
			c, err := opts.registry.Client()
			if err != nil {
				return err
			}
			rel, err := c.Resolve(cmd.Context(), opts.q)
			if err == nil {
				err = distribution.CheckRelease(opts.q, rel)
			}
			if err != nil {
				return opts.registry.Refused(cmd, c, remote.ResolveRequest(opts.q), err)
			}
			return command.Output(cmd, opts.registry.JSON, rel, func(w io.Writer) { printRelease(w, rel) })
		},
	}
	opts.registry.Register(cmd)
	cmd.Flags().StringVar(&opts.q.Channel, "channel", "", "channel to resolve (default stable)")
	cmd.Flags().StringVar(&opts.q.ReleaseID, "release", "", "release to look up instead of a channel: PLUGIN@VERSION, or just VERSION")
	return cmd
}

func printRelease(w io.Writer, rel *distribution.Release) {
	yanked := ""
	if rel.Yanked {
		yanked = " (yanked)"
	}
	command.Printf(w, "release: %s%s\nversion: %s\ndigest:  %s\nsize:    %d\n",
		rel.ID, yanked, rel.Version, rel.ArtifactDigest, rel.Size)
}
