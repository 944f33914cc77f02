package install

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/source"
	"github.com/plugkit/plugkit/trust"
)

// signer is a key pair for the policy tests: the private key, and the
// public key's file.
type signer struct {
	key    *trust.PrivateKey
	pubPEM string
}

// newSigner makes an ECDSA P-256 key pair as PKCS#8 and PKIX PEM (not
// cosign's encrypted form, whose scrypt is slow under the race detector).
func newSigner(t testing.TB, dir string) *signer {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	k, err := trust.ParsePrivateKey("test.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "acme.pub")
	writeFile(t, p, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})))
	return &signer{key: k, pubPEM: p}
}

// loadPolicy writes a policy document into dir and loads it.
func loadPolicy(t testing.TB, dir, doc string) *trust.Policy {
	t.Helper()
	p := filepath.Join(dir, "policy.json")
	writeFile(t, p, doc)
	pol, err := trust.LoadPolicy(p)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// TestPolicyLocalDirectory: a policy given to install is stored in the
// home and recorded in the lock with the admitting rule; from then on it
// applies to every install, without being given again.
func TestPolicyLocalDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	allowed := kvV1().writeDir(t, filepath.Join(dir, "allowed", "kv"))
	outside := plugin{name: "notes", version: "1"}.writeDir(t, filepath.Join(dir, "elsewhere", "notes"))
	pol := loadPolicy(t, dir, `{"rules": [{"name": "*", "method": "local-directory", "directories": ["allowed"]}]}`)
	h := openHome(t, filepath.Join(dir, "home"))
	var n int
	if _, err := h.Install(ctx, []source.Source{pathSource(allowed)}, InstallOptions{Consent: yes(&n), Policy: pol}); err != nil {
		t.Fatal(err)
	}
	l, _ := h.ReadLock()
	stored, err := h.Policy()
	if err != nil || stored == nil || l.Policy != stored.Digest.String() {
		t.Fatalf("lock policy %q, stored policy %v %v", l.Policy, stored, err)
	}
	if tr := l.Find("kv").Trust; tr == nil || tr.Rule != "rule 1 (*, local-directory)" || tr.Signer != "" {
		t.Fatalf("trust: %+v", tr)
	}
	// The stored policy stands alone: its directory is absolute.
	if !strings.Contains(readFile(t, h.path(PolicyFile)), filepath.Join(dir, "allowed")) {
		t.Errorf("stored policy:\n%s", readFile(t, h.path(PolicyFile)))
	}
	before := snapshotHome(t, h.Dir())
	_, err = h.Install(ctx, []source.Source{pathSource(outside)}, InstallOptions{Consent: yes(&n)})
	if !errors.Is(err, trust.ErrRefused) || !strings.Contains(err.Error(), "notes") {
		t.Fatalf("a directory outside the policy: %v", err)
	}
	if after := snapshotHome(t, h.Dir()); !after.equal(before) {
		t.Fatalf("a refused install changed the home: %s", after.diff(before))
	}
	// A new policy that does not admit what is installed is refused.
	narrower := loadPolicy(t, dir, `{"rules": [{"name": "notes", "method": "local-directory", "directories": ["elsewhere"]}]}`)
	_, err = h.Install(ctx, []source.Source{pathSource(outside)}, InstallOptions{Consent: yes(&n), Policy: narrower})
	if !errors.Is(err, trust.ErrRefused) || !strings.Contains(err.Error(), "kv") {
		t.Fatalf("a policy refusing an installed plugin: %v", err)
	}
	if after := snapshotHome(t, h.Dir()); !after.equal(before) {
		t.Fatalf("a refused policy changed the home: %s", after.diff(before))
	}
	// A wider one admits both, and replaces the stored policy.
	wider := loadPolicy(t, dir, `{"rules": [{"name": "*", "method": "local-directory", "directories": ["allowed", "elsewhere"]}]}`)
	if _, err := h.Install(ctx, []source.Source{pathSource(outside)}, InstallOptions{Consent: yes(&n), Policy: wider}); err != nil {
		t.Fatal(err)
	}
	l, _ = h.ReadLock()
	stored, _ = h.Policy()
	if l.Policy != stored.Digest.String() || l.Find("kv").Trust == nil || l.Find("notes").Trust == nil {
		t.Fatalf("after the wider policy: %s", readFile(t, h.LockPath()))
	}
	assertClean(t, h)
}

