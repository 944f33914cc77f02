package ocicmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/progress"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/snapshot"
)

// fetchOptions are the flags of plugkit fetch.
type fetchOptions struct {
	registry remote.RegistryFlags
	q        distribution.ResolveQuery
}

// NewCmdFetch builds plugkit fetch, which runs with fac.
func NewCmdFetch(fac *factory.Factory) *cobra.Command {
	opts := &fetchOptions{}
	cmd := &cobra.Command{
		Use:   "fetch PLUGIN|DIGEST DIR",
		Short: "Download, verify and unpack a plugin into a new directory",
		Long: `Fetch resolves PLUGIN (its --channel, default "stable", or --release) or
takes an exact artifact DIGEST, downloads the archive, checks that its bytes
hash to that digest before anything else reads them, unpacks and validates
it in memory, and writes it into a temporary sibling of DIR renamed into
place. DIR must not exist or be an empty directory.

For PLUGIN, fetch also checks that the registry answered what was asked: a
release of PLUGIN (the one --release names), whose archive's manifest has
that name and version.

Exit status: 0 fetched, 1 refused, not found, digest or release mismatch, or
rejected plugin, 2 usage or I/O error (DIR not empty included).`,
		Example: `  plugkit fetch release-notes ./release-notes --registry http://127.0.0.1:8080
  plugkit fetch release-notes ./pinned --release 1.2.0 --registry http://127.0.0.1:8080
  plugkit fetch sha256:3f1c...e9 ./pinned --registry https://plugins.example.com --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFetch(fac, cmd, &opts.registry, opts.q, args[0], args[1])
		},
	}
	opts.registry.Register(cmd)
	cmd.Flags().StringVar(&opts.q.Channel, "channel", "", "channel to resolve (default stable)")
	cmd.Flags().StringVar(&opts.q.ReleaseID, "release", "", "release to fetch instead of a channel: PLUGIN@VERSION, or just VERSION")
	return cmd
}

// fetchResult is what fetch prints.
type fetchResult struct {
	Release *distribution.Release `json:"release,omitempty"`
	Digest  string                `json:"digest"`
	Name    string                `json:"name"`
	Version string                `json:"version"`
	Path    string                `json:"path"`
	Files   int                   `json:"files"`
}

func runFetch(fac *factory.Factory, cmd *cobra.Command, rf *remote.RegistryFlags, q distribution.ResolveQuery, target, dir string) error {
	c, err := rf.Client()
	if err != nil {
		return err
	}
	c.HTTPClient = progress.Client(fac, cmd, "fetch "+target, progress.TransferTimeout)
	if err := snapshot.CheckNewDir(dir); err != nil {
		return command.Usage(err)
	}
	var res fetchResult
	var art *distribution.Artifact
	if digest, perr := archive.ParseDigest(target); perr == nil {
		if q.Channel != "" || q.ReleaseID != "" {
			return command.Usagef("--channel and --release name a plugin's release, not a digest")
		}
		if art, err = c.Download(cmd.Context(), digest); err != nil {
			return rf.Refused(cmd, c, remote.Request{Action: "read", Role: "reader", Digest: digest}, err)
		}
	} else {
		q.PluginID = target
		if err := remote.CheckResolveQuery(&q); err != nil {
			return command.Usage(fmt.Errorf("%q is neither a digest nor a plugin: %w", target, err))
		}
		if res.Release, art, err = c.Fetch(cmd.Context(), q); err != nil {
			return rf.Refused(cmd, c, remote.ResolveRequest(q), err)
		}
	}
	if err := snapshot.WriteDir(dir, art.Snapshot); err != nil {
		return command.Usage(err)
	}
	res.Digest, res.Name, res.Version = art.Digest, art.Package.Name, art.Package.Version
	res.Path, res.Files = dir, len(art.Snapshot.Files)
	return command.Output(cmd, rf.JSON, res, func(w io.Writer) {
		command.Printf(w, "fetched %s %s\ndigest: %s\nfiles:  %d\npath:   %s\n", res.Name, res.Version, res.Digest, res.Files, res.Path)
	})
}
