// Package command is plugkit's command tree: the root command and how one
// command line runs on it, the exit codes, the one table of --json error
// codes and the failure document, and the output every verb shares. The
// verbs live in packages of their own beside it (package root lists them);
// each takes the run's factory.Factory.
//
// Exit codes: 0 success, 1 the input is invalid or the operation failed,
// 2 usage or I/O error, 130 interrupted. With --json, every verb prints
// exactly one JSON document on stdout, on failure too (docs/cli.md).
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
)

// Verbs are constructors of plugkit's subcommands, by the name of the
// command each builds; each takes the Factory of the run.
type Verbs map[string]func(*factory.Factory) *cobra.Command

// Program is plugkit's command line: its verbs and what --version prints.
type Program struct {
	Verbs Verbs
	// VersionText is the text of --version, called only when it is given:
	// reading the build information costs every other run for nothing.
	VersionText func() string
}

// NewRootCmd builds a fresh command tree, so that tests can run plugkit
// in-process any number of times.
func (p Program) NewRootCmd(f *factory.Factory) *cobra.Command {
	root := p.newRoot(f)
	for _, v := range p.Verbs {
		root.AddCommand(v(f))
	}
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	refuseUnknownSubcommands(root)
	return root
}

// Tree is the command tree that runs args: when args start with the
// name of a verb, the root with that verb alone (constructing every verb,
// and sorting them, costs each start for nothing); otherwise the whole
// tree, for help, completion and suggestions. TestVerbAloneAsInTree holds
// the two to the same output.
func (p Program) Tree(f *factory.Factory, args []string) *cobra.Command {
	if len(args) == 0 || p.Verbs[args[0]] == nil {
		return p.NewRootCmd(f)
	}
	root := p.newRoot(f)
	root.CompletionOptions.DisableDefaultCmd = true
	verb := p.Verbs[args[0]](f)
	root.AddCommand(verb)
	refuseUnknownSubcommands(verb)
	return root
}

// newRoot is the root command, without its verbs, on the streams of f.
func (p Program) newRoot(f *factory.Factory) *cobra.Command {
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
	cobra.AddTemplateFunc("plugkitVersionText", p.VersionText)
	root.SetVersionTemplate("{{plugkitVersionText}}")
	if f.In != nil {
		root.SetIn(f.In)
	}
	root.SetOut(f.Out)
	root.SetErr(f.Err)
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

// Run executes plugkit with args on the streams of a quiet process
// (factory.Quiet) and returns the exit code; tests run plugkit in process
// with it.
func (p Program) Run(args []string, stdout, stderr io.Writer) int {
	return p.RunContext(context.Background(), factory.Quiet(stdout, stderr), args)
}

// RunContext executes plugkit on the streams of f until ctx is
// cancelled, which is how SIGINT and SIGTERM reach a running verb: a verb
// that stops because of it exits 130 (one that had already finished its
// work, or ends on a signal by design as serve and gateway do, exits as it
// would have).
func (p Program) RunContext(ctx context.Context, f *factory.Factory, args []string) int {
	return Execute(ctx, p.Tree(f, args), args)
}

// Execute runs args on root, a tree of Program (NewRootCmd or Tree), and
// returns the exit code: with --json, a verb that failed before printing
// its document gets the failure document; the error goes to stderr.
func Execute(ctx context.Context, root *cobra.Command, args []string) int {
	out := &watchWriter{w: root.OutOrStdout()}
	root.SetOut(out)
	stderr := root.ErrOrStderr()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitCode(err)
	if ctx.Err() != nil {
		code = ExitInterrupted
		if errors.Is(err, context.Canceled) {
			err = &SummaryError{Msg: "interrupted", Err: err}
		}
	}
	if JSONRequested(cmd) && !out.wrote {
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

// JSONRequested reports whether the command that ran prints JSON: --json,
// or --format json where a verb offers formats.
func JSONRequested(cmd *cobra.Command) bool {
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

// Join is the verbs of every group, which must not share a name.
func Join(groups ...Verbs) Verbs {
	all := Verbs{}
	for _, g := range groups {
		for name, v := range g {
			if all[name] != nil {
				panic("plugkit: two groups have a verb " + name)
			}
			all[name] = v
		}
	}
	return all
}
