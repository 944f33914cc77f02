// Package testbin builds the Go programs that tests run as real processes
// (the plugkit binary, the MCP test server), once per test binary whatever
// the number of tests that ask, into one temporary directory that Main
// removes when the tests are done.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	dir   string
	built = map[string]*build{}
)

type build struct {
	once sync.Once
	path string
	err  error
}

// Build returns the path of the program pkg (an import path) built with
// the build tags tags, building it on first use. A failed build fails the
// test with the compiler's output.
func Build(t testing.TB, pkg string, tags ...string) string {
	t.Helper()
	key := pkg + " " + strings.Join(tags, ",")
	mu.Lock()
	b := built[key]
	if b == nil {
		b = &build{}
		built[key] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.path, b.err = compile(pkg, tags, len(built)) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func compile(pkg string, tags []string, n int) (string, error) {
	mu.Lock()
	if dir == "" {
		d, err := os.MkdirTemp("", "plugkit-testbin-")
		if err != nil {
			mu.Unlock()
			return "", err
		}
		dir = d
	}
	// Each program in its own directory, under its own name, so that a
	// test can put the directory on PATH.
	sub := fmt.Sprintf("%s/%d", dir, n)
	mu.Unlock()
	if err := os.Mkdir(sub, 0o755); err != nil {
		return "", err
	}
	out := sub + "/" + path.Base(pkg)
	args := []string{"build", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	if b, err := exec.Command("go", append(args, pkg)...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}

// Main runs the tests and removes the programs built for them; a package
// whose tests call Build uses it as its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
	return code
}
