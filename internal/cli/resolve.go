package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/distribution"
)

func newResolveCmd() *cobra.Command {
	var rf RegistryFlags
	var q distribution.ResolveQuery
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
			q.PluginID = args[0]
			if err := checkResolveQuery(&q); err != nil {
				return Usage(err)
			}
			c, err := rf.client()
			if err != nil {
				return err
			}
			rel, err := c.Resolve(cmd.Context(), q)
			if err == nil {
				err = distribution.CheckRelease(q, rel)
			}
			if err != nil {
				return rf.refused(cmd, c, resolveRequest(q), err)
			}
			return Output(cmd, rf.asJSON, rel, func(w io.Writer) { printRelease(w, rel) })
		},
	}
	rf.Register(cmd)
	cmd.Flags().StringVar(&q.Channel, "channel", "", "channel to resolve (default stable)")
	cmd.Flags().StringVar(&q.ReleaseID, "release", "", "release to look up instead of a channel: PLUGIN@VERSION, or just VERSION")
	return cmd
}

// checkResolveQuery refuses a malformed query before it is sent. A
// --release given as a bare version is completed to PLUGIN@VERSION.
func checkResolveQuery(q *distribution.ResolveQuery) error {
	if err := distribution.CheckPluginID(q.PluginID); err != nil {
		return err
	}
	if q.Channel != "" && q.ReleaseID != "" {
		return Usagef("--channel and --release exclude each other")
	}
	if q.Channel != "" {
		return distribution.CheckChannel(q.Channel)
	}
	if q.ReleaseID != "" {
		q.ReleaseID = qualifyRelease(q.PluginID, q.ReleaseID)
		return distribution.CheckReleaseID(q.ReleaseID)
	}
	return nil
}

// qualifyRelease makes a release ID of a bare version of plugin.
func qualifyRelease(plugin, release string) string {
	if release == "" || distribution.CheckReleaseID(release) == nil {
		return release
	}
	return plugin + "@" + release
}

// resolveRequest is what a resolve asked, for the messages of refused.
func resolveRequest(q distribution.ResolveQuery) Request {
	ch := q.Channel
	if ch == "" && q.ReleaseID == "" {
		ch = distribution.DefaultChannel
	}
	return Request{Action: "read", Role: "reader", PluginID: q.PluginID, Channel: ch, ReleaseID: q.ReleaseID}
}

func printRelease(w io.Writer, rel *distribution.Release) {
	yanked := ""
	if rel.Yanked {
		yanked = " (yanked)"
	}
	Printf(w, "release: %s%s\nversion: %s\ndigest:  %s\nsize:    %d\n",
		rel.ID, yanked, rel.Version, rel.ArtifactDigest, rel.Size)
}
