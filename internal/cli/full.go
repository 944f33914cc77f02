package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"
)

// fullVerbs are the verbs that only plugkit-full has, because their code
// links the heavy packages (the registry server and its databases,
// sigstore, the plugin home, MCP): Go runs every linked package's
// initialisers at every start, and those cost the light verbs two thirds
// of their start-up. The light plugkit lists them in its help and hands
// them to plugkit-full; a test compares both binaries' help, so this table
// cannot drift from the verbs themselves.
var fullVerbs = []struct{ name, short string }{
	{"attest", "Attach a signed in-toto attestation (SLSA provenance, an SBOM, …) to a plugin"},
	{"check", "Re-hash installed trees against their file lists and the lock"},
	{"gateway", "Serve installed plugins to any MCP client as one MCP server"},
	{"install", "Install plugins into the home, with consent to what they may run"},
	{"key", "Manage signing keys"},
	{"list", "List the plugins installed in the home"},
	{"mcp", "Run a plugin's MCP servers: list their tools, call one"},
	{"policy", "Set or remove the trust policy of the plugin home, with consent"},
	{"remove", "Remove installed plugins (their data stays unless --purge)"},
	{"serve", "Run a plugin registry (Backplane distribution protocol)"},
	{"sign", "Sign a plugin in an OCI registry or layout, or any file, as cosign does"},
	{"sync", "Make the home match its lock file exactly"},
	{"update", "Update installed plugins from their sources, with consent to new launch surface"},
	{"verify", "Check a plugin's signatures, offline, against keys, identities or a trust policy"},
}

// fullName is the name of plugkit-full's executable, which the light
// plugkit looks for beside its own.
const fullName = "plugkit-full"

// fullAnnotation marks the stub commands of the light plugkit.
const fullAnnotation = "plugkit-full"

// addFullStubs gives root a stub for every verb of plugkit-full that was
// not registered (none in plugkit-full itself): the stub shows in the
// help with the verb's Short line and runs plugkit-full with the
// arguments untouched (it parses no flags).
//
// The names registered are read once, before any stub is added: cobra
// sorts the commands again at every Commands() after an AddCommand, and
// asking it for each stub cost 7% of the instructions of plugkit version.
func addFullStubs(root *cobra.Command) {
	registered := make(map[string]bool, len(root.Commands()))
	for _, c := range root.Commands() {
		registered[c.Name()] = true
	}
	for _, v := range fullVerbs {
		if registered[v.name] {
			continue
		}
		root.AddCommand(&cobra.Command{
			Use:                v.name,
			Short:              v.short,
			Annotations:        map[string]string{fullAnnotation: "true"},
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				return runFull(cmd.Name(), append([]string{cmd.Name()}, args...))
			},
		})
	}
}

// fullVerbOf returns the verb of plugkit-full that args ask about through
// help or shell completion ("help install", "__complete key ..."), or ""
// for any other command line. Those two parse their arguments themselves
// and would answer from the stub, so they are handed over before cobra
// sees them; a plain "install ..." reaches the stub, which hands it over
// unparsed.
func fullVerbOf(root *cobra.Command, args []string) string {
	if len(args) < 2 {
		return ""
	}
	switch args[0] {
	case "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
	default:
		return ""
	}
	for _, c := range root.Commands() {
		if c.Name() == args[1] && c.Annotations[fullAnnotation] != "" {
			return c.Name()
		}
	}
	return ""
}

// runFull runs plugkit-full, from the directory of the running
// executable, with args; on unix it replaces this process (same pid,
// stdio, signals and exit status) and returns only on failure. It never
// looks in PATH: a plugkit-full of another version could parse the
// arguments, or write a home, differently.
func runFull(verb string, args []string) error {
	path, err := fullPath()
	if err != nil {
		return WithCode(CodeIO, Usage(fmt.Errorf("%q is a verb of %s, which was not found beside plugkit (looked for %s): install both with go install github.com/plugkit/plugkit/cmd/...@latest, or from a clone run go run ./cmd/plugkit-full %s",
			verb, fullName, path, verb)))
	}
	return execFull(path, args)
}

// fullPath is where plugkit-full must be: beside the running executable,
// links resolved (a symlink to plugkit in ~/bin finds the plugkit-full of
// the same install). The error says it is missing or not a file; the path
// is returned with it for the message.
func fullPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return fullName, err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return fullName, err
	}
	path := filepath.Join(filepath.Dir(exe), fullName)
	if runtime.GOOS == "windows" {
		path += ".exe"
	}
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a file", path)
	}
	return path, err
}

// fullJSONRequested reports whether a command line that plugkit could not
// hand to plugkit-full asked for JSON: the stub parses no flags, so the
// arguments are read for --json or --format json. A failure that plugkit-full
// reported itself (a child's exit status) owes no document.
func fullJSONRequested(cmd *cobra.Command, err error, args []string) bool {
	if isSilent(err) || (cmd != cmd.Root() && cmd.Annotations[fullAnnotation] == "") {
		return false
	}
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--json", a == "--json=true", a == "--format=json",
			a == "--format" && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}
