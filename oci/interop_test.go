package oci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/oci"
)

// run runs a program nobody here wrote, with an empty Docker config, and
// returns its stdout.
func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	return runWith(t, "DOCKER_CONFIG="+t.TempDir(), "", name, args...)
}

// runWith runs a program nobody here wrote with env added to the
// environment and stdin as its input, and returns its stdout.
func runWith(t *testing.T, env, stdin, name string, args ...string) []byte {
	t.Helper()
	bin := testservice.Binary(t, name, "see .ci/run")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env, "HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.Bytes())
	}
	return out
}

// skopeo copies plugkit's artifact from the registry into an OCI layout;
// plugkit pulls the result, with the same identity.
func TestInteropSkopeoCopy(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	a := exampleArtifact(t)
	mustPush(t, repository(t, reg, "plugins/release-notes"), a, "1.2.0")
	dir := filepath.Join(t.TempDir(), "layout")
	run(t, "skopeo", "copy", "--src-tls-verify=false", "docker://"+reg.Host+"/plugins/release-notes:1.2.0", "oci:"+dir+":1.2.0")
	lay, err := oci.OpenLayout(ctx, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := oci.Pull(ctx, lay, "1.2.0", oci.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Descriptor.Digest != a.Descriptor.Digest {
		t.Fatalf("skopeo's copy is %s, pushed %s", p.Descriptor.Digest, a.Descriptor.Digest)
	}
	// And back: skopeo copies the layout into another repository.
	run(t, "skopeo", "copy", "--dest-tls-verify=false", "oci:"+dir+":1.2.0", "docker://"+reg.Host+"/mirror/release-notes:1.2.0")
	back, err := oci.Pull(ctx, repository(t, reg, "mirror/release-notes"), "1.2.0", oci.PullOptions{})
	if err != nil || back.Descriptor.Digest != a.Descriptor.Digest {
		t.Fatalf("skopeo's mirror: %v", err)
	}
}

// oneReferrer checks that c carried one referrer, of artifactType.
func oneReferrer(t *testing.T, c *oci.Copied, artifactType string) {
	t.Helper()
	if len(c.Referrers) != 1 || c.Referrers[0].ArtifactType != artifactType {
		t.Fatalf("referrers %+v", c.Referrers)
	}
}

// oras pull writes the layer as NAME.tar.gz (its title annotation); a
// referrer oras attaches is found by plugkit's copy, and oras discover
// sees it in the copy.
func TestInteropOras(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	a := exampleArtifact(t)
	ref := reg.Host + "/plugins/release-notes:1.2.0"
	mustPush(t, repository(t, reg, "plugins/release-notes"), a, "1.2.0")

	out := t.TempDir()
	run(t, "oras", "pull", "--plain-http", "-o", out, ref)
	got, err := os.ReadFile(filepath.Join(out, "release-notes.tar.gz"))
	if err != nil || !bytes.Equal(got, a.Layer) {
		t.Fatalf("oras pull wrote %d bytes (%v), want the layer", len(got), err)
	}

	sbom := filepath.Join(t.TempDir(), "sbom.json")
	os.WriteFile(sbom, []byte(`{"sbom":true}`), 0o644)
	run(t, "oras", "attach", "--plain-http", "--disable-path-validation", "--artifact-type", "application/vnd.example.sbom", ref, sbom+":application/json")

	c, err := oci.Copy(ctx, repository(t, reg, "plugins/release-notes"), "1.2.0", repository(t, reg, "copy/release-notes"), "1.2.0", oci.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oneReferrer(t, c, "application/vnd.example.sbom")
	var disc struct {
		Referrers []struct {
			Digest       string `json:"digest"`
			ArtifactType string `json:"artifactType"`
		} `json:"referrers"`
	}
	b := run(t, "oras", "discover", "--plain-http", "--format", "json", reg.Host+"/copy/release-notes:1.2.0")
	if err := json.Unmarshal(b, &disc); err != nil {
		t.Fatalf("oras discover: %v\n%s", err, b)
	}
	if len(disc.Referrers) != 1 || disc.Referrers[0].Digest != c.Referrers[0].Digest.String() {
		t.Fatalf("oras discover on the copy: %s", b)
	}
}

// Layout directories plugkit writes are read and extended by oras and
// skopeo, and plugkit extends theirs: plugkit pushes into a layout, oras
// attaches a referrer to it there (so oras reads and rewrites plugkit's
// index.json), plugkit copies plugin and referrer into a layout skopeo
// already holds a tag in; then oras discover and oras pull read plugkit's
// copy, skopeo copies it to a registry, and every tag is still there.
func TestInteropLayoutsPlugkitWrites(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	a := exampleArtifact(t)
	src := filepath.Join(t.TempDir(), "src")
	lay, err := oci.OpenLayout(ctx, src, true)
	if err != nil {
		t.Fatal(err)
	}
	mustPush(t, lay, a, "1.2.0")
	if err := lay.Close(); err != nil {
		t.Fatal(err)
	}
	sbom := filepath.Join(t.TempDir(), "sbom.json")
	os.WriteFile(sbom, []byte(`{"sbom":true}`), 0o644)
	run(t, "oras", "attach", "--oci-layout", "--disable-path-validation", "--artifact-type", "application/vnd.example.sbom", src+":1.2.0", sbom+":application/json")

	// The destination: a layout skopeo made, holding another tag.
	other := manifestOnly(t, `{"$schema":"`+schema+`","name":"other","version":"0.1.0"}`)
	mustPush(t, repository(t, reg, "plugins/other"), other, "0.1.0")
	dst := filepath.Join(t.TempDir(), "dst")
	run(t, "skopeo", "copy", "--src-tls-verify=false", "docker://"+reg.Host+"/plugins/other:0.1.0", "oci:"+dst+":0.1.0")
	from, err := oci.OpenLayout(ctx, src, false)
	if err != nil {
		t.Fatal(err)
	}
	c := copyToLayout(t, from, "1.2.0", dst, "1.2.0")
	oneReferrer(t, c, "application/vnd.example.sbom")

	var disc struct {
		Referrers []struct {
			Digest string `json:"digest"`
		} `json:"referrers"`
	}
	b := run(t, "oras", "discover", "--oci-layout", "--format", "json", dst+":1.2.0")
	if err := json.Unmarshal(b, &disc); err != nil || len(disc.Referrers) != 1 || disc.Referrers[0].Digest != c.Referrers[0].Digest.String() {
		t.Fatalf("oras discover on plugkit's layout: %v\n%s", err, b)
	}
	out := t.TempDir()
	run(t, "oras", "pull", "--oci-layout", "-o", out, dst+":1.2.0")
	if got, err := os.ReadFile(filepath.Join(out, "release-notes.tar.gz")); err != nil || !bytes.Equal(got, a.Layer) {
		t.Fatalf("oras pull from plugkit's layout wrote %d bytes (%v), want the layer", len(got), err)
	}
	for tag, want := range map[string]*oci.Artifact{"1.2.0": a, "0.1.0": other} {
		run(t, "skopeo", "copy", "--dest-tls-verify=false", "oci:"+dst+":"+tag, "docker://"+reg.Host+"/mirror/p:"+tag)
		p, err := oci.Pull(ctx, repository(t, reg, "mirror/p"), tag, oci.PullOptions{})
		if err != nil || p.Descriptor.Digest != want.Descriptor.Digest {
			t.Fatalf("skopeo's copy of %s from plugkit's layout: %v", tag, err)
		}
	}
}

// plugkit and oras share credentials through the Docker config: what
// `oras login` stores, plugkit pushes with; what plugkit's Login stores,
// `oras pull` reads with.
func TestInteropOrasLoginSharesCredentials(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartAuthRegistry(t, "alice", "s3cret")
	cfg := t.TempDir()
	t.Setenv("DOCKER_CONFIG", cfg)
	env := "DOCKER_CONFIG=" + cfg
	runWith(t, env, "s3cret\n", "oras", "login", "--plain-http", "-u", "alice", "--password-stdin", reg.Host)
	opts, repo := dockerRepository(t, reg)
	store := opts.Credentials
	a := exampleArtifact(t)
	mustPush(t, repo, a, "1.2.0")

	if err := oci.Logout(ctx, store, reg.Host); err != nil {
		t.Fatal(err)
	}
	if err := oci.Login(ctx, store, reg.Host, auth.Credential{Username: "alice", Password: "s3cret"}, opts); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	runWith(t, env, "", "oras", "pull", "--plain-http", "-o", out, reg.Host+"/plugins/release-notes:1.2.0")
	if got, err := os.ReadFile(filepath.Join(out, "release-notes.tar.gz")); err != nil || !bytes.Equal(got, a.Layer) {
		t.Fatalf("oras pull with plugkit's login: %v", err)
	}
}