// TestPolicySignedOCI: a sigstore-key rule admits an OCI plugin signed in
// a real registry (the lock names the signer); an unsigned update is not
// updated, and a dry run says why; signing it lets the update through.
func TestPolicySignedOCI(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	dir := t.TempDir()
	s := newSigner(t, dir)
	ref := "oci://" + reg.Host + "/acme/kv"
	sign := func(d string) {
		t.Helper()
		r, _ := oci.ParseReference(ref)
		store, err := oci.Open(ctx, r, oci.RemoteOptions{PlainHTTP: true}, true)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := oci.Resolve(ctx, store, "@"+d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := trust.Sign(ctx, store, desc, s.key, nil); err != nil {
			t.Fatal(err)
		}
	}
	d1 := pushOCI(t, ref, kvV1(), "1")
	sign(d1)
	pol := loadPolicy(t, dir, `{"rules": [{"name": "kv", "method": "sigstore-key", "keys": ["acme.pub"]}]}`)
	h := ociHome(t, filepath.Join(dir, "home"))
	var n int
	if _, err := h.Install(ctx, []source.Source{mustParse(t, ref+":1")}, InstallOptions{Consent: yes(&n), Policy: pol}); err != nil {
		t.Fatal(err)
	}
	in, _ := h.Get("kv")
	if in.Trust == nil || in.Trust.Rule != "rule 1 (kv, sigstore-key)" || !strings.HasPrefix(in.Trust.Signer, "key ") {
		t.Fatalf("trust: %+v", in.Trust)
	}

	v2 := kvV1()
	v2.version = "2.0.0"
	d2 := pushOCI(t, ref, v2, "1")
	res, err := h.Update(ctx, nil, UpdateOptions{DryRun: true})
	if err != nil || res.Changes[0].Refused == "" {
		t.Fatalf("dry run of an unsigned update: %+v %v", res, err)
	}
	before := readFile(t, h.LockPath())
	_, err = h.Update(ctx, nil, UpdateOptions{Consent: yes(&n)})
	if !errors.Is(err, trust.ErrRefused) {
		t.Fatalf("unsigned update: %v", err)
	}
	if readFile(t, h.LockPath()) != before {
		t.Fatal("a refused update changed the lock")
	}
	sign(d2)
	if _, err := h.Update(ctx, nil, UpdateOptions{Consent: yes(&n)}); err != nil {
		t.Fatal(err)
	}
	if in, _ := h.Get("kv"); in.Identity != d2 || in.Trust == nil {
		t.Fatalf("after the signed update: %+v", in.Entry)
	}

	// A second home syncs only with the policy that goes with the lock.
	h2 := ociHome(t, filepath.Join(dir, "home2"))
	writeFile(t, h2.LockPath(), readFile(t, h.LockPath()))
	if _, err := h2.Sync(ctx, SyncOptions{}); !errors.Is(err, ErrPolicyMissing) {
		t.Fatalf("sync without the policy: %v", err)
	}
	writeFile(t, h2.path(PolicyFile), readFile(t, h.path(PolicyFile)))
	if _, err := h2.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	assertClean(t, h2)
}

// TestPolicyArchiveBundle: an archive is admitted by the detached bundle
// beside it (FILE.sigstore.json); without one, or with one for other
// bytes, it is refused. A digest rule pins a Backplane download.
func TestPolicyArchiveBundle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := newSigner(t, dir)
	b := kvV1().pack(t)
	arc := filepath.Join(dir, "kv-1.0.0.tar.gz")
	if err := os.WriteFile(arc, b, 0o644); err != nil {
		t.Fatal(err)
	}
	pol := loadPolicy(t, dir, `{"rules": [{"name": "kv", "method": "sigstore-key", "keys": ["acme.pub"]},
		{"name": "notes", "method": "digest", "digests": ["`+archive.Digest(plugin{name: "notes", version: "1"}.pack(t))+`"]}]}`)
	h := openHome(t, filepath.Join(dir, "home"))
	var n int
	_, err := h.Install(ctx, []source.Source{pathSource(arc)}, InstallOptions{Consent: yes(&n), Policy: pol})
	if !errors.Is(err, trust.ErrRefused) {
		t.Fatalf("archive without a bundle: %v", err)
	}
	other, err := trust.SignBlob(ctx, []byte("other bytes"), s.key)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, arc+".sigstore.json", string(other))
	if _, err = h.Install(ctx, []source.Source{pathSource(arc)}, InstallOptions{Consent: yes(&n), Policy: pol}); !errors.Is(err, trust.ErrRefused) {
		t.Fatalf("archive with another file's bundle: %v", err)
	}
	bundle, err := trust.SignBlob(ctx, b, s.key)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, arc+".sigstore.json", string(bundle))
	if _, err := h.Install(ctx, []source.Source{pathSource(arc)}, InstallOptions{Consent: yes(&n), Policy: pol}); err != nil {
		t.Fatal(err)
	}

	reg := startRegistry(t)
	reg.publish(t, plugin{name: "notes", version: "1"}, "")
	rh := registryHome(t, h.Dir())
	src, _ := source.Parse("notes", source.ParseOptions{Registry: reg.URL})
	if _, err := rh.Install(ctx, []source.Source{src}, InstallOptions{Consent: yes(&n)}); err != nil {
		t.Fatal(err)
	}
	reg.publish(t, plugin{name: "notes", version: "2"}, "")
	if _, err := rh.Update(ctx, []string{"notes"}, UpdateOptions{Consent: yes(&n)}); !errors.Is(err, trust.ErrRefused) {
		t.Fatalf("a download the digest rule does not pin: %v", err)
	}
	l, _ := rh.ReadLock()
	if l.Find("notes").Trust.Rule != "rule 2 (notes, digest)" || l.Find("kv").Trust.Signer == "" {
		t.Fatalf("lock: %s", readFile(t, h.LockPath()))
	}
	assertClean(t, h)
}
