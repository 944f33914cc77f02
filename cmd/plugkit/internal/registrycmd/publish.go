package registrycmd

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/build"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/input"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/progress"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/source"
)

// publishResult is publish's --json document: the registry's answer and
// the diagnostics of the plugin that was sent.
type publishResult struct {
	distribution.PublishResult
	Diagnostics []agentplugin.Diagnostic `json:"diagnostics"`
}

// publishOptions are the flags of plugkit publish.
type publishOptions struct {
	registry    remote.RegistryFlags
	channel     string
	allowErrors bool
	strictLinks bool
}

// NewCmdPublish builds plugkit publish, which runs with fac.
func NewCmdPublish(fac *factory.Factory) *cobra.Command {
	opts := &publishOptions{}
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
			c, err := opts.registry.Client()
			if err != nil {
				return err
			}
			if opts.channel != "" {
				if err := distribution.CheckChannel(opts.channel); err != nil {
					return command.Usage(err)
				}
			}
			body, report, err := publishBytes(cmd, args[0], opts.strictLinks)
			if err != nil {
				return err
			}
			c.HTTPClient = progress.Client(fac, cmd, "publish "+report.Plugin.Name, progress.TransferTimeout)
			if !opts.registry.JSON {
				build.PrintValidateReport(cmd.OutOrStdout(), report, false)
			}
			if report.ExitCode() != command.ExitOK && !opts.allowErrors {
				return command.ErrorDiagnosticsRefused(args[0], "published", "publishes", report.Diagnostics)
			}
			res, err := c.Publish(cmd.Context(), body, opts.channel)
			if err != nil {
				req := remote.Request{Action: "publish", Role: "publisher", PluginID: report.Plugin.Name,
					ReleaseID: distribution.ReleaseID(report.Plugin.Name, report.Plugin.Version, archive.Digest(body))}
				err = opts.registry.Refused(cmd, c, req, err)
				if len(command.ErrorDiagnostics(err)) == 0 {
					err = command.WithDiagnostics(err, report.Diagnostics) // for the --json failure document
				}
				return err
			}
			doc := publishResult{PublishResult: *res, Diagnostics: report.Diagnostics}
			return command.Output(cmd, opts.registry.JSON, doc, func(w io.Writer) {
				note := ""
				if !res.Created {
					note = " (already published)"
				}
				command.Printf(w, "published %s%s\ndigest:  %s\nsize:    %d\nchannel: %s\n",
					res.Release.ID, note, res.Release.ArtifactDigest, res.Release.Size, res.Channel)
			})
		},
	}
	opts.registry.Register(cmd)
	cmd.Flags().StringVar(&opts.channel, "channel", "", "channel to point at the release (default stable)")
	cmd.Flags().BoolVar(&opts.allowErrors, "allow-errors", false, "publish a plugin that has error diagnostics")
	input.RegisterStrictLinks(cmd, &opts.strictLinks)
	return cmd
}

// publishBytes returns the archive to publish and the validate report of
// the plugin in it: a directory is packed as plugkit pack does; a file is
// read as is and loaded. A rejected plugin stops here, with its
// diagnostics, before anything is sent.
func publishBytes(cmd *cobra.Command, path string, strictLinks bool) ([]byte, *build.ValidateReport, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, command.Usage(err)
	}
	if fi.IsDir() {
		pkg, b, err := build.PackDir(path, build.PackDirOptions{StrictLinks: strictLinks})
		if err != nil {
			return nil, nil, command.Explain(cmd, err)
		}
		return b, build.ReportOf(path, true, pkg), nil
	}
	p, err := input.OpenSource(cmd.Context(), path, source.ParseOptions{}, source.Options{})
	if err != nil {
		return nil, nil, command.Explain(cmd, err)
	}
	if p.Root != "" {
		return nil, nil, command.Failed(&command.SummaryError{Msg: path + ": every entry lies under " + p.Root +
			"/ (an OCI layer): registries take archives as plugkit pack writes them"})
	}
	return p.Archive, build.ReportOf(path, false, p.Package), nil
}
