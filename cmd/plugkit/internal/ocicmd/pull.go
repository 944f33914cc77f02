package ocicmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/build"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/memory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/internal/terminal"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/source"
)

// pullResult is pull's --json document.
type pullResult struct {
	Reference string `json:"reference"`
	Digest    string `json:"digest"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	Path      string `json:"path"`
	Files     int    `json:"files"`
	// Diagnostics are the loaded plugin's (warnings, or errors a pull
	// does not refuse).
	Diagnostics []agentplugin.Diagnostic `json:"diagnostics"`
}

// pullGCPercent is pull's garbage collection target (GOGC) unless the
// environment sets one. Every file of the layer is a new allocation that
// lives only until a writer has written it, so the live heap stays at a
// few MB while a 30 MB plugin allocates 30 MB: with Go's default of 100
// it was collected some ten times, on the two CPUs that inflate and
// write. At 400 (the heap may grow to five times what is live) the best
// of five pulls of a 30 MB plugin (2,000 files) took 7-17% less time in
// two rounds of interleaved runs (bench/oci.sh's pull, at load 6 to 9).
const pullGCPercent = 400

// pullOptions are the flags of plugkit pull.
type pullOptions struct {
	oci remote.OCIFlags
}

// NewCmdPull builds plugkit pull, which runs with fac.
func NewCmdPull(fac *factory.Factory) *cobra.Command {
	opts := &pullOptions{oci: remote.OCIFlags{Bar: "pull"}}
	cmd := &cobra.Command{
		Use:   "pull REF DIR",
		Short: "Fetch a plugin from an OCI registry or layout into a new directory",
		Long: `Pull resolves REF (oci://REGISTRY/REPOSITORY[:TAG][@DIGEST] or
oci-layout:PATH[:TAG][@DIGEST], PATH a layout directory or tar), checks the
artifact against the plugin profile before using it (manifest, config and
layer types, sizes and digests against their descriptors, limits, the
config against plugin.json, every layer entry under NAME/), and unpacks
the layer as it arrives, hashing it on the way, into a temporary sibling of
DIR without the NAME/ folder. The sibling is renamed into place once the
layer matched its digest and the plugin is validated and accepted. DIR must not exist or be an empty directory;
on any refusal the sibling is removed and DIR left as it was.

A layout that lists several plugins is read only by digest. Registries are
reached over HTTPS (--plain-http for HTTP) with the credentials of the
Docker config.

Exit status: 0 pulled, 1 refused (not a plugin, digest or size lie, limit,
rejected plugin, registry refusal), 2 usage, network or I/O error.`,
		Example: `  plugkit pull oci://ghcr.io/acme/release-notes:1.2.0 ./release-notes
  plugkit pull oci://127.0.0.1:5000/plugins/release-notes@sha256:a81d...b4 ./rn --plain-http --json
  plugkit pull oci-layout:airgap.tar:1.2.0 ./release-notes`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := remote.ParseOCIRef(args[0], "reference")
			if err != nil {
				return err
			}
			if err := snapshot.CheckNewDir(args[1]); err != nil {
				return command.Usage(err)
			}
			ropts, err := opts.oci.Remote()
			if err != nil {
				return err
			}
			src, err := source.Parse(args[0], source.ParseOptions{})
			if err != nil {
				return command.Usage(err)
			}
			defer memory.GCPercent(pullGCPercent)()
			// Files are written while the layer is fetched and unpacked,
			// and removed if the plugin is then refused; memory holds what
			// is not written yet, not the layer and its payload.
			out := build.NewOutDir(args[1])
			defer out.Abort()
			p, err := source.Open(cmd.Context(), src, source.Options{Remote: ropts, OnFile: out.Write, Stream: true})
			if err != nil {
				return command.Explain(cmd, remote.OCIFailure(ref, err))
			}
			if err := out.Commit(); err != nil {
				return command.Usage(err)
			}
			res := pullResult{Reference: ref.String(), Digest: p.Identity, Name: p.Package.Name, Version: p.Package.Version,
				Path: args[1], Files: len(p.Package.Snapshot.Files), Diagnostics: command.NonNil(p.Package.Diagnostics)}
			return command.Output(cmd, opts.oci.JSON, res, func(w io.Writer) {
				command.PrintDiagnostics(w, res.Diagnostics)
				fmt.Fprintf(w, "pulled %s %s\ndigest: %s\nfiles:  %d\npath:   %s\n", terminal.Safe(res.Name), terminal.Safe(res.Version), res.Digest, res.Files, terminal.Safe(res.Path))
			})
		},
	}
	opts.oci.Register(fac, cmd)
	return cmd
}
