package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBuildsWithoutCgo: the README installs plugkit with CGO_ENABLED=0, a
// static binary that starts without the dynamic linker and the C library.
// A dependency that needs cgo (a package whose Go files all require it)
// would break that install; go list reports it as an error of that
// package.
func TestBuildsWithoutCgo(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot list the packages of a static build")
	}
	cmd := exec.Command(goCmd, "list", "-e", "-deps", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}", ".")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Errorf("with CGO_ENABLED=0, as the README installs plugkit, these packages do not build:\n%s", s)
	}
}

// TestLibraryBoundaries: a Go agent host that imports package host links
// neither the installer nor sigstore, and package registry links no
// database or object-store driver (registry/storage chooses those).
func TestLibraryBoundaries(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot list the packages a library links")
	}
	for pkg, banned := range map[string][]string{
		"../../host":     {"github.com/plugkit/plugkit/install", "github.com/sigstore/"},
		"../../registry": {"modernc.org/sqlite", "github.com/jackc/pgx", "github.com/minio/minio-go", "github.com/plugkit/plugkit/registry/store/", "github.com/plugkit/plugkit/registry/blobs/s3"},
	} {
		out, err := exec.Command(goCmd, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if strings.HasPrefix(dep, b) {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}

// goList runs go list with args in the module and returns its lines; the
// test skips where there is no go command.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot list the packages")
	}
	out, err := exec.Command(goCmd, append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

const module = "github.com/plugkit/plugkit/"

// TestHelpersImportNoProject: the packages under the top-level internal/
// are helpers, which import nothing of the project outside internal/ but
// what docs/architecture.md allows (boundedfile's errors match
// snapshot.ErrLimit), and no library imports the command packages.
func TestHelpersImportNoProject(t *testing.T) {
	allowed := map[string][]string{"internal/boundedfile": {"snapshot"}}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}}", "../../internal/...") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		imports := f[1:]
		slices.Sort(imports)
		for _, imp := range slices.Compact(imports) {
			rel, ours := strings.CutPrefix(imp, module)
			if ours && !strings.HasPrefix(rel, "internal/") && !slices.Contains(allowed[pkg], rel) {
				t.Errorf("%s imports %s: a helper under internal/ imports nothing of the project above it", pkg, rel)
			}
		}
	}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "../../...") {
		f := strings.Fields(line)
		if strings.HasPrefix(f[0], module+"cmd/") {
			continue
		}
		for _, dep := range f[1:] {
			if strings.HasPrefix(dep, module+"cmd/") {
				t.Errorf("%s links %s: no library imports the command packages", f[0], dep)
			}
		}
	}
}

// TestCommandLayout holds the arrows between the command packages that
// docs/architecture.md draws: the shared pieces import no verb group, a
// verb group imports the shared pieces and only the groups listed here,
// nothing but root lists the groups, and nothing but main imports root.
// A new package under cmd/plugkit/internal needs its row here and in the
// document.
func TestCommandLayout(t *testing.T) {
	shared := []string{"command", "factory", "input", "memory", "progress", "remote", "httpserve"}
	groups := []string{"build", "home", "ocicmd", "registrycmd", "run", "serve", "signcmd", "version"}
	allowed := map[string][]string{
		"cmd/plugkit": {"root"},
		"root":        append(append([]string{}, shared...), groups...),
		"factory":     nil,
		"memory":      nil,
		"command":     {"factory"},
		"input":       {"command"},
		"progress":    {"command", "factory"},
		"remote":      {"command", "factory", "input", "progress"},
		"httpserve":   {"command", "remote"},
		"clitest":     {"command"},
		"build":       append([]string{"version"}, shared...),
		"ocicmd":      append([]string{"build"}, shared...),
		"registrycmd": append([]string{"build"}, shared...),
		"run":         append([]string{"home"}, shared...),
		"home":        shared,
		"serve":       shared,
		"signcmd":     shared,
		"version":     shared,
	}
	const internal = "cmd/plugkit/internal/"
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(f[0], module), internal)
		may, known := allowed[pkg]
		if !known {
			t.Errorf("%s is not in the layout of docs/architecture.md (and this test)", f[0])
			continue
		}
		for _, imp := range f[1:] {
			rel, ours := strings.CutPrefix(imp, module+internal)
			if ours && !slices.Contains(may, rel) {
				t.Errorf("%s imports %s, which docs/architecture.md does not allow", pkg, rel)
			}
			if imp == module+"cmd/plugkit" || strings.HasPrefix(imp, module+"cmd/") && !strings.HasPrefix(imp, module+internal) {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}
