package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/host"
	"github.com/plugkit/plugkit/internal/terminal"
	"github.com/plugkit/plugkit/mcprun"
)

// mcpListReport is the --json document of "plugkit mcp list". Its field
// names are a stable interface: add fields, never rename them.
type mcpListReport struct {
	Plugin  string          `json:"plugin"`
	Servers []mcpServerLine `json:"servers"`
}

type mcpServerLine struct {
	ID     string                `json:"id"`
	Name   string                `json:"name"`
	Type   agentplugin.Transport `json:"type"`
	Status mcprun.Status         `json:"status"`
	Reason string                `json:"reason,omitempty"`
	Stderr string                `json:"stderr,omitempty"`
	Tools  []string              `json:"tools"`

	// invalid marks a server that is not ready for a reason other than
	// the transports the user chose: it makes the command exit 1.
	invalid bool
}

// mcpCallReport is the --json document of "plugkit mcp call".
type mcpCallReport struct {
	Server            string        `json:"server"`
	Tool              string        `json:"tool"`
	IsError           bool          `json:"isError"`
	StructuredContent any           `json:"structuredContent"`
	Content           []mcp.Content `json:"content"`
}

// NewCmdMCP builds plugkit mcp, which runs with fac.
func NewCmdMCP(fac *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Run a plugin's MCP servers: list their tools, call one",
		Long: `The mcp commands start a plugin's MCP servers exactly as a conformant client
would (spec sections 7.2 and 9: placeholders expanded once, commands and cwd
contained in the plugin root, a private PLUGIN_DATA directory, configured
headers only to the configured origin), do one thing, and stop every server
and every process it started.

PLUGIN is anything validate takes (a directory, a .tar.gz archive, an
oci:// or oci-layout: reference; archives and artifacts are unpacked to a
private temporary directory for the run), or the name of a plugin installed
in the home (--home), which runs from its store tree with its own
PLUGIN_DATA after its files are checked against what was installed.

Stdio servers get a small safe environment: PATH, HOME, USER, LOGNAME,
SHELL, TERM, LANG, LC_* and TMPDIR from plugkit's own, their configured env,
PLUGIN_ROOT and PLUGIN_DATA. Nothing else, tokens and cloud credentials
included, reaches them unless --inherit-env names it. Credentials a server
needs belong in the host configuration file (--config), never in the plugin.

PLUGIN_DATA of an ad-hoc run is HOME/adhoc/NAME-HEX, HEX from the sha256 of
the plugin's resolved path, so that no other directory declaring the same
name shares it; --plugin-data chooses another.`,
	}
	cmd.AddCommand(newMCPListCmd(fac), newMCPCallCmd(fac))
	return cmd
}

// mcpFlags are the flags both subcommands share.
type mcpFlags struct {
	run        runFlags
	pluginData string
	asJSON     bool
}

func (f *mcpFlags) register(fac *factory.Factory, cmd *cobra.Command) {
	f.run.register(fac, cmd.Flags())
	cmd.Flags().StringVar(&f.pluginData, "plugin-data", "", "PLUGIN_DATA directory for this run (default: HOME/adhoc/NAME-HEX, one per plugin location)")
	// The old name of --plugin-data, which read like serve's --data.
	cmd.Flags().StringVar(&f.pluginData, "data-dir", "", "")
	cmd.Flags().MarkHidden("data-dir")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print one JSON document")
}

// open loads the plugin at path and makes the one-plugin host of a run;
// done closes it and removes what the run unpacked.
func (f *mcpFlags) open(ctx context.Context, path string) (*host.Host, *agentplugin.Package, func(), error) {
	opts, ts, err := f.run.hostOptions(nil)
	if err != nil {
		return nil, nil, nil, err
	}
	home, err := f.run.openHome()
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := openRunnable(ctx, path, home, agentplugin.Options{Transports: ts})
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := r.plugin(home, f.pluginData)
	var h *host.Host
	if err == nil {
		h, err = host.New([]host.Plugin{p}, opts)
	}
	if err != nil {
		r.cleanup()
		return nil, nil, nil, err
	}
	return h, r.pkg, func() { h.Close(); r.cleanup() }, nil
}

