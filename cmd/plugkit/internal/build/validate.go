package build

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/input"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/memory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/progress"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/source"
)

// ValidateReport is the --json document of one validated path. Its field
// names are a stable interface: add fields, never rename them.
type ValidateReport struct {
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

// validateOptions are the flags of plugkit validate.
type validateOptions struct {
	asJSON      bool
	format      string
	sarifRoot   string
	strict      bool
	strictLinks bool
	plainHTTP   bool
	transports  string
}

// NewCmdValidate builds plugkit validate, which runs with fac.
func NewCmdValidate(fac *factory.Factory) *cobra.Command {
	opts := &validateOptions{}
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
			if opts.asJSON {
				if cmd.Flags().Changed("format") && opts.format != formatJSON {
					return command.Usagef("--json and --format %s exclude each other", opts.format)
				}
				opts.format = formatJSON
			}
			switch opts.format {
			case formatText, formatJSON, formatSARIF, formatGitHub:
			default:
				return command.Usagef("unknown --format %q (text, json, sarif or github)", opts.format)
			}
			if opts.sarifRoot != "" && opts.format != formatSARIF {
				return command.Usagef("--sarif-root applies to --format sarif only")
			}
			ts, err := input.ParseTransports(opts.transports)
			if err != nil {
				return command.Usage(err)
			}
			defer memory.GCOff(validateMemory)()
			srcOpts := source.Options{Read: input.ReadOptions(opts.strictLinks), Load: agentplugin.Options{Transports: ts, StrictSkills: opts.strict},
				Remote: oci.RemoteOptions{PlainHTTP: opts.plainHTTP}}
			reports := make([]*ValidateReport, len(args))
			code := command.ExitOK
			bar := progress.Start(fac, cmd, "validate", int64(len(args)), false)
			for i, p := range args {
				reports[i] = validatePath(cmd.Context(), p, srcOpts)
				code = max(code, reports[i].code)
				bar.Add(1)
			}
			bar.Done()
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			switch opts.format {
			case formatJSON:
				var doc any = reports[0]
				if len(reports) > 1 {
					doc = reports
				}
				err = command.WriteJSON(w, doc)
			case formatSARIF:
				err = writeSARIF(w, reports, opts.sarifRoot)
			case formatGitHub:
				writeAnnotations(w, reports)
			default:
				for _, r := range reports {
					PrintValidateReport(w, r, len(reports) > 1)
				}
			}
			if err != nil {
				return command.Usage(err)
			}
			if code != command.ExitOK {
				return command.Exit(code)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document (an array for several paths); short for --format json")
	cmd.Flags().StringVar(&opts.format, "format", formatText, "output format: text, json, sarif or github")
	cmd.Flags().StringVar(&opts.sarifRoot, "sarif-root", "", "make SARIF file paths relative to this directory (default: the current directory)")
	cmd.Flags().BoolVar(&opts.strict, "strict", false, "treat unknown SKILL.md frontmatter keys and skill names outside ASCII as errors")
	input.RegisterStrictLinks(cmd, &opts.strictLinks)
	cmd.Flags().BoolVar(&opts.plainHTTP, "plain-http", false, "reach oci:// registries over HTTP instead of HTTPS")
	cmd.Flags().StringVar(&opts.transports, "transports", "", "MCP transports this client supports, comma-separated (default: stdio,streamable-http,sse)")
	return cmd
}

// validatePath loads one path into a report; it never fails, since an
// unreadable path is itself a result to report.
func validatePath(ctx context.Context, path string, opts source.Options) *ValidateReport {
	r := newValidateReport(path)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		r.dir = path
	}
	p, err := input.OpenSource(ctx, path, source.ParseOptions{}, opts)
	if ds, rejected := agentplugin.Diagnostics(err); rejected {
		r.Diagnostics = append(r.Diagnostics, ds...)
		r.code = command.ExitFailed
		return r
	} else if err != nil {
		code := "io-error"
		if command.ExitCode(err) == command.ExitFailed {
			code = "input-invalid"
		}
		r.Diagnostics = append(r.Diagnostics, agentplugin.Diagnostic{Severity: agentplugin.Error, Code: code, Message: err.Error()})
		r.code = command.ExitCode(err)
		return r
	}
	r.fill(p.Package)
	return r
}

// newValidateReport is the report of path before anything is known,
// with empty lists rather than nulls.
func newValidateReport(path string) *ValidateReport {
	return &ValidateReport{Path: path, MCP: agentplugin.MCPAbsent, Skills: []skillRef{}, MCPServers: []serverRef{},
		Extensions: []string{}, ExtensionDirectories: []string{}, Diagnostics: []agentplugin.Diagnostic{}}
}

// ReportOf is the validation report of pkg, read from path, as push and
// publish print it; dir says whether path is a plugin directory, whose
// files the SARIF and GitHub formats locate diagnostics in.
func ReportOf(path string, dir bool, pkg *agentplugin.Package) *ValidateReport {
	r := newValidateReport(path)
	if dir {
		r.dir = path
	}
	r.fill(pkg)
	return r
}

// ExitCode is the exit code the report calls for.
func (r *ValidateReport) ExitCode() int { return r.code }

// fill records a loaded plugin in the report.
func (r *ValidateReport) fill(pkg *agentplugin.Package) {
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
		r.code = command.ExitFailed
	}
}

func PrintValidateReport(w io.Writer, r *ValidateReport, header bool) {
	if header {
		command.Printf(w, "== %s\n", r.Path)
	}
	command.PrintDiagnostics(w, r.Diagnostics)
	command.Printf(w, "%s\n", r.summary())
}

// summary is the one line that gives a path's verdict.
func (r *ValidateReport) summary() string {
	counts := command.Counts(r.Diagnostics)
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
		command.Plural(len(r.Skills), "skill"), command.Plural(len(r.MCPServers), "MCP server"), r.MCP, counts)
}
