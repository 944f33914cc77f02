package ocicmd

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/internal/atomicfile"
	"github.com/plugkit/plugkit/internal/terminal"
	"github.com/plugkit/plugkit/oci"
)

// exportResult is export's --json document.
type exportResult struct {
	Path    string           `json:"path"`
	Digest  string           `json:"digest"`
	Size    int64            `json:"size"`
	Plugins []exportedPlugin `json:"plugins"`
}

type exportedPlugin struct {
	Reference string        `json:"reference"`
	Name      string        `json:"name"`
	Version   string        `json:"version"`
	Digest    string        `json:"digest"`
	RefName   string        `json:"refName"`
	Referrers []referrerRef `json:"referrers"`
}

// exportOptions are the flags of plugkit export.
type exportOptions struct {
	oci   remote.OCIFlags
	check bool
}

// NewCmdExport builds plugkit export, which runs with fac.
func NewCmdExport(fac *factory.Factory) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export REF... FILE.tar",
		Short: "Write plugins, their blobs and all their referrers as one air-gap layout tar",
		Long: `Export reads each plugin REF names (oci:// or oci-layout:) and writes
FILE.tar: an OCI image layout holding the plugins, their blobs and every
referrer above them (signatures, attestations), as a plain deterministic
tar (regular files only, mode 0644, uid/gid 0, mtime 0, sorted names).
index.json lists each plugin under org.opencontainers.image.ref.name = its
tag, or REPOSITORY:TAG when there are several (a layout's file name stands
for its repository), and every referrer untagged with its artifactType.
The same content always gives the same bytes. The file is written to a
temporary sibling and renamed: it is complete or absent.

Export checks what it carries without unpacking it: each plugin manifest
against the plugin profile (media types, artifactType, one layer of the
layer type, sizes and limits), its config, and the size and digest of
every blob it writes (manifests, configs, layers, referrers). It does not
open the layer's archive: whoever imports the tar does (copy, pull and
install refuse a bad one). With --check, each plugin is also checked as pull
checks it: its layer unpacked and validated, and its config compared with
its plugin.json. On any refusal, FILE is not written.

In the disconnected network:
  plugkit copy oci-layout:FILE.tar@DIGEST oci://REGISTRY/REPOSITORY:TAG
(with one plugin in the file, a tag or nothing selects it).

Exit status: 0 written, 1 refused, 2 usage, network or I/O error.`,
		Example: `  plugkit export oci://ghcr.io/acme/release-notes:1.2.0 release-notes.tar
  plugkit export oci://127.0.0.1:5000/plugins/a:1.0 oci://127.0.0.1:5000/plugins/b:2.0 plugins.tar --plain-http --json
  plugkit export --check oci-layout:./plugins@sha256:a81d...b4 release-notes.tar`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd, opts.oci, oci.ExportOptions{Check: opts.check}, args[:len(args)-1], args[len(args)-1])
		},
	}
	opts.oci.Register(fac, cmd)
	cmd.Flags().BoolVar(&opts.check, "check", false, "also unpack and validate each plugin's layer, as pull does")
	return cmd
}

func runExport(cmd *cobra.Command, f remote.OCIFlags, opts oci.ExportOptions, refArgs []string, file string) error {
	ctx := cmd.Context()
	if oci.IsReference(file) {
		return command.Usagef("the last argument is the tar file to write, not a reference: %q", file)
	}
	var items []oci.ExportItem
	var refs []oci.Reference
	stores := map[oci.Reference]oci.Store{} // one per layout or repository
	for _, arg := range refArgs {
		ref, err := remote.ParseOCIRef(arg, "reference")
		if err != nil {
			return err
		}
		where := oci.Reference{Layout: ref.Layout, Path: ref.Path, Registry: ref.Registry, Repository: ref.Repository}
		src, ok := stores[where]
		if !ok {
			if src, err = f.Open(ctx, ref, false); err != nil {
				return err
			}
			stores[where] = src
		}
		items = append(items, oci.ExportItem{Source: src, Selector: ref.Selector(), Name: exportName(ref, len(refArgs) > 1)})
		refs = append(refs, ref)
	}
	out, err := atomicfile.Create(file, 0o644)
	if err != nil {
		return command.Usage(err)
	}
	defer out.Abort()
	digest := archive.NewDigestWriter()
	// Two buffers of 256 KiB: two of 1 MiB were a third of the memory an
	// export of small plugins takes, each page faulted in, and enough to
	// start a collection.
	buf := newAheadWriter(io.MultiWriter(out, digest), 256<<10)
	copied, err := oci.Export(ctx, buf, items, filepath.Dir(file), opts)
	if werr := buf.Close(); err == nil && werr != nil {
		return command.Usage(werr)
	}
	if err != nil {
		return remote.OCIFailure(oci.Reference{}, err)
	}
	if err := out.Commit(); err != nil {
		return command.Usage(err)
	}
	res := exportResult{Path: file, Digest: digest.Digest(), Size: digest.Size(), Plugins: []exportedPlugin{}}
	for i, c := range copied {
		cfg := c.Plugin.PluginConfig // with --check, the same as plugin.json
		res.Plugins = append(res.Plugins, exportedPlugin{Reference: refs[i].String(), Name: cfg.Name, Version: cfg.PluginVersion(),
			Digest: c.Plugin.Descriptor.Digest.String(), RefName: items[i].Name, Referrers: referrerRefs(c)})
	}
	return command.Output(cmd, f.JSON, res, func(w io.Writer) {
		for _, p := range res.Plugins {
			fmt.Fprintf(w, "%s %s  %s  %s (%d referrers)\n", terminal.Safe(p.Name), terminal.Safe(p.Version), p.Digest, terminal.Safe(p.RefName), len(p.Referrers))
		}
		fmt.Fprintf(w, "path:   %s\ndigest: %s\nsize:   %d\n", terminal.Safe(res.Path), res.Digest, res.Size)
	})
}

// exportName is the ref name of an exported plugin: its tag, or
// REPOSITORY:TAG when the file holds several (a layout's file name, less
// its extension, stands for the repository). A plugin named by digest
// only is listed untagged.
func exportName(r oci.Reference, several bool) string {
	if r.Tag == "" || !several {
		return r.Tag
	}
	repo := r.Repository
	if r.Layout {
		repo = strings.TrimSuffix(filepath.Base(r.Path), ".tar")
	}
	return repo + ":" + r.Tag
}
