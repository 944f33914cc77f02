// Package cli is plugkit's command line: the root command, the verbs that
// register themselves with it, their output, errors and exit codes.
//
// Exit codes: 0 success, 1 the input is invalid or the operation failed,
// 2 usage or I/O error, 130 interrupted. With --json, every verb prints
// exactly one JSON document on stdout, on failure too (docs/cli.md).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Verbs are constructors of plugkit's subcommands, by the name of the
// command each builds.
type Verbs map[string]func() *cobra.Command

// ownVerbs are the verbs of this package: those that read, build and move
// plugins and talk to registries.
var ownVerbs = Verbs{
	"catalog":       newCatalogCmd,
	"channel":       newChannelCmd,
	"copy":          newCopyCmd,
	"digest":        newDigestCmd,
	"export":        newExportCmd,
	"fetch":         newFetchCmd,
	"init":          newInitCmd,
	"inspect":       newInspectCmd,
	"installations": newInstallationsCmd,
	"login":         newLoginCmd,
	"logout":        newLogoutCmd,
	"owners":        newOwnersCmd,
	"pack":          newPackCmd,
	"publish":       newPublishCmd,
	"pull":          newPullCmd,
	"push":          newPushCmd,
	"resolve":       newResolveCmd,
	"schema":        newSchemaCmd,
	"unpack":        newUnpackCmd,
	"validate":      newValidateCmd,
	"version":       newVersionCmd,
	"yank":          newYankCmd,
}

// Program is plugkit's command line: this package's verbs and Verbs, the
// verbs of the plugkit command itself (the plugin home, signing, MCP, the
// registry server). Its zero value has this package's verbs only.
type Program struct {
	Verbs Verbs
}

// verb is the constructor of the verb called name, nil when there is none.
func (p Program) verb(name string) func() *cobra.Command {
	if v := p.Verbs[name]; v != nil {
		return v
	}
	return ownVerbs[name]
}

// NewRootCmd builds a fresh command tree, so that tests can run plugkit
// in-process any number of times.
func (p Program) NewRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := newRoot(stdout, stderr)
	for _, verbs := range []Verbs{ownVerbs, p.Verbs} {
		for _, v := range verbs {
			root.AddCommand(v())
		}
	}
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	refuseUnknownSubcommands(root)
	return root
}

// newTree is the command tree that runs args: when args start with the
// name of a verb, the root with that verb alone (constructing every verb,
// and sorting them, costs each start for nothing); otherwise the whole
// tree, for help, completion and suggestions. TestVerbAloneAsInTree holds
// the two to the same output.
func (p Program) newTree(stdout, stderr io.Writer, args []string) *cobra.Command {
	if len(args) == 0 || p.verb(args[0]) == nil {
		return p.NewRootCmd(stdout, stderr)
	}
	root := newRoot(stdout, stderr)
	root.CompletionOptions.DisableDefaultCmd = true
	verb := p.verb(args[0])()
	root.AddCommand(verb)
	refuseUnknownSubcommands(verb)
	return root
}

// newRoot is the root command, without its verbs.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "plugkit",
		Short:         "Validate, pack, distribute and run Agent Plugins 1.0.0",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       "-", // enables --version; the template prints the real text
	}
	// The build information is read only when --version is given: every
	// verb parsed it for some 300 modules (1% of the CPU of unpacking a
	// typical plugin).
	cobra.AddTemplateFunc("plugkitVersionText", func() string { return buildVersion().text() })
	root.SetVersionTemplate("{{plugkitVersionText}}")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return Usage(err) })
	return root
}

// refuseUnknownSubcommands makes every command that only groups others
// (mcp, completion, help) exit 2 on an argument that names no subcommand;
// cobra would print help and exit 0, which hides a typo from scripts.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	switch {
	case c.Name() == "help":
		c.RunE = func(cmd *cobra.Command, args []string) error {
			target, rest, err := cmd.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return Usagef("unknown help topic %q (see plugkit help)", args)
			}
			return target.Help()
		}
		c.Run = nil
	case c.HasSubCommands() && c.Run == nil && c.RunE == nil && c.HasParent():
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return Usagef("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	}
}

// Run executes plugkit with args and returns the exit code; tests run
// plugkit in process with it.
func (p Program) Run(args []string, stdout, stderr io.Writer) int {
	return p.RunContext(context.Background(), args, stdout, stderr)
}

// RunContext executes plugkit until ctx is cancelled, which is how SIGINT
// and SIGTERM reach a running verb: a verb that stops because of it exits
// 130 (one that had already finished its work, or ends on a signal by
// design as serve and gateway do, exits as it would have).
func (p Program) RunContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &watchWriter{w: stdout}
	root := p.newTree(out, stderr, args)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitCode(err)
	if ctx.Err() != nil {
		code = ExitInterrupted
		if errors.Is(err, context.Canceled) {
			err = &summaryError{msg: "interrupted", err: err}
		}
	}
	if jsonRequested(cmd) && !out.wrote {
		// A --json verb that failed before printing its document still
		// owes the caller one.
		if werr := writeErrorDoc(out, err, code); werr != nil {
			fmt.Fprintln(stderr, "plugkit:", werr)
		}
	}
	if !isSilent(err) {
		printError(stderr, err)
	}
	return code
}

// printError prints an error message on stderr, one safe line at a time:
// messages quote paths, names and server text, and some (a server's stderr
// tail) span lines, which stay lines. The tabs that indent a line (cobra's
// "Did you mean this?" list) are layout, kept as tabs; every other one is
// escaped.
func printError(w io.Writer, err error) {
	prefix := "plugkit: "
	for line := range strings.SplitSeq(strings.TrimRight(err.Error(), "\n"), "\n") {
		text := strings.TrimLeft(line, "\t")
		io.WriteString(w, prefix+line[:len(line)-len(text)])
		Printf(w, "%s\n", text)
		prefix = ""
	}
}

// jsonRequested reports whether the command that ran prints JSON: --json,
// or --format json where a verb offers formats.
func jsonRequested(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	if f := cmd.Flags().Lookup("json"); f != nil && f.Value.String() == "true" {
		return true
	}
	f := cmd.Flags().Lookup("format")
	return f != nil && f.Value.String() == "json"
}

// watchWriter remembers whether anything was written through it.
type watchWriter struct {
	w     io.Writer
	wrote bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.wrote = w.wrote || len(p) > 0
	return w.w.Write(p)
}

// Main runs plugkit with the process's arguments and exits with its exit
// code.
func (p Program) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks the verb to stop cleanly; restoring the
		// default action lets a second one end plugkit at once, should the
		// verb be slow to notice.
		<-ctx.Done()
		stop()
	}()
	code := p.RunContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
