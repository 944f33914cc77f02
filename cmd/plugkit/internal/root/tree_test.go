package root

import (
	"bytes"
	"context"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
)

// TestVerbAloneAsInTree: a command line that starts with a verb, built
// alone by Program.Tree, prints what the whole tree prints, byte for
// byte, and exits the same: help, usage errors, unknown flags and
// subcommands, --json error documents. Each name builds the command of
// that name.
func TestVerbAloneAsInTree(t *testing.T) {
	p := Program()
	if len(p.Verbs) < 35 {
		t.Fatalf("%d named verbs", len(p.Verbs))
	}
	ctx := context.Background()
	for name, verb := range p.Verbs {
		if got := verb(&factory.Factory{}).Name(); got != name {
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
			wantCode := command.Execute(ctx, p.NewRootCmd(factory.Quiet(&wantOut, &wantErr)), args)
			var out, errOut bytes.Buffer
			code := command.Execute(ctx, p.Tree(factory.Quiet(&out, &errOut), args), args)
			if code != wantCode || out.String() != wantOut.String() || errOut.String() != wantErr.String() {
				t.Errorf("plugkit %q alone: exit %d\n%s%s\nin the whole tree: exit %d\n%s%s", args, code, &out, &errOut, wantCode, &wantOut, &wantErr)
			}
		}
	}
	quiet := factory.Quiet(new(bytes.Buffer), new(bytes.Buffer))
	if root := p.Tree(quiet, []string{"unpack", "a", "b"}); len(root.Commands()) != 1 {
		t.Errorf("unpack built %d verbs, want 1", len(root.Commands()))
	}
	for _, args := range [][]string{nil, {"help", "unpack"}, {"--help"}, {"unpak"}} {
		if root := p.Tree(quiet, args); len(root.Commands()) < len(p.Verbs) {
			t.Errorf("plugkit %q built %d commands, want the whole tree", args, len(root.Commands()))
		}
	}
}
