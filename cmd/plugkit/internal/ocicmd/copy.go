package ocicmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/internal/terminal"
	"github.com/plugkit/plugkit/oci"
)

// copyResult is copy's --json document.
type copyResult struct {
	Source      string        `json:"source"`
	Destination string        `json:"destination"`
	Digest      string        `json:"digest"`
	Name        string        `json:"name"`
	Version     string        `json:"version"`
	Referrers   []referrerRef `json:"referrers"`
}

// referrerRef is one referrer carried along.
type referrerRef struct {
	Digest       string `json:"digest"`
	MediaType    string `json:"mediaType"`
	ArtifactType string `json:"artifactType"`
	Size         int64  `json:"size"`
}

// copyOptions are the flags of plugkit copy.
type copyOptions struct {
	oci remote.OCIFlags
}

// NewCmdCopy builds plugkit copy, which runs with fac.
func NewCmdCopy(fac *factory.Factory) *cobra.Command {
	opts := &copyOptions{}
	cmd := &cobra.Command{
		Use:   "copy SRC DST",
		Short: "Copy a plugin artifact and all its referrers between registries and layouts",
		Long: `Copy reads the plugin SRC names (oci:// or oci-layout:, a layout directory
or tar), checks it as pull does, and writes it to DST (oci://REGISTRY/
REPOSITORY[:TAG] or oci-layout:DIR[:TAG]) with every referrer above it
(signatures, attestations, and their own referrers), digests unchanged.
DST's tag defaults to SRC's. Registries without the OCI referrers API get
the referrers tag schema.

An air-gap file written by export enters a disconnected registry with
  plugkit copy oci-layout:FILE.tar@DIGEST oci://REGISTRY/REPOSITORY:TAG

Exit status: 0 copied, 1 refused, 2 usage, network or I/O error.`,
		Example: `  plugkit copy oci://ghcr.io/acme/release-notes:1.2.0 oci://registry.internal/plugins/release-notes:1.2.0
  plugkit copy oci://127.0.0.1:5000/plugins/release-notes:1.2.0 oci-layout:./mirror --plain-http
  plugkit copy oci-layout:airgap.tar:1.2.0 oci://10.0.0.5:5000/plugins/release-notes --plain-http --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			srcRef, err := remote.ParseOCIRef(args[0], "source")
			if err != nil {
				return err
			}
			dstRef, err := remote.ParseOCIRef(args[1], "destination")
			if err != nil {
				return err
			}
			if dstRef.Digest != "" {
				return command.Usagef("destination %q: a digest names what is there already; give a tag or none", args[1])
			}
			if dstRef.Tag == "" {
				dstRef.Tag = srcRef.Tag
			}
			src, err := opts.oci.Open(ctx, srcRef, false)
			if err != nil {
				return err
			}
			// The plugin is checked before the destination is opened, which
			// creates a layout directory: a refusal writes nothing.
			p, err := oci.Pull(ctx, src, srcRef.Selector(), oci.PullOptions{})
			if err != nil {
				return remote.OCIFailure(srcRef, err)
			}
			dst, err := opts.oci.Open(ctx, dstRef, true)
			if err != nil {
				return err
			}
			c, err := oci.CopyPulled(ctx, src, p, dst, dstRef.Tag)
			if err != nil {
				return remote.OCIFailure(dstRef, err)
			}
			if err := dst.Close(); err != nil {
				return command.Usage(err)
			}
			res := copyResult{Source: srcRef.String(), Destination: dstRef.String(), Digest: c.Plugin.Descriptor.Digest.String(),
				Name: c.Plugin.Package.Name, Version: c.Plugin.Package.Version, Referrers: referrerRefs(c)}
			return command.Output(cmd, opts.oci.JSON, res, func(w io.Writer) {
				fmt.Fprintf(w, "copied %s %s\ndigest:    %s\nto:        %s\nreferrers: %d\n", terminal.Safe(res.Name), terminal.Safe(res.Version),
					res.Digest, terminal.Safe(res.Destination), len(res.Referrers))
				for _, r := range res.Referrers {
					fmt.Fprintf(w, "  %s %s\n", r.Digest, terminal.Safe(r.ArtifactType))
				}
			})
		},
	}
	opts.oci.Register(fac, cmd)
	return cmd
}

// referrerRefs lists what a copy carried besides the plugin.
func referrerRefs(c *oci.Copied) []referrerRef {
	out := []referrerRef{}
	for _, r := range c.Referrers {
		out = append(out, referrerRef{Digest: r.Digest.String(), MediaType: r.MediaType, ArtifactType: r.ArtifactType, Size: r.Size})
	}
	return out
}
