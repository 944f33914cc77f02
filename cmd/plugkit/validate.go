package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/source"
)

func init() { verbs = append(verbs, newValidateCmd) }

// validateReport is the --json document of one validated path. Its field
// names are a stable interface: add fields, never rename them.
type validateReport struct {
	Path                 string                   `json:"path"`
	SpecVersion          string                   `json:"specVersion"`
	Loaded               bool                     `json:"loaded"`
	Plugin               *pluginRef               `json:"plugin"`
	Skills               []skillRef               `json:"skills"`
	MCP                  agentplugin.MCPState     `json:"mcp"`
	MCPServers           []serverRef              `json:"mcpServers"`
	Extensions           []string                 `json:"extensions"`
	ExtensionDirectories []string                 `json:"extensionDirectories"`
	Diagnostics          []agentplugin.Diagnostic `json:"diagnostics"`

	code int // exit code this path calls for
}

type pluginRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type skillRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Path string `json:"path"`
}

type serverRef struct {
	ID   string                `json:"id"`
	Name string                `json:"name"`
	Type agentplugin.Transport `json:"type"`
}

func newValidateCmd() *cobra.Command {
	var (
		asJSON     bool
		strict     bool
		transports string
	)
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check plugins against Agent Plugins 1.0.0",
		Long: `Validate loads each plugin (a directory or a .tar.gz archive) exactly as a
conformant client would and reports every problem like a compiler does.

Exit status: 0 when every plugin loads without an error diagnostic, 1 when a
plugin is rejected or has an error diagnostic (an invalid skill, say), 2 for
usage errors or a path that cannot be read.`,
		Example: `  plugkit validate ./my-plugin
  plugkit validate --json my-plugin-1.0.0.tar.gz
  plugkit validate --transports stdio,streamable-http ./a ./b`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ts, err := parseTransports(transports)
			if err != nil {
				return usage(err)
			}
			opts := agentplugin.Options{Transports: ts, StrictSkills: strict}
			reports := make([]*validateReport, len(args))
			code := exitOK
			for i, p := range args {
				reports[i] = validatePath(cmd.Context(), p, opts)
				code = max(code, reports[i].code)
			}
			var doc any = reports[0]
			if len(reports) > 1 {
				doc = reports
			}
			err = output(cmd, asJSON, doc, func(w io.Writer) {
				for _, r := range reports {
					printValidateReport(w, r, len(reports) > 1)
				}
			})
			if err != nil {
				return err
			}
			if code != exitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document (an array for several paths)")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat unknown SKILL.md frontmatter keys as errors")
	cmd.Flags().StringVar(&transports, "transports", "", "MCP transports this client supports, comma-separated (default: stdio,streamable-http,sse)")
	return cmd
}

// validatePath loads one path into a report; it never fails, since an
// unreadable path is itself a result to report.
func validatePath(ctx context.Context, path string, opts agentplugin.Options) *validateReport {
	r := &validateReport{Path: path, MCP: agentplugin.MCPAbsent, Skills: []skillRef{}, MCPServers: []serverRef{},
		Extensions: []string{}, ExtensionDirectories: []string{}, Diagnostics: []agentplugin.Diagnostic{}}
	p, err := openSource(ctx, path, source.ParseOptions{}, source.Options{Load: opts})
	if ds, rejected := agentplugin.Diagnostics(err); rejected {
		r.Diagnostics = append(r.Diagnostics, ds...)
		r.code = exitFailed
		return r
	} else if err != nil {
		code := "io-error"
		if exitCode(err) == exitFailed {
			code = "input-invalid"
		}
		r.Diagnostics = append(r.Diagnostics, agentplugin.Diagnostic{Severity: agentplugin.Error, Code: code, Message: err.Error()})
		r.code = exitCode(err)
		return r
	}
	pkg := p.Package
	r.Loaded = true
	r.SpecVersion = pkg.SpecVersion
	r.Plugin = &pluginRef{Name: pkg.Name, Version: pkg.Version}
	for _, s := range pkg.Skills {
		r.Skills = append(r.Skills, skillRef{ID: s.ID, Name: s.Name, Path: s.Path})
	}
	r.MCP = pkg.MCP
	for _, s := range pkg.Servers {
		r.MCPServers = append(r.MCPServers, serverRef{ID: s.ID, Name: s.Name, Type: s.Type})
	}
	r.Extensions = append(r.Extensions, pkg.Extensions...)
	r.ExtensionDirectories = append(r.ExtensionDirectories, pkg.ExtensionDirectories...)
	r.Diagnostics = append(r.Diagnostics, pkg.Diagnostics...)
	if agentplugin.HasErrors(pkg.Diagnostics) {
		r.code = exitFailed
	}
	return r
}

func printValidateReport(w io.Writer, r *validateReport, header bool) {
	if header {
		fmt.Fprintf(w, "== %s\n", r.Path)
	}
	errs, warns := 0, 0
	for _, d := range r.Diagnostics {
		fmt.Fprintln(w, d.String())
		if d.Severity == agentplugin.Error {
			errs++
		} else {
			warns++
		}
	}
	counts := fmt.Sprintf("%s, %s", plural(errs, "error"), plural(warns, "warning"))
	if !r.Loaded {
		fmt.Fprintf(w, "%s: rejected (%s)\n", r.Path, counts)
		return
	}
	name := r.Plugin.Name
	if r.Plugin.Version != "" {
		name += " " + r.Plugin.Version
	}
	verdict := "valid"
	if errs > 0 {
		verdict = "loaded with errors"
	}
	fmt.Fprintf(w, "%s: %s: %s, %s, MCP %s (%s)\n", name, verdict,
		plural(len(r.Skills), "skill"), plural(len(r.MCPServers), "MCP server"), r.MCP, counts)
}
