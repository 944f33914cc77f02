package testservice

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Registry is a CNCF distribution registry (Debian's docker-registry 2.8)
// running for one test: plain HTTP on 127.0.0.1, filesystem storage in a
// temporary directory, deletes enabled. It has no OCI referrers API, so
// clients exercise the referrers tag schema.
type Registry struct {
	// Host is "127.0.0.1:PORT", the registry part of a reference.
	Host string
	// Storage is the registry's storage directory.
	Storage string
	*Process
}

// StartRegistry starts a registry for the test and stops it when the test
// ends.
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	return startRegistry(t, "")
}

// StartAuthRegistry starts a registry that requires HTTP basic
// authentication as user with password (an htpasswd file), answering 401
// to anyone else.
func StartAuthRegistry(t testing.TB, user, password string) *Registry {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return startRegistry(t, fmt.Sprintf("auth:\n  htpasswd:\n    realm: plugkit-test\n    path: %s\n", htpasswd))
}

// startRegistry starts a registry with extra configuration (auth: a
// registry with auth answers /v2/ with 401 once ready).
func startRegistry(t testing.TB, auth string) *Registry {
	t.Helper()
	bin := Binary(t, "docker-registry", "apt-get install docker-registry")
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	port := FreePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	config := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %s
  headers:
    X-Content-Type-Options: [nosniff]
`, storage, host) + auth
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfgPath)
	// docker-registry panics on this machine's AWS_CA_BUNDLE value.
	cmd.Env = env("AWS_CA_BUNDLE")
	status := 200
	if auth != "" {
		status = 401
	}
	p := Start(t, cmd, 20*time.Second, httpReady("http://"+host+"/v2/", status))
	return &Registry{Host: host, Storage: storage, Process: p}
}
