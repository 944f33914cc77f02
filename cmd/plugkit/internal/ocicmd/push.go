package ocicmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/build"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/input"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/internal/terminal"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/source"
)

// pushResult is push's --json document.
type pushResult struct {
	Reference    string                   `json:"reference"`
	Digest       string                   `json:"digest"`
	MediaType    string                   `json:"mediaType"`
	ArtifactType string                   `json:"artifactType"`
	Size         int64                    `json:"size"`
	Config       remote.BlobRef           `json:"config"`
	Layer        remote.BlobRef           `json:"layer"`
	Annotations  map[string]string        `json:"annotations"`
	Diagnostics  []agentplugin.Diagnostic `json:"diagnostics"`
}

// pushOptions are the flags of plugkit push.
type pushOptions struct {
	oci         remote.OCIFlags
	allowErrors bool
}

// NewCmdPush builds plugkit push, which runs with fac.
func NewCmdPush(fac *factory.Factory) *cobra.Command {
	opts := &pushOptions{oci: remote.OCIFlags{Bar: "push"}}
	cmd := &cobra.Command{
		Use:   "push SOURCE REF",
		Short: "Validate a plugin and push it to an OCI registry or layout",
		Long: `Push reads the plugin SOURCE (a directory, an archive, or an oci:// or
oci-layout: reference), validates it as validate does, builds the OCI
artifact Colossus reads (one manifest, the plugin config, one layer: the
deterministic archive under NAME/) and pushes the blobs, then the manifest,
tagged. It prints the manifest digest: the plugin's identity, the same for
the same plugin on any machine (no created annotation unless
SOURCE_DATE_EPOCH is set).

REF is oci://REGISTRY/REPOSITORY[:TAG] or oci-layout:DIR[:TAG]; without a
tag, the plugin's version is the tag. A rejected plugin is refused; a plugin
with error diagnostics is refused unless --allow-errors. Diagnostics are
printed as validate prints them (in --json, in "diagnostics").

Registries are reached over HTTPS (--plain-http for HTTP) with the
credentials of the Docker config (plugkit login, docker login, oras login).

Exit status: 0 pushed, 1 refused (invalid plugin, registry refusal),
2 usage, network or I/O error.`,
		Example: `  plugkit push ./release-notes oci://ghcr.io/acme/release-notes:1.2.0
  plugkit push ./release-notes oci://127.0.0.1:5000/plugins/release-notes --plain-http --json
  plugkit push release-notes-1.2.0.tar.gz oci-layout:./layout:1.2.0`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPush(cmd, opts.oci, args[0], args[1], opts.allowErrors)
		},
	}
	opts.oci.Register(fac, cmd)
	cmd.Flags().BoolVar(&opts.allowErrors, "allow-errors", false, "push a plugin that loads with error diagnostics")
	return cmd
}

func runPush(cmd *cobra.Command, f remote.OCIFlags, srcArg, refArg string, allowErrors bool) error {
	ctx := cmd.Context()
	ref, err := remote.ParseOCIRef(refArg, "destination")
	if err != nil {
		return err
	}
	if ref.Digest != "" {
		return command.Usagef("destination %q: a digest names what is there already; give a tag", refArg)
	}
	ropts, err := f.Remote()
	if err != nil {
		return err
	}
	p, err := input.OpenSource(ctx, srcArg, source.ParseOptions{}, source.Options{Remote: ropts})
	if err != nil {
		return command.Explain(cmd, err)
	}
	pkg := p.Package
	// The plugin is judged as validate judges it, and its report printed
	// the same way.
	report := build.ReportOf(srcArg, false, pkg)
	if !f.JSON {
		build.PrintValidateReport(cmd.OutOrStdout(), report, false)
	}
	if agentplugin.HasErrors(pkg.Diagnostics) && !allowErrors {
		return command.ErrorDiagnosticsRefused(srcArg, "pushed", "pushes", pkg.Diagnostics)
	}
	created, err := oci.SourceDateEpoch()
	if err != nil {
		return command.Usage(err)
	}
	a, err := oci.Build(pkg, oci.BuildOptions{Created: created})
	if err != nil {
		return command.Failed(err)
	}
	if ref.Tag == "" {
		if pkg.Version == "" {
			return command.Usagef("destination %q has no tag and the plugin no version to use as one", refArg)
		}
		ref.Tag = pkg.Version
	}
	dst, err := f.Open(ctx, ref, true)
	if err != nil {
		return err
	}
	if _, err := oci.Push(ctx, dst, a, ref.Tag); err != nil {
		return remote.OCIFailure(ref, err)
	}
	if err := dst.Close(); err != nil {
		return command.Usage(err)
	}
	res := pushResult{Reference: ref.String(), Digest: a.Descriptor.Digest.String(), MediaType: a.Descriptor.MediaType,
		ArtifactType: a.Descriptor.ArtifactType, Size: a.Descriptor.Size,
		Config:      remote.BlobRef{Digest: a.ConfigDescriptor.Digest.String(), Size: a.ConfigDescriptor.Size},
		Layer:       remote.BlobRef{Digest: a.LayerDescriptor.Digest.String(), Size: a.LayerDescriptor.Size},
		Annotations: a.Annotations, Diagnostics: append([]agentplugin.Diagnostic{}, pkg.Diagnostics...)}
	return command.Output(cmd, f.JSON, res, func(w io.Writer) {
		fmt.Fprintf(w, "pushed %s %s\nreference: %s\ndigest:    %s\n", terminal.Safe(pkg.Name), terminal.Safe(pkg.Version), terminal.Safe(res.Reference), res.Digest)
	})
}