func newMCPListCmd(fac *factory.Factory) *cobra.Command {
	var flags mcpFlags
	cmd := &cobra.Command{
		Use:   "list PLUGIN",
		Short: "Start every MCP server of a plugin and list its tools",
		Long: `List starts every MCP server of PLUGIN concurrently, lists the tools of each
one that is ready, and closes everything.

Each server is ready, skipped (an invalid entry or an unsupported transport,
with the reason) or failed (it could not start, connect or complete the MCP
handshake, or did not answer tools/list within --timeout, or listed more
than 100 pages or 10,000 tools; with the reason and the end of its stderr).

Exit status: 0 when every server is ready or skipped only for a transport
left out by --transports, 1 when the plugin is rejected or a server is
invalid or failed, 2 for usage errors or an unreadable PLUGIN, 130 when
interrupted (then nothing is reported about the servers).`,
		Example: `  plugkit mcp list ./my-plugin
  plugkit mcp list --json --plugin-data /tmp/plugin-data ./my-plugin
  plugkit mcp list --transports stdio --timeout 5s my-plugin-1.0.0.tar.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			report, err := runMCPList(cmd.Context(), &flags, args[0])
			if err := cmd.Context().Err(); err != nil {
				// Interrupted: servers cut short are not "failed".
				return err
			}
			if err != nil {
				return command.Explain(cmd, err)
			}
			if err := command.Output(cmd, flags.asJSON, report, func(w io.Writer) { printMCPList(w, report) }); err != nil {
				return err
			}
			for _, s := range report.Servers {
				if s.invalid {
					return command.Failed(nil)
				}
			}
			return nil
		},
	}
	flags.register(fac, cmd)
	return cmd
}

// mcpCallOptions are the flags of plugkit mcp call.
type mcpCallOptions struct {
	flags   mcpFlags
	rawArgs string
}

func newMCPCallCmd(fac *factory.Factory) *cobra.Command {
	opts := &mcpCallOptions{}
	cmd := &cobra.Command{
		Use:   "call PLUGIN SERVER TOOL",
		Short: "Start one MCP server of a plugin and call one of its tools",
		Long: `Call starts the server SERVER (its name in mcp.json, or its ID PLUGIN/SERVER)
of PLUGIN, calls TOOL with the JSON object given by --args (default {};
arguments are always sent as an object), prints the result and closes the
server. The call, like the handshake, must finish within --timeout.

Exit status: 0 when the tool succeeded, 1 when the plugin is rejected, the
server is invalid or fails, the call fails or times out, or the tool reports
an error, 2 for usage errors (--args not a JSON object, an unknown SERVER)
or an unreadable PLUGIN, 130 when interrupted.`,
		Example: `  plugkit mcp call ./my-plugin validator check
  plugkit mcp call --args '{"file": "a b.txt"}' --json ./my-plugin my-plugin/validator check
  plugkit mcp call --timeout 2m --inherit-env AWS_PROFILE ./my-plugin s3 list_buckets`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			arguments, err := parseToolArgs(opts.rawArgs)
			if err != nil {
				return command.Usage(err)
			}
			report, err := runMCPCall(cmd.Context(), &opts.flags, args[0], args[1], args[2], arguments)
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			if err != nil {
				return command.Explain(cmd, err)
			}
			if err := command.Output(cmd, opts.flags.asJSON, report, func(w io.Writer) { printMCPCall(w, report) }); err != nil {
				return err
			}
			if report.IsError {
				return command.Failed(fmt.Errorf("tool %s of %s reported an error", terminal.Safe(report.Tool), report.Server))
			}
			return nil
		},
	}
	opts.flags.register(fac, cmd)
	cmd.Flags().StringVar(&opts.rawArgs, "args", "{}", "tool arguments, a JSON object")
	return cmd
}

// parseToolArgs accepts exactly one JSON object and returns it unchanged,
// so numbers and key order reach the server as the user wrote them.
func parseToolArgs(s string) (json.RawMessage, error) {
	raw := bytes.TrimSpace([]byte(s))
	dec := json.NewDecoder(bytes.NewReader(raw))
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || dec.Decode(&obj) != nil || dec.More() {
		return nil, errors.New("--args must be one JSON object, such as '{\"path\": \"a.txt\"}'")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("--args must be one JSON object, with nothing after it")
	}
	return raw, nil
}

func runMCPList(ctx context.Context, flags *mcpFlags, path string) (*mcpListReport, error) {
	h, pkg, done, err := flags.open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer done()
	report := &mcpListReport{Plugin: pkg.Name, Servers: loaderSkipped(pkg)}
	for _, s := range h.Start(ctx) {
		line := serverLine(s.ServerStatus)
		if s.Status == mcprun.StatusReady {
			tools, err := h.ServerTools(ctx, s.ID)
			if err != nil && ctx.Err() == nil {
				line.Status, line.Reason, line.invalid = mcprun.StatusFailed, err.Error(), true
			}
			for _, t := range tools {
				line.Tools = append(line.Tools, t.Def.Name)
			}
			slices.Sort(line.Tools)
		}
		report.Servers = append(report.Servers, line)
	}
	if err := ctx.Err(); err != nil {
		// Interrupted: what was cut short is not the servers' failure.
		return nil, fmt.Errorf("mcp list: %w", err)
	}
	slices.SortFunc(report.Servers, func(a, b mcpServerLine) int { return strings.Compare(a.Name, b.Name) })
	return report, nil
}

func serverLine(s mcprun.ServerStatus) mcpServerLine {
	return mcpServerLine{ID: s.ID, Name: s.Name, Type: s.Type, Status: s.Status, Reason: s.Reason,
		Stderr: s.Stderr, Tools: []string{},
		invalid: s.Status != mcprun.StatusReady && !errors.Is(s.Err, mcprun.ErrUnsupportedTransport)}
}

// loaderSkipped turns the loader's diagnostics about single server entries
// into skipped lines: the loader drops such entries from Package.Servers
// (spec section 7.2.2), but a user listing servers wants to see them.
func loaderSkipped(pkg *agentplugin.Package) []mcpServerLine {
	lines := []mcpServerLine{}
	seen := map[string]bool{}
	for _, d := range pkg.Diagnostics {
		name, ok := serverOfPointer(d)
		if !ok || seen[name] {
			continue
		}
		unsupported := d.Code == agentplugin.CodeTransportUnsupported
		if d.Severity != agentplugin.Error && !unsupported {
			continue
		}
		seen[name] = true
		lines = append(lines, mcpServerLine{ID: pkg.Name + "/" + name, Name: name, Status: mcprun.StatusSkipped,
			Reason: d.Message, Tools: []string{}, invalid: !unsupported})
	}
	return lines
}

// serverOfPointer returns the server name a diagnostic about mcp.json
// points into ("/mcpServers/NAME/..."), unescaping RFC 6901.
func serverOfPointer(d agentplugin.Diagnostic) (string, bool) {
	rest, ok := strings.CutPrefix(d.Pointer, "/mcpServers/")
	if d.Path != "mcp.json" || !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, "/")
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(name), true
}

func printMCPList(w io.Writer, r *mcpListReport) {
	fmt.Fprintf(w, "plugin %s\n", terminal.Safe(r.Plugin))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range r.Servers {
		var detail string
		if s.Status == mcprun.StatusReady {
			safe := make([]string, len(s.Tools))
			for i, t := range s.Tools {
				safe[i] = terminal.Safe(t)
			}
			detail = strings.Join(safe, ", ")
			if len(safe) == 0 {
				detail = "no tools"
			}
		} else {
			detail = terminal.Safe(s.Reason)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", terminal.Safe(s.Name), terminal.Safe(string(s.Type)), s.Status, detail)
	}
	tw.Flush()
	for _, s := range r.Servers {
		if s.Stderr != "" {
			fmt.Fprintf(w, "\nstderr of %s (last lines):\n%s", terminal.Safe(s.ID), indentSafe(s.Stderr))
		}
	}
}

// safeLines makes each line of untrusted text safe for a terminal,
// keeping the line breaks that terminal.Safe would escape.
func safeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = terminal.Safe(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

// indentSafe indents untrusted text made safe, ending it with a newline.
func indentSafe(s string) string {
	return "  " + strings.ReplaceAll(safeLines(strings.TrimRight(s, "\n")), "\n", "\n  ") + "\n"
}

func runMCPCall(ctx context.Context, flags *mcpFlags, path, server, tool string, arguments json.RawMessage) (*mcpCallReport, error) {
	h, pkg, done, err := flags.open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer done()
	i := slices.IndexFunc(pkg.Servers, func(s agentplugin.Server) bool { return s.Name == server || s.ID == server })
	if i < 0 {
		for _, l := range loaderSkipped(pkg) {
			if l.Name == server || l.ID == server {
				return nil, command.Failed(fmt.Errorf("server %s is skipped: %s", terminal.Safe(l.ID), terminal.Safe(l.Reason)))
			}
		}
		return nil, command.Usage(fmt.Errorf("plugin %s has no MCP server %q", terminal.Safe(pkg.Name), terminal.Safe(server)))
	}
	id := pkg.Servers[i].ID
	res, err := h.CallServerTool(ctx, id, tool, arguments)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		msg := terminal.Safe(err.Error())
		for _, s := range h.Servers() {
			if s.ID == id && s.Stderr != "" {
				msg += "\nstderr (last lines):\n" + strings.TrimRight(indentSafe(s.Stderr), "\n")
			}
		}
		return nil, command.Failed(errors.New(msg))
	}
	content := res.Content
	if content == nil {
		content = []mcp.Content{}
	}
	return &mcpCallReport{Server: id, Tool: tool, IsError: res.IsError, StructuredContent: res.StructuredContent, Content: content}, nil
}

func printMCPCall(w io.Writer, r *mcpCallReport) {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			fmt.Fprintln(w, safeLines(t.Text))
			continue
		}
		b, _ := json.Marshal(c)
		fmt.Fprintln(w, terminal.Safe(string(b)))
	}
	if len(r.Content) == 0 && r.StructuredContent != nil {
		b, _ := json.Marshal(r.StructuredContent)
		fmt.Fprintln(w, terminal.Safe(string(b)))
	}
}
