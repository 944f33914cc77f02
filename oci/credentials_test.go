package oci_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/oci"
)

// Credentials come from the Docker config file (what docker login and
// oras login write); without them the registry refuses.
func TestCredentialsFromDockerConfig(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartAuthRegistry(t, "alice", "s3cret")
	a := exampleArtifact(t)

	t.Setenv("DOCKER_CONFIG", t.TempDir())
	anon, _ := oci.NewRepository(reg.Host+"/plugins/release-notes", oci.RemoteOptions{PlainHTTP: true})
	if _, err := oci.Push(ctx, anon, a, "1.2.0"); err == nil || !strings.Contains(err.Error(), "credential") {
		t.Fatalf("push without credentials: %v", err)
	}

	cfg := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host, base64.StdEncoding.EncodeToString([]byte("alice:s3cret")))
	os.WriteFile(filepath.Join(os.Getenv("DOCKER_CONFIG"), "config.json"), []byte(cfg), 0o600)
	_, repo := dockerRepository(t, reg)
	mustPush(t, repo, a, "1.2.0")
	if p, err := oci.Pull(ctx, repo, "1.2.0", oci.PullOptions{}); err != nil || p.Descriptor.Digest != a.Descriptor.Digest {
		t.Fatalf("pull with credentials: %v", err)
	}
}

// Login checks the password against the registry before storing it: a
// wrong one stores nothing; logout removes what login stored.
func TestLoginLogout(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartAuthRegistry(t, "alice", "s3cret")
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	store, err := oci.DockerCredentials()
	if err != nil {
		t.Fatal(err)
	}
	opts := oci.RemoteOptions{PlainHTTP: true}
	if err := oci.Login(ctx, store, reg.Host, auth.Credential{Username: "alice", Password: "wrong"}, opts); err == nil {
		t.Fatal("wrong password accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed login wrote the config: %v", err)
	}
	if err := oci.Login(ctx, store, reg.Host, auth.Credential{Username: "alice", Password: "s3cret"}, opts); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if !strings.Contains(string(b), reg.Host) {
		t.Fatalf("config after login: %s", b)
	}
	if err := oci.Logout(ctx, store, reg.Host); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "config.json"))
	if strings.Contains(string(b), reg.Host) {
		t.Fatalf("config after logout: %s", b)
	}
}

// Many referrers of one subject pushed at once to a registry without the
// referrers API all end up in its fallback index.
func TestConcurrentReferrersAreAllListed(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	repo := repository(t, reg, "plugins/release-notes")
	a := exampleArtifact(t)
	subject := mustPush(t, repo, a, "1.2.0")
	empty := []byte("{}")
	emptyDesc := ocispec.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: digestOf(empty), Size: 2}
	if err := repo.Push(ctx, emptyDesc, bytesReader(empty)); err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := mustJSON(ocispec.Manifest{Versioned: specsV2, MediaType: oci.ManifestMediaType, ArtifactType: "application/vnd.example.note",
				Config: emptyDesc, Layers: []ocispec.Descriptor{emptyDesc}, Subject: &subject,
				Annotations: map[string]string{"n": fmt.Sprint(i)}})
			errs <- repo.Push(ctx, ocispec.Descriptor{MediaType: oci.ManifestMediaType, Digest: digestOf(m), Size: int64(len(m))}, bytesReader(m))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	preds, err := repo.Predecessors(ctx, subject)
	if err != nil || len(preds) != n {
		t.Fatalf("%d referrers listed, %d pushed (%v)", len(preds), n, err)
	}
}

// credentialHelper is a Docker credential helper speaking the helpers'
// protocol (get, store, erase; "credentials not found in native keychain"
// when it has none), keeping one credential in a file of dir: no real
// keychain (pass, secretservice) runs on a test machine without a desktop.
const credentialHelper = `#!/bin/sh
file="$PLUGKIT_TEST_HELPER_DIR/credential.json"
case "$1" in
get) [ -f "$file" ] && exec cat "$file"; echo "credentials not found in native keychain"; exit 1 ;;
store) cat >"$file" ;;
erase) rm -f "$file" ;;
*) echo "unknown action $1" >&2; exit 2 ;;
esac
`

// Credentials kept by a credential helper the Docker config names for the
// registry (credHelpers): login stores them through the helper, never in
// config.json, after checking them; push reads them from it; logout erases
// them.
func TestCredentialsFromHelper(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartAuthRegistry(t, "alice", "s3cret")
	bin, data, cfg := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-plugkittest"), []byte(credentialHelper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("PLUGKIT_TEST_HELPER_DIR", data)
	t.Setenv("DOCKER_CONFIG", cfg)
	config := fmt.Sprintf(`{"credHelpers":{%q:"plugkittest"}}`, reg.Host)
	os.WriteFile(filepath.Join(cfg, "config.json"), []byte(config), 0o600)
	opts, repo := dockerRepository(t, reg)
	store := opts.Credentials
	a := exampleArtifact(t)
	if _, err := oci.Push(ctx, repo, a, "1.2.0"); err == nil {
		t.Fatal("push before login succeeded")
	}
	helperFile := filepath.Join(data, "credential.json")
	if err := oci.Login(ctx, store, reg.Host, auth.Credential{Username: "alice", Password: "wrong"}, opts); err == nil {
		t.Fatal("wrong password accepted")
	}
	if _, err := os.Stat(helperFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused login reached the helper: %v", err)
	}
	if err := oci.Login(ctx, store, reg.Host, auth.Credential{Username: "alice", Password: "s3cret"}, opts); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg, "config.json")); string(b) != config {
		t.Errorf("login changed config.json: %s", b)
	}
	if b, err := os.ReadFile(helperFile); err != nil || !strings.Contains(string(b), `"Secret":"s3cret"`) {
		t.Fatalf("the helper holds %s (%v)", b, err)
	}
	_, repo = dockerRepository(t, reg)
	mustPush(t, repo, a, "1.2.0")
	if err := oci.Logout(ctx, store, reg.Host); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(helperFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("logout left the helper's credential: %v", err)
	}
}

// dockerRepository opens plugins/release-notes on reg over plain HTTP
// with the credentials of the Docker config $DOCKER_CONFIG names.
func dockerRepository(t *testing.T, reg *testservice.Registry) (oci.RemoteOptions, *oci.Repository) {
	t.Helper()
	store, err := oci.DockerCredentials()
	if err != nil {
		t.Fatal(err)
	}
	opts := oci.RemoteOptions{PlainHTTP: true, Credentials: store}
	repo, err := oci.NewRepository(reg.Host+"/plugins/release-notes", opts)
	if err != nil {
		t.Fatal(err)
	}
	return opts, repo
}
