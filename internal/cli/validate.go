package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/source"
)

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
	// dir is the plugin directory for a directory source, "" otherwise:
	// the SARIF and GitHub formats locate diagnostics in its files.
	dir string
	// files are the plugin's files when it loaded, or those read back
	// for a rejected directory (nil when unreadable), for column positions.
	files map[string][]byte
	// readBackBytes counts the bytes of the files read back.
	readBackBytes int64
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

// The formats of plugkit validate.
const (
	formatText   = "text"
	formatJSON   = "json"
	formatSARIF  = "sarif"
	formatGitHub = "github"
)

// validateMemory is the memory at which validate collects garbage: none
// before. What it allocates stays live until the plugin is loaded (its
// files, the parsed skills), so collections found almost nothing to free:
// of the 5,000-skill plugin of bench/skills.sh, 10->9, 18->18 and 27->27
// MB, and without them validate took about 10% less CPU. Twice the files
// the default limits let a plugin hold (snapshot.DefaultMaxTotalBytes),
// so that a plugin at the limits is not collected over and over; past it,
// as with several plugins in one run, the collector frees what earlier
// plugins left.
const validateMemory = 2 * snapshot.DefaultMaxTotalBytes

func newValidateCmd() *cobra.Command {
	var (
		asJSON      bool
		format      string
		sarifRoot   string
		strict      bool
		strictLinks bool
		plainHTTP   bool
		transports  string
	)
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check plugins against Agent Plugins 1.0.0",
		Long: `Validate loads each plugin (a directory, a .tar.gz archive, a layer archive
rooted at NAME/, or an oci:// or oci-layout: reference) exactly as a
conformant client would and reports every problem like a compiler does, with
a stable code (docs/diagnostics.md).

Formats (--format):
  text    one line per diagnostic ("mcp.json:7:14: error[code]: message")
          and a summary line per plugin (the default)
  json    one JSON document, an array for several paths (--json is short
          for --format json)
  sarif   one SARIF 2.1.0 log for all paths, for code scanning: one rule per
          diagnostic code, file paths relative to the current directory or
          --sarif-root
  github  GitHub Actions workflow commands (::error file=…,line=…::…) that
          annotate the files of a pull request, then the summary lines

Links inside a plugin directory that stay inside it are read as what they
point to, as pack does; --strict-links refuses every link instead.

Exit status: 0 when every plugin loads without an error diagnostic, 1 when a
plugin is rejected or has an error diagnostic (an invalid skill, say), 2 for
usage errors or a path that cannot be read. The format does not change it.`,
		Example: `  plugkit validate ./my-plugin
  plugkit validate --json my-plugin-1.0.0.tar.gz
  plugkit validate --format sarif plugins/* > plugkit.sarif
  plugkit validate --format github plugins/*
  plugkit validate --transports stdio,streamable-http ./a ./b
  plugkit validate oci://127.0.0.1:5000/plugins/my-plugin:1.0.0 --plain-http`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				if cmd.Flags().Changed("format") && format != formatJSON {
					return Usagef("--json and --format %s exclude each other", format)
				}
				format = formatJSON
			}
			switch format {
			case formatText, formatJSON, formatSARIF, formatGitHub:
			default:
				return Usagef("unknown --format %q (text, json, sarif or github)", format)
			}
			if sarifRoot != "" && format != formatSARIF {
				return Usagef("--sarif-root applies to --format sarif only")
			}
			ts, err := ParseTransports(transports)
			if err != nil {
				return Usage(err)
			}
			defer GCOff(validateMemory)()
			opts := source.Options{Read: readOptions(strictLinks), Load: agentplugin.Options{Transports: ts, StrictSkills: strict},
				Remote: oci.RemoteOptions{PlainHTTP: plainHTTP}}
			reports := make([]*validateReport, len(args))
			code := ExitOK
			bar := StartProgress(cmd, "validate", int64(len(args)), false)
			for i, p := range args {
				reports[i] = validatePath(cmd.Context(), p, opts)
				code = max(code, reports[i].code)
				bar.add(1)
			}
			bar.Done()
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			switch format {
			case formatJSON:
				var doc any = reports[0]
				if len(reports) > 1 {
					doc = reports
				}
				err = WriteJSON(w, doc)
			case formatSARIF:
				err = writeSARIF(w, reports, sarifRoot)
			case formatGitHub:
				writeAnnotations(w, reports)
			default:
				for _, r := range reports {
					printValidateReport(w, r, len(reports) > 1)
				}
			}
			if err != nil {
				return Usage(err)
			}
			if code != ExitOK {
				return &ExitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document (an array for several paths); short for --format json")
	cmd.Flags().StringVar(&format, "format", formatText, "output format: text, json, sarif or github")
	cmd.Flags().StringVar(&sarifRoot, "sarif-root", "", "make SARIF file paths relative to this directory (default: the current directory)")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat unknown SKILL.md frontmatter keys and skill names outside ASCII as errors")
	registerStrictLinks(cmd, &strictLinks)
	cmd.Flags().BoolVar(&plainHTTP, "plain-http", false, "reach oci:// registries over HTTP instead of HTTPS")
	cmd.Flags().StringVar(&transports, "transports", "", "MCP transports this client supports, comma-separated (default: stdio,streamable-http,sse)")
	return cmd
}

