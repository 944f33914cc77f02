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
