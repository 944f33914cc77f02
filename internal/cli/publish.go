package cli

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/source"
)

// publishResult is publish's --json document: the registry's answer and
// the diagnostics of the plugin that was sent.
type publishResult struct {
	distribution.PublishResult
	Diagnostics []agentplugin.Diagnostic `json:"diagnostics"`
}

func newPublishCmd() *cobra.Command {
	var rf RegistryFlags
	var channel string
	var allowErrors, strictLinks bool
	cmd := &cobra.Command{
		Use:   "publish PATH",
		Short: "Publish a plugin directory or archive to a registry",
		Long: `Publish validates a plugin, prints its diagnostics exactly as validate
does, and uploads it to a registry, pointing a channel (default "stable") at
its release. A directory is read with the link rule of pack and packed; a
file is sent as the archive it is.

A plugin with error diagnostics (an invalid skill, a server that will not
start) is refused before anything is sent, unless --allow-errors. A plugin
the specification rejects is never sent.

Publishing the same version with the same bytes again succeeds and changes
nothing but the channel; with other bytes the registry refuses it. The
first token to publish a plugin owns it: other publishers' tokens are
refused (see plugkit owners). The token comes from $PLUGKIT_TOKEN or
--token-file.

Exit status: 0 published, 1 refused (invalid plugin, no or wrong token,
another publisher's plugin, version conflict), 2 usage or I/O error.`,
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
					return Usage(err)
				}
			}
			body, report, err := publishBytes(cmd, args[0], strictLinks)
			if err != nil {
				return err
			}
			c.HTTPClient = progressClient(cmd, "publish "+report.Plugin.Name, transferTimeout)
			if !rf.asJSON {
				printValidateReport(cmd.OutOrStdout(), report, false)
			}
			if report.code != ExitOK && !allowErrors {
				return errorDiagnosticsRefused(args[0], "published", "publishes", report.Diagnostics)
			}
			res, err := c.Publish(cmd.Context(), body, channel)
			if err != nil {
				req := Request{Action: "publish", Role: "publisher", PluginID: report.Plugin.Name,
					ReleaseID: distribution.ReleaseID(report.Plugin.Name, report.Plugin.Version, archive.Digest(body))}
				err = rf.refused(cmd, c, req, err)
				if len(errorDiagnostics(err)) == 0 {
					err = WithDiagnostics(err, report.Diagnostics) // for the --json failure document
				}
				return err
			}
			doc := publishResult{PublishResult: *res, Diagnostics: report.Diagnostics}
			return Output(cmd, rf.asJSON, doc, func(w io.Writer) {
				note := ""
				if !res.Created {
					note = " (already published)"
				}
				Printf(w, "published %s%s\ndigest:  %s\nsize:    %d\nchannel: %s\n",
					res.Release.ID, note, res.Release.ArtifactDigest, res.Release.Size, res.Channel)
			})
		},
	}
	rf.Register(cmd)
	cmd.Flags().StringVar(&channel, "channel", "", "channel to point at the release (default stable)")
	cmd.Flags().BoolVar(&allowErrors, "allow-errors", false, "publish a plugin that has error diagnostics")
	registerStrictLinks(cmd, &strictLinks)
	return cmd
}

// publishBytes returns the archive to publish and the validate report of
// the plugin in it: a directory is packed as plugkit pack does; a file is
// read as is and loaded. A rejected plugin stops here, with its
// diagnostics, before anything is sent.
func publishBytes(cmd *cobra.Command, path string, strictLinks bool) ([]byte, *validateReport, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, Usage(err)
	}
	report := newValidateReport(path)
	if fi.IsDir() {
		pkg, b, err := packDir(path, packOptions{StrictLinks: strictLinks})
		if err != nil {
			return nil, nil, Explain(cmd, err)
		}
		report.dir = path
		report.fill(pkg)
		return b, report, nil
	}
	p, err := OpenSource(cmd.Context(), path, source.ParseOptions{}, source.Options{})
	if err != nil {
		return nil, nil, Explain(cmd, err)
	}
	if p.Root != "" {
		return nil, nil, Failed(&summaryError{msg: path + ": every entry lies under " + p.Root +
			"/ (an OCI layer): registries take archives as plugkit pack writes them"})
	}
	report.fill(p.Package)
	return p.Archive, report, nil
}
