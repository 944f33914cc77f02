package build

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/input"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/source"
)

// inspectReport is the --json document of plugkit inspect. Env values and
// header values are never shown: they may be secrets; their names are.
type inspectReport struct {
	Path          string                   `json:"path"`
	Digest        string                   `json:"digest"`
	SpecVersion   string                   `json:"specVersion"`
	Name          string                   `json:"name"`
	Version       string                   `json:"version"`
	Description   string                   `json:"description"`
	Files         int                      `json:"files"`
	Bytes         int64                    `json:"bytes"`
	Skills        []inspectSkill           `json:"skills"`
	MCP           agentplugin.MCPState     `json:"mcp"`
	MCPServers    []inspectServer          `json:"mcpServers"`
	Extensions    []string                 `json:"extensions"`
	ExtensionDirs []string                 `json:"extensionDirectories"`
	Diagnostics   []agentplugin.Diagnostic `json:"diagnostics"`
}

type inspectSkill struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Path        string   `json:"path"`
	Files       []string `json:"files"`
}

type inspectServer struct {
	ID      string                `json:"id"`
	Type    agentplugin.Transport `json:"type"`
	Command string                `json:"command,omitempty"`
	Args    []string              `json:"args,omitempty"`
	EnvKeys []string              `json:"envKeys,omitempty"`
	Cwd     string                `json:"cwd,omitempty"`
	URL     string                `json:"url,omitempty"`
	Headers []string              `json:"headerNames,omitempty"`
}

// inspectOptions are the flags of plugkit inspect.
type inspectOptions struct {
	asJSON      bool
	plainHTTP   bool
	strictLinks bool
}

// NewCmdInspect builds plugkit inspect, which runs with fac.
func NewCmdInspect(fac *factory.Factory) *cobra.Command {
	opts := &inspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect PATH",
		Short: "Show what a plugin contains and the digest it packs to",
		Long: `Inspect loads a plugin (a directory, a .tar.gz archive, a layer archive
rooted at NAME/, or an oci:// or oci-layout: reference) and shows its
manifest, skills, MCP servers and extensions, with its digest: for an
archive, the digest of the file; for an OCI artifact, the manifest digest
(its identity); for a directory, the digest of the deterministic archive
plugkit pack would write (links are read by the same rule as pack and
validate: --strict-links refuses them).

Env values and header values are not shown (they may be secrets), only their
names. A rejected plugin exits 1 with the reasons.`,
		Example: `  plugkit inspect ./my-plugin
  plugkit inspect --json my-plugin-1.0.0.tar.gz
  plugkit inspect --strict-links ./my-plugin
  plugkit inspect oci://127.0.0.1:5000/plugins/my-plugin:1.0.0 --plain-http`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := inspect(cmd.Context(), args[0], source.Options{Read: input.ReadOptions(opts.strictLinks), Remote: oci.RemoteOptions{PlainHTTP: opts.plainHTTP}})
			if err != nil {
				return command.Explain(cmd, err)
			}
			return command.Output(cmd, opts.asJSON, r, func(w io.Writer) { printInspect(w, r) })
		},
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	cmd.Flags().BoolVar(&opts.plainHTTP, "plain-http", false, "reach oci:// registries over HTTP instead of HTTPS")
	input.RegisterStrictLinks(cmd, &opts.strictLinks)
	return cmd
}

func inspect(ctx context.Context, path string, opts source.Options) (*inspectReport, error) {
	p, err := input.OpenSource(ctx, path, source.ParseOptions{}, opts)
	if err != nil {
		return nil, err
	}
	pkg, snap := p.Package, p.Package.Snapshot
	digest, err := input.SourceDigest(p)
	if err != nil {
		return nil, command.Failed(err)
	}
	diags := command.NonNil(append([]agentplugin.Diagnostic(nil), pkg.Diagnostics...))
	r := &inspectReport{Path: path, Digest: digest, SpecVersion: pkg.SpecVersion, Name: pkg.Name, Version: pkg.Version,
		Description: pkg.Description, Files: len(snap.Files), Bytes: snap.Size(), MCP: pkg.MCP,
		Skills: []inspectSkill{}, MCPServers: []inspectServer{}, Extensions: append([]string{}, pkg.Extensions...),
		ExtensionDirs: append([]string{}, pkg.ExtensionDirectories...), Diagnostics: diags}
	for _, s := range pkg.Skills {
		files := make([]string, 0, len(s.Files))
		for p := range s.Files {
			files = append(files, s.Dir+"/"+p) // package paths, as in the archive
		}
		slices.Sort(files)
		r.Skills = append(r.Skills, inspectSkill{ID: s.ID, Description: s.Description, Path: s.Path, Files: files})
	}
	for _, s := range pkg.Servers {
		r.MCPServers = append(r.MCPServers, inspectServer{ID: s.ID, Type: s.Type, Command: s.Command, Args: s.Args,
			EnvKeys: sortedKeys(s.Env), Cwd: s.Cwd, URL: s.URL, Headers: sortedKeys(s.Headers)})
	}
	return r, nil
}

// sortedKeys are the keys of m in order, an empty list (never null in the
// document) when there are none.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func printInspect(w io.Writer, r *inspectReport) {
	title := r.Name
	if r.Version != "" {
		title += " " + r.Version
	}
	command.Printf(w, "%s (Agent Plugins %s)\n", title, r.SpecVersion)
	if r.Description != "" {
		command.Printf(w, "  %s\n", r.Description)
	}
	command.Printf(w, "digest:  %s\nfiles:   %d (%d bytes)\n", r.Digest, r.Files, r.Bytes)
	command.Printf(w, "skills:  %d\n", len(r.Skills))
	for _, s := range r.Skills {
		command.Printf(w, "  %s  %s\n", s.ID, s.Description)
	}
	command.Printf(w, "mcp:     %s, %s\n", r.MCP, command.Plural(len(r.MCPServers), "server"))
	for _, s := range r.MCPServers {
		target := s.URL
		if s.Type == agentplugin.Stdio {
			target = strings.Join(append([]string{s.Command}, s.Args...), " ")
		}
		command.Printf(w, "  %s  %s  %s\n", s.ID, s.Type, target)
	}
	if len(r.Extensions)+len(r.ExtensionDirs) > 0 {
		command.Printf(w, "extensions: %s; directories: %s\n", strings.Join(r.Extensions, ", "), strings.Join(r.ExtensionDirs, ", "))
	}
	command.PrintDiagnostics(w, r.Diagnostics)
}
