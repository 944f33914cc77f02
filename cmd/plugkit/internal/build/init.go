package build

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/snapshot"
)

// The transports plugkit init can configure.
const (
	initMCPStdio = "stdio"
	initMCPHTTP  = "http"
)

// initResult is init's --json document.
type initResult struct {
	Path        string                   `json:"path"`
	Name        string                   `json:"name"`
	Files       []string                 `json:"files"`
	Diagnostics []agentplugin.Diagnostic `json:"diagnostics"`
}

// initOptions are the flags of plugkit init.
type initOptions struct {
	name      string
	skillName string
	mcpType   string
	asJSON    bool
}

// NewCmdInit builds plugkit init, which runs with fac.
func NewCmdInit(fac *factory.Factory) *cobra.Command {
	opts := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Create a new plugin: manifest, one skill, optionally an MCP server",
		Long: `Init writes a minimal valid Agent Plugins 1.0.0 plugin into DIR (default: the
current directory): plugin.json with the 1.0.0 $schema, version 0.1.0 and a
description to fill in, one skill under skills/, a README.md, and with --mcp
an mcp.json with one server:

  --mcp stdio  a server run from ./bin/server, a POSIX shell placeholder that
               answers the MCP handshake and lists no tools, so that
               "plugkit mcp list DIR" works at once; replace it
  --mcp http   a streamable-http server at http://127.0.0.1:8080/mcp, the
               address of the server you will run

The name defaults to DIR's base name and the skill's to the plugin's name
(when that is a valid skill name; otherwise "hello"). Both are checked by
the loader's own rules before anything is written, and the new plugin
validates with no diagnostic (for ASCII names).

DIR must not exist or be empty: init never overwrites anything. On any
failure nothing is left behind.

Exit status: 0 written, 1 a name is invalid, 2 usage or I/O error (DIR not
empty included).`,
		Example: `  plugkit init my-plugin
  plugkit init --name acme.tools --skill summarize --mcp stdio ./acme
  mkdir lint3r && cd lint3r && plugkit init`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if strings.ContainsAny(opts.skillName, `/\`) || opts.skillName == "." || opts.skillName == ".." {
				return command.Usagef("--skill %q: a skill name is one directory name", opts.skillName)
			}
			if opts.mcpType != "" && opts.mcpType != initMCPStdio && opts.mcpType != initMCPHTTP {
				return command.Usagef("unknown --mcp %q (stdio or http)", opts.mcpType)
			}
			return runInit(cmd, dir, opts.name, opts.skillName, opts.mcpType, opts.asJSON)
		},
	}
	cmd.Flags().StringVar(&opts.name, "name", "", "plugin name (default: DIR's base name)")
	cmd.Flags().StringVar(&opts.skillName, "skill", "", "name of the first skill (default: the plugin's name, or hello)")
	cmd.Flags().StringVar(&opts.mcpType, "mcp", "", "add an MCP server: stdio or http")
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}

func runInit(cmd *cobra.Command, dir, name, skillName, mcpType string, asJSON bool) error {
	// init writes into an empty dir in place, so "." is fine here: the
	// absolute path passes CheckNewDir's rule against it, which is for
	// writers that replace dir by a rename.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return command.Usage(err)
	}
	if err := snapshot.CheckNewDir(abs); err != nil {
		return command.Usage(fmt.Errorf("%w: plugkit init never overwrites anything; choose a new or empty directory", err))
	}
	if name == "" {
		name = filepath.Base(abs)
	}
	files, err := scaffold(name, skillName, mcpType)
	if err != nil {
		return err
	}
	modes := map[string]fs.FileMode{}
	if _, ok := files["bin/server"]; ok {
		modes["bin/server"] = 0o755
	}
	snap, err := snapshot.New(files, modes)
	if err != nil {
		return command.Failed(err)
	}
	// The loader judges the names, so init accepts exactly what loads.
	pkg, err := agentplugin.Load(snap, agentplugin.Options{})
	ds, _ := agentplugin.Diagnostics(err)
	if err == nil {
		ds = pkg.Diagnostics
	}
	if err != nil || agentplugin.HasErrors(ds) {
		err := command.Failed(errors.New("the new plugin would not validate (a name breaks the rules, see the diagnostics): nothing written"))
		return command.Explain(cmd, command.WithDiagnostics(command.WithCode(command.CodeInvalid, err), ds))
	}
	if err := cmd.Context().Err(); err != nil {
		return err // interrupted: write nothing
	}
	if err := writeNewTree(abs, snap); err != nil {
		return command.Usage(err)
	}
	res := initResult{Path: dir, Name: name, Files: snap.Paths(), Diagnostics: command.NonNil(pkg.Diagnostics)}
	return command.Output(cmd, asJSON, res, func(w io.Writer) {
		command.PrintDiagnostics(w, res.Diagnostics)
		command.Printf(w, "created plugin %s in %s:\n", name, dir)
		for _, f := range res.Files {
			command.Printf(w, "  %s\n", f)
		}
		command.Printf(w, "next: edit the descriptions, then run: plugkit validate %s\n", pathArg(dir))
	})
}

// pathArg spells a directory so that plugkit reads it as a path, never as
// a plugin name: "demo" becomes "./demo".
func pathArg(dir string) string {
	if filepath.IsAbs(dir) || dir == "." || dir == ".." || strings.HasPrefix(dir, "./") || strings.HasPrefix(dir, "../") {
		return dir
	}
	return "./" + dir
}

// scaffold returns the files of a new plugin. Values are JSON-encoded, so
// that any name reaches the loader as written and is judged there.
func scaffold(name, skillName, mcpType string) (map[string][]byte, error) {
	if skillName == "" {
		skillName = "hello"
		if skillNameOK(name) {
			skillName = name
		}
	}
	manifest := map[string]any{
		"$schema":     newestSchemas().Manifest,
		"name":        name,
		"version":     "0.1.0",
		"description": "What this plugin gives an agent, in one sentence.",
	}
	files := map[string][]byte{
		"plugin.json": indentJSON(manifest),
		"skills/" + skillName + "/SKILL.md": fmt.Appendf(nil, `---
name: %s
description: What this skill does and when an agent should use it, in one or two sentences.
---
# %s

Step-by-step instructions for the agent go here. Put long references in
files beside this one (references/, scripts/) and mention them here.
`, yamlScalar(skillName), skillName),
	}
	readme := fmt.Sprintf("# %s\n\nAn Agent Plugins 1.0.0 plugin.\n\n- `plugin.json`: the manifest\n- `skills/%s/SKILL.md`: a skill\n", name, skillName)
	if mcpType != "" {
		server := map[string]any{"type": "stdio", "command": "./bin/server"}
		if mcpType == initMCPHTTP {
			server = map[string]any{"type": "streamable-http", "url": "http://127.0.0.1:8080/mcp"}
		} else {
			files["bin/server"] = placeholderServer(name)
		}
		files["mcp.json"] = indentJSON(map[string]any{
			"$schema":    newestSchemas().MCP,
			"mcpServers": map[string]any{serverName(name): server},
		})
		readme += "- `mcp.json`: an MCP server\n"
		if mcpType == initMCPStdio {
			readme += "- `bin/server`: a placeholder MCP server (answers the handshake, lists no tools); replace it\n"
		}
	}
	files["README.md"] = []byte(readme + "\nCheck it with `plugkit validate .` and pack it with `plugkit pack .`.\n")
	return files, nil
}

// newestSchemas are the $schema identifiers of the newest supported
// specification version, from the loader's own table.
func newestSchemas() agentplugin.SchemaIDs {
	vs := agentplugin.SupportedVersions()
	ids, _ := agentplugin.Schemas(vs[len(vs)-1])
	return ids
}

// skillNameOK reports whether s is a valid ASCII skill name, so that the
// default skill name never adds a diagnostic.
func skillNameOK(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') })
}

// serverName is the plugin's name as a server name: any name without '/'
// is valid there, and a plugin name never holds one; "server" otherwise.
func serverName(name string) string {
	if name == "" || strings.Contains(name, "/") {
		return "server"
	}
	return name
}

// yamlScalar quotes s for YAML when it is not a plain lowercase name.
func yamlScalar(s string) string {
	if skillNameOK(s) {
		return s
	}
	b, _ := json.Marshal(s) // a JSON string is a YAML double-quoted scalar
	return string(b)
}

func indentJSON(v any) []byte {
	var b bytes.Buffer
	command.WriteJSON(&b, v)
	return b.Bytes()
}

// placeholderServer is a POSIX shell MCP server on stdio that answers
// initialize (echoing the client's protocol version), ping and tools/list
// (no tools), so a new plugin runs before its real server exists.
func placeholderServer(name string) []byte {
	return fmt.Appendf(nil, `#!/bin/sh
# A placeholder MCP server (stdio transport) written by plugkit init. It
# answers the MCP handshake, ping and tools/list (no tools), so that
# "plugkit mcp list" works from the start. Replace it with your server, and
# keep "command" in mcp.json pointing at it.
field() { printf '%%s\n' "$line" | sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*\([^,}]*\).*/\1/p'; }
while IFS= read -r line || [ -n "$line" ]; do
	id=$(field id)
	[ -n "$id" ] || continue # a notification: nothing to answer
	case $(field method) in
	'"initialize"')
		version=$(field protocolVersion)
		result='{"protocolVersion":'"${version:-\"2025-06-18\"}"',"capabilities":{"tools":{}},"serverInfo":{"name":%s,"version":"0.1.0"}}' ;;
	'"ping"') result='{}' ;;
	'"tools/list"') result='{"tools":[]}' ;;
	*)
		printf '{"jsonrpc":"2.0","id":%%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id"
		continue ;;
	esac
	printf '{"jsonrpc":"2.0","id":%%s,"result":%%s}\n' "$id" "$result"
