package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestBuildOnce(t *testing.T) {
	a := Build(t, "github.com/plugkit/plugkit/cmd/plugkit")
	b := Build(t, "github.com/plugkit/plugkit/cmd/plugkit")
	if a != b {
		t.Fatalf("built twice: %s, %s", a, b)
	}
	out, err := exec.Command(a, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "plugkit ") {
		t.Fatalf("%v: %q", err, out)
	}
}

func TestBuildFailure(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { recover() }()
		Build(ft, "github.com/plugkit/plugkit/no/such/package")
	}()
	if !strings.Contains(ft.msg, "go build") {
		t.Fatalf("a failed build did not fail the test with the compiler's output: %q", ft.msg)
	}
}

// fatalRecorder records Fatal instead of ending the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatal(args ...any) {
	f.msg = fmtArgs(args)
	panic("fatal")
}

func fmtArgs(args []any) string {
	var b strings.Builder
	for _, a := range args {
		if e, ok := a.(error); ok {
			b.WriteString(e.Error())
		}
	}
	return b.String()
}

// TestPlugkitBuiltOnce: Plugkit builds the one plugkit binary once, with
// every verb.
func TestPlugkitBuiltOnce(t *testing.T) {
	a, b := Plugkit(t), Plugkit(t)
	if a != b || filepath.Base(a) != "plugkit" {
		t.Fatalf("built twice or misnamed: %s, %s", a, b)
	}
	out, err := exec.Command(a, "key", "--help").Output()
	if err != nil || !strings.Contains(string(out), "Write a new key pair") {
		t.Fatalf("plugkit key --help: %v: %q", err, out)
	}
}