// validatePath loads one path into a report; it never fails, since an
// unreadable path is itself a result to report.
func validatePath(ctx context.Context, path string, opts source.Options) *validateReport {
	r := newValidateReport(path)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		r.dir = path
	}
	p, err := OpenSource(ctx, path, source.ParseOptions{}, opts)
	if ds, rejected := agentplugin.Diagnostics(err); rejected {
		r.Diagnostics = append(r.Diagnostics, ds...)
		r.code = ExitFailed
		return r
	} else if err != nil {
		code := "io-error"
		if ExitCode(err) == ExitFailed {
			code = "input-invalid"
		}
		r.Diagnostics = append(r.Diagnostics, agentplugin.Diagnostic{Severity: agentplugin.Error, Code: code, Message: err.Error()})
		r.code = ExitCode(err)
		return r
	}
	r.fill(p.Package)
	return r
}

// newValidateReport is the report of path before anything is known,
// with empty lists rather than nulls.
func newValidateReport(path string) *validateReport {
	return &validateReport{Path: path, MCP: agentplugin.MCPAbsent, Skills: []skillRef{}, MCPServers: []serverRef{},
		Extensions: []string{}, ExtensionDirectories: []string{}, Diagnostics: []agentplugin.Diagnostic{}}
}

// fill records a loaded plugin in the report.
func (r *validateReport) fill(pkg *agentplugin.Package) {
	r.Loaded = true
	if pkg.Snapshot != nil { // nil when pack loaded the plugin partially
		r.files = pkg.Snapshot.Files
	}
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
		r.code = ExitFailed
	}
}

func printValidateReport(w io.Writer, r *validateReport, header bool) {
	if header {
		Printf(w, "== %s\n", r.Path)
	}
	printDiagnostics(w, r.Diagnostics)
	Printf(w, "%s\n", r.summary())
}

// summary is the one line that gives a path's verdict.
func (r *validateReport) summary() string {
	counts := counts(r.Diagnostics)
	if !r.Loaded {
		return fmt.Sprintf("%s: rejected (%s)", r.Path, counts)
	}
	name := r.Plugin.Name
	if r.Plugin.Version != "" {
		name += " " + r.Plugin.Version
	}
	verdict := "valid"
	if agentplugin.HasErrors(r.Diagnostics) {
		verdict = "loaded with errors"
	}
	return fmt.Sprintf("%s: %s: %s, %s, MCP %s (%s)", name, verdict,
		Plural(len(r.Skills), "skill"), Plural(len(r.MCPServers), "MCP server"), r.MCP, counts)
}