done
`, shellQuoteJSON(serverName(name)))
}

// shellQuoteJSON is s as a JSON string safe inside a single-quoted shell
// word.
func shellQuoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "'", `'"'"'`)
}

// writeNewTree writes snap into dir, which must not exist or be empty,
// creating every file exclusively (O_EXCL) so nothing is ever overwritten.
// On failure everything it created is removed again: no half-written
// plugin. An existing empty dir is written into in place, not replaced,
// so a shell sitting in it still sees the files.
func writeNewTree(dir string, snap *snapshot.Snapshot) (err error) {
	var created []string // in creation order; removed in reverse on failure
	defer func() {
		if err != nil {
			for _, p := range slices.Backward(created) {
				os.Remove(p)
			}
		}
	}()
	if err := os.Mkdir(dir, 0o755); err == nil {
		created = append(created, dir)
	} else if !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := snapshot.CheckNewDir(dir); err != nil {
		return err
	}
	for _, p := range snap.Paths() {
		full := filepath.Join(dir, filepath.FromSlash(p))
		for _, d := range parents(p) {
			fd := filepath.Join(dir, filepath.FromSlash(d))
			if err := os.Mkdir(fd, 0o755); err == nil {
				created = append(created, fd)
			} else if !errors.Is(err, fs.ErrExist) {
				return err
			}
		}
		f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, snap.Mode(p).Perm())
		if err != nil {
			return err
		}
		created = append(created, full)
		_, err = f.Write(snap.Files[p])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parents lists the directories above a package path, outermost first:
// "a/b/c" gives "a", "a/b".
func parents(p string) []string {
	var ds []string
	for i := range len(p) {
		if p[i] == '/' {
			ds = append(ds, p[:i])
		}
	}
	return ds
}
