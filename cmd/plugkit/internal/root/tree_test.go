package root

import (
	"bytes"
	"context"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/spf13/cobra"
)

// TestVerbAloneAsInTree: a command line that starts with one of this
// package's verbs, built alone by newTree, prints what the whole tree
// prints, byte for byte, and exits the same: help, usage errors, unknown
// flags and subcommands, --json error documents. Each name builds the
// command of that name.
func TestVerbAloneAsInTree(t *testing.T) {
	if len(ownVerbs) < 20 {
		t.Fatalf("%d named verbs", len(ownVerbs))
	}
	run := func(root *cobra.Command, out *bytes.Buffer, args []string) (code int) {
		root.SetArgs(args)
		cmd, err := root.ExecuteContextC(context.Background())
		if err == nil {
			return command.ExitOK
		}
		code = command.ExitCode(err)
		if command.JSONRequested(cmd) && out.Len() == 0 {
			command.writeErrorDoc(out, err, code)
		}
		command.printError(root.ErrOrStderr(), err)
		return code
	}
	for name, verb := range ownVerbs {
		if got := verb().Name(); got != name {
			t.Errorf("the verb registered as %q is named %q", name, got)
		}
		for _, args := range [][]string{
			{name, "--help"},
			{name, "-h", "extra"},
			{name, "--no-such-flag"},
			{name, "--no-such-flag", "--json"},
			{name, "no-such-subcommand", "x", "y", "z", "w"},
			{name, "--version"},
		} {
			var wantOut, wantErr bytes.Buffer
			wantCode := run(command.Program{}.NewRootCmd(&wantOut, &wantErr), &wantOut, args)
			var out, errOut bytes.Buffer
			code := run(command.Program{}.newTree(&out, &errOut, args), &out, args)
			if code != wantCode || out.String() != wantOut.String() || errOut.String() != wantErr.String() {
				t.Errorf("plugkit %q alone: exit %d\n%s%s\nin the whole tree: exit %d\n%s%s", args, code, &out, &errOut, wantCode, &wantOut, &wantErr)
			}
		}
	}
	if root := (command.Program{}).newTree(new(bytes.Buffer), new(bytes.Buffer), []string{"unpack", "a", "b"}); len(root.Commands()) != 1 {
		t.Errorf("unpack built %d verbs, want 1", len(root.Commands()))
	}
	for _, args := range [][]string{nil, {"help", "unpack"}, {"--help"}, {"install"}, {"unpak"}} {
		if root := (command.Program{}).newTree(new(bytes.Buffer), new(bytes.Buffer), args); len(root.Commands()) < len(ownVerbs) {
			t.Errorf("plugkit %q built %d commands, want the whole tree", args, len(root.Commands()))
		}
	}
}
