package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/host"
	"github.com/plugkit/plugkit/mcprun"
	"github.com/plugkit/plugkit/snapshot"
)

func init() { verbs = append(verbs, newMCPCmd) }

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

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Run a plugin's MCP servers: list their tools, call one",
		Long: `The mcp commands start a plugin's MCP servers exactly as a conformant client
would (spec sections 7.2 and 9: placeholders expanded once, commands and cwd
contained in the plugin root, a private PLUGIN_DATA directory, configured
headers only to the configured origin), do one thing, and stop every server
and every process it started.`,
	}
	cmd.AddCommand(newMCPListCmd(), newMCPCallCmd())
	return cmd
}

// mcpFlags are the flags both subcommands share.
type mcpFlags struct {
	dataDir string
	asJSON  bool
}

func (f *mcpFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dataDir, "data-dir", "", "PLUGIN_DATA directory for this run (default: one per plugin under the user's data home)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print one JSON document")
}

func newMCPListCmd() *cobra.Command {
	var (
		flags      mcpFlags
		transports string
	)
	cmd := &cobra.Command{
		Use:   "list PATH",
		Short: "Start every MCP server of a plugin and list its tools",
		Long: `List starts every MCP server of the plugin directory PATH concurrently, lists
the tools of each one that is ready, and closes everything.

Each server is ready, skipped (an invalid entry or an unsupported transport,
with the reason) or failed (it could not start, connect or complete the MCP
handshake, with the reason and the end of its stderr).

Exit status: 0 when every server is ready or skipped only for a transport
left out by --transports, 1 when the plugin is rejected or a server is
invalid or failed, 2 for usage errors or an unreadable PATH.`,
		Example: `  plugkit mcp list ./my-plugin
  plugkit mcp list --json --data-dir /tmp/plugin-data ./my-plugin
  plugkit mcp list --transports stdio ./my-plugin`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ts, err := parseTransports(transports)
			if err != nil {
				return usage(err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			report, err := runMCPList(ctx, args[0], ts, flags.dataDir)
			if err != nil {
				return err
			}
			if err := output(cmd, flags.asJSON, report, func(w io.Writer) { printMCPList(w, report) }); err != nil {
				return err
			}
			for _, s := range report.Servers {
				if s.invalid {
					return &exitError{code: exitFailed}
				}
			}
			return nil
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVar(&transports, "transports", "", "MCP transports to use, comma-separated (default: stdio,streamable-http,sse)")
	return cmd
}

func newMCPCallCmd() *cobra.Command {
	var (
		flags   mcpFlags
		rawArgs string
	)
	cmd := &cobra.Command{
		Use:   "call PATH SERVER TOOL",
		Short: "Start one MCP server of a plugin and call one of its tools",
		Long: `Call starts the server SERVER (its name in mcp.json, or its ID PLUGIN/SERVER)
of the plugin directory PATH, calls TOOL with the JSON object given by --args
(default {}; arguments are always sent as an object), prints the result and
closes the server.

Exit status: 0 when the tool succeeded, 1 when the plugin is rejected, the
server is invalid or fails, or the tool reports an error, 2 for usage errors
(--args not a JSON object, an unknown SERVER) or an unreadable PATH.`,
		Example: `  plugkit mcp call ./my-plugin validator check
  plugkit mcp call --args '{"file": "a b.txt"}' --json ./my-plugin my-plugin/validator check`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			arguments, err := parseToolArgs(rawArgs)
			if err != nil {
				return usage(err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			report, err := runMCPCall(ctx, args[0], args[1], args[2], arguments, flags.dataDir)
			if err != nil {
				return err
			}
			if err := output(cmd, flags.asJSON, report, func(w io.Writer) { printMCPCall(w, report) }); err != nil {
				return err
			}
			if report.IsError {
				return failed(fmt.Errorf("tool %s of %s reported an error", report.Tool, report.Server))
			}
			return nil
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVar(&rawArgs, "args", "{}", "tool arguments, a JSON object")
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

// loadPlugin loads the plugin directory for running. A rejected plugin is
// exit 1; an unreadable path exit 2.
func loadPlugin(path string, ts []agentplugin.Transport) (*agentplugin.Package, error) {
	pkg, err := agentplugin.LoadDir(path, agentplugin.Options{Transports: ts}, snapshot.Options{})
	var rej *agentplugin.RejectedError
	switch {
	case errors.As(err, &rej), err != nil && isInputError(err):
		return nil, failed(err)
	case err != nil:
		return nil, usage(err)
	}
	return pkg, nil
}

// startOptions are the options of one CLI run: the directory as the
// installed root, an ad-hoc data directory unless one is given.
func startOptions(root, name, dataDir string) (mcprun.StartOptions, error) {
	if dataDir == "" {
		home, err := host.DefaultHome()
		if err == nil {
			dataDir, err = host.AdhocDataDir(home, name, root)
		}
		if err != nil {
			return mcprun.StartOptions{}, usage(err)
		}
	}
	return mcprun.StartOptions{PlanOptions: mcprun.PlanOptions{Root: root, DataDir: dataDir}, Subreaper: true}, nil
}

func runMCPList(ctx context.Context, path string, ts []agentplugin.Transport, dataDir string) (*mcpListReport, error) {
	pkg, err := loadPlugin(path, ts)
	if err != nil {
		return nil, err
	}
	opts, err := startOptions(path, pkg.Name, dataDir)
	if err != nil {
		return nil, err
	}
	opts.Transports = ts
	rt, err := mcprun.Start(ctx, pkg, opts)
	if err != nil {
		return nil, failed(err)
	}
	defer rt.Close()

	report := &mcpListReport{Plugin: pkg.Name, Servers: loaderSkipped(pkg)}
	for _, s := range rt.Servers() {
		line := serverLine(s)
		if sess := rt.Session(s.ID); sess != nil {
			if line.Tools, err = toolNames(ctx, sess); err != nil {
				line.Status, line.Reason, line.invalid = mcprun.StatusFailed, "tools/list: "+err.Error(), true
			}
		}
		report.Servers = append(report.Servers, line)
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

// toolNames lists every tool of a session, following pagination.
func toolNames(ctx context.Context, s *mcp.ClientSession) ([]string, error) {
	names := []string{}
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return names, err
		}
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names, nil
}

func printMCPList(w io.Writer, r *mcpListReport) {
	fmt.Fprintf(w, "plugin %s\n", r.Plugin)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range r.Servers {
		detail := strings.Join(s.Tools, ", ")
		if s.Status != mcprun.StatusReady {
			detail = s.Reason
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Name, s.Type, s.Status, detail)
	}
	tw.Flush()
	for _, s := range r.Servers {
		if s.Stderr != "" {
			fmt.Fprintf(w, "\nstderr of %s (last lines):\n%s", s.ID, indent(s.Stderr))
		}
	}
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}

func runMCPCall(ctx context.Context, path, server, tool string, arguments json.RawMessage, dataDir string) (*mcpCallReport, error) {
	pkg, err := loadPlugin(path, nil)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(pkg.Servers, func(s agentplugin.Server) bool { return s.Name == server || s.ID == server })
	if i < 0 {
		for _, l := range loaderSkipped(pkg) {
			if l.Name == server || l.ID == server {
				return nil, failed(fmt.Errorf("server %s is skipped: %s", l.ID, l.Reason))
			}
		}
		return nil, usage(fmt.Errorf("plugin %s has no MCP server %q", pkg.Name, server))
	}
	// Start only the server called: the others have no part in this run.
	one := *pkg
	one.Servers = pkg.Servers[i : i+1]
	opts, err := startOptions(path, pkg.Name, dataDir)
	if err != nil {
		return nil, err
	}
	rt, err := mcprun.Start(ctx, &one, opts)
	if err != nil {
		return nil, failed(err)
	}
	defer rt.Close()
	st := rt.Servers()[0]
	sess := rt.Session(st.ID)
	if sess == nil {
		msg := fmt.Sprintf("server %s %s: %s", st.ID, st.Status, st.Reason)
		if st.Stderr != "" {
			msg += "\nstderr (last lines):\n" + indent(st.Stderr)
		}
		return nil, failed(errors.New(strings.TrimRight(msg, "\n")))
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
	if err != nil {
		return nil, failed(fmt.Errorf("calling %s on %s: %w", tool, st.ID, err))
	}
	content := res.Content
	if content == nil {
		content = []mcp.Content{}
	}
	return &mcpCallReport{Server: st.ID, Tool: tool, IsError: res.IsError, StructuredContent: res.StructuredContent, Content: content}, nil
}

func printMCPCall(w io.Writer, r *mcpCallReport) {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			fmt.Fprintln(w, t.Text)
			continue
		}
		b, _ := json.Marshal(c)
		fmt.Fprintln(w, string(b))
	}
	if len(r.Content) == 0 && r.StructuredContent != nil {
		writeJSON(w, r.StructuredContent)
	}
}
