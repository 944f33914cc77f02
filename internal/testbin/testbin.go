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
	once  sync.Once
	paths []string
	err   error
}

// Build returns the path of the program pkg (an import path) built with
// the build tags tags, building it on first use. A failed build fails the
// test with the compiler's output.
func Build(t testing.TB, pkg string, tags ...string) string {
	t.Helper()
	return buildAll(t, []string{pkg}, tags)[0]
}

// Plugkit returns the path of the plugkit binary built with tags. Tests
// that run any verb through the plugkit binary use it.
func Plugkit(t testing.TB, tags ...string) string {
	t.Helper()
	return Build(t, "github.com/plugkit/plugkit/cmd/plugkit", tags...)
}

// buildAll builds pkgs into one directory, once per list and tags, and
// returns their paths in the order of pkgs.
func buildAll(t testing.TB, pkgs, tags []string) []string {
	t.Helper()
	key := strings.Join(pkgs, " ") + " " + strings.Join(tags, ",")
	mu.Lock()
	b := built[key]
	if b == nil {
		b = &build{}
		built[key] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.paths, b.err = compile(pkgs, tags, len(built)) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.paths
}

func compile(pkgs, tags []string, n int) ([]string, error) {
	mu.Lock()
	if dir == "" {
		d, err := os.MkdirTemp("", "plugkit-testbin-")
		if err != nil {
			mu.Unlock()
			return nil, err
		}
		dir = d
	}
	// Each build in its own directory, its programs under their own
	// names, so that a test can put the directory on PATH.
	sub := fmt.Sprintf("%s/%d", dir, n)
	mu.Unlock()
	if err := os.Mkdir(sub, 0o755); err != nil {
		return nil, err
	}
	args := []string{"build", "-o", sub + "/"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	if b, err := exec.Command("go", append(args, pkgs...)...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, b)
	}
	paths := make([]string, len(pkgs))
	for i, pkg := range pkgs {
		paths[i] = sub + "/" + path.Base(pkg)
	}
	return paths, nil
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
