package main

import (
	"os/exec"
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
