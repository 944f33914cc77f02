package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/distribution"
)

func init() { verbs = append(verbs, newPublishCmd) }

func newPublishCmd() *cobra.Command {
	var rf registryFlags
	var channel string
	cmd := &cobra.Command{
		Use:   "publish PATH",
		Short: "Publish a plugin directory or archive to a registry",
		Long: `Publish uploads a plugin to a registry and points a channel (default
"stable") at its release. A directory is read strictly (no links or special
files), validated and packed first; a file is sent as the archive it is.

Publishing the same version with the same bytes again succeeds and changes
nothing but the channel; with other bytes the registry refuses it (409).
The token comes from $PLUGKIT_TOKEN or --token-file.

Exit status: 0 published, 1 refused (invalid plugin, 401, 403, 409, 422),
2 usage or I/O error.`,
		Example: `  PLUGKIT_TOKEN=s3cret plugkit publish ./release-notes --registry http://127.0.0.1:8080
  plugkit publish demo-1.0.0.tar.gz --registry https://plugins.example.com --channel beta --token-file ~/.plugkit-token`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := rf.client()
			if err != nil {
				return err
			}
			if channel != "" {
				if err := distribution.CheckChannel(channel); err != nil {
					return usage(err)
				}
			}
			body, err := publishBytes(cmd, args[0])
			if err != nil {
				return err
			}
			res, err := c.Publish(cmd.Context(), body, channel)
			if err != nil {
				return refused(cmd, err)
			}
			if rf.asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			note := ""
			if !res.Created {
				note = " (already published)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "published %s%s\ndigest:  %s\nsize:    %d\nchannel: %s\n",
				res.Release.ID, note, res.Release.ArtifactDigest, res.Release.Size, res.Channel)
			return nil
		},
	}
	rf.register(cmd)
	cmd.Flags().StringVar(&channel, "channel", "", "channel to point at the release (default stable)")
	return cmd
}

// publishBytes returns the archive to publish: a directory is packed as
// plugkit pack does (a rejected plugin stops here, with its diagnostics,
// before anything is sent); a file is read as is.
func publishBytes(cmd *cobra.Command, path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, usage(err)
	}
	if !fi.IsDir() {
		b, err := readArchiveFile(path)
		if err != nil {
			return nil, usage(err)
		}
		return b, nil
	}
	_, b, err := packDir(path, "")
	if ds, rejected := agentplugin.Diagnostics(err); rejected {
		for _, d := range ds {
			fmt.Fprintln(cmd.ErrOrStderr(), d.String())
		}
	}
	return b, err
}
