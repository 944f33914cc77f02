package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBuildsWithoutCgo: the README installs both programs with
// CGO_ENABLED=0, static binaries that start without the dynamic linker
// and the C library. A dependency that needs cgo (a package whose Go files
// all require it) would break that install; go list reports it as an
// error of that package. The programs are named, not matched by a
// pattern: a pattern leaves out the packages it finds nothing to build in.
func TestBuildsWithoutCgo(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot list the packages of a static build")
	}
	cmd := exec.Command(goCmd, "list", "-e", "-deps", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}", ".", "../plugkit-full")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Errorf("with CGO_ENABLED=0, as the README installs plugkit, these packages do not build:\n%s", s)
	}
}
