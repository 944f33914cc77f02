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

// verbs are the constructors of plugkit's subcommands; each verb's file
// appends its own in an init function, so verbs stay independent.
var verbs []func() *cobra.Command

// namedVerbs are this package's verb constructors by the name of the
// command each builds: a command line that starts with one of these names
// builds that verb alone (see newTree).
var namedVerbs = map[string]func() *cobra.Command{}

// addVerb registers a verb of this package under its command's name.
func addVerb(name string, verb func() *cobra.Command) {
	namedVerbs[name] = verb
	verbs = append(verbs, verb)
}

// Register adds the constructor of a verb that lives outside this package
// (the verbs of plugkit-full); its file calls it in an init function, as
// this package's verbs call addVerb.
func Register(verb func() *cobra.Command) { verbs = append(verbs, verb) }

// NewRootCmd builds a fresh command tree, so that tests can run plugkit
// in-process any number of times.
func NewRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := newRoot(stdout, stderr)
	for _, v := range verbs {
		root.AddCommand(v())
	}
	addFullStubs(root)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	refuseUnknownSubcommands(root)
	return root
}

// newTree is the command tree that runs args: when args start with the
// name of one of this package's verbs, the root with that verb alone
// (constructing the other verbs and the stubs, and sorting them, was 6%
// of the instructions of plugkit version); otherwise the whole tree, for
// help, completion, suggestions and plugkit-full's verbs.
// TestVerbAloneAsInTree holds the two to the same output.
func newTree(stdout, stderr io.Writer, args []string) *cobra.Command {
	if len(args) == 0 || namedVerbs[args[0]] == nil {
		return NewRootCmd(stdout, stderr)
	}
	root := newRoot(stdout, stderr)
	root.CompletionOptions.DisableDefaultCmd = true
	verb := namedVerbs[args[0]]()
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
func Run(args []string, stdout, stderr io.Writer) int {
	return RunContext(context.Background(), args, stdout, stderr)
}

// RunContext executes plugkit until ctx is cancelled, which is how SIGINT
// and SIGTERM reach a running verb: a verb that stops because of it exits
// 130 (one that had already finished its work, or ends on a signal by
// design as serve does, exits as it would have).
func RunContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &watchWriter{w: stdout}
	root := newTree(out, stderr, args)
	var cmd *cobra.Command
	var err error
	if verb := fullVerbOf(root, args); verb != "" {
		cmd, err = root, runFull(verb, args)
	} else {
		root.SetArgs(args)
		cmd, err = root.ExecuteContextC(ctx)
	}
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
	if (jsonRequested(cmd) || fullJSONRequested(cmd, err, args)) && !out.wrote {
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
// tail) span lines, which stay lines.
func printError(w io.Writer, err error) {
	prefix := "plugkit: "
	for line := range strings.SplitSeq(err.Error(), "\n") {
		Printf(w, "%s%s\n", prefix, line)
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
// code. A command's main calls it after gcinit.Restore.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks the verb to stop cleanly; restoring the
		// default action lets a second one end plugkit at once, should the
		// verb be slow to notice.
		<-ctx.Done()
		stop()
	}()
	code := RunContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
