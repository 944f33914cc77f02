package trust

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/oci"
)

// registryPlugin starts a docker-registry (no referrers API: the tag
// schema) and copies the golden plugin and cosign's signature into it.
func registryPlugin(t testing.TB) (*testservice.Registry, string, ocispec.Descriptor) {
	t.Helper()
	reg := testservice.StartRegistry(t)
	ctx := context.Background()
	src, err := oci.OpenLayout(ctx, filepath.Join(goldenDir, "signed-plugin.tar"), false)
	if err != nil {
		t.Fatal(err)
	}
	name := reg.Host + "/plugins/release-notes"
	c, err := oci.Copy(ctx, src, "1.2.0", openRepo(t, name), "1.2.0", oci.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Referrers) != 1 {
		t.Fatalf("copied referrers %v", c.Referrers)
	}
	return reg, name, c.Plugin.Descriptor
}

// openRepo opens a fresh client of the repository: a signer or verifier
// of its own, sharing nothing in memory with the others.
func openRepo(t testing.TB, name string) *oci.Repository {
	t.Helper()
	r, err := oci.NewRepository(name, oci.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRegistryGoldenSignatureVerifies(t *testing.T) {
	_, name, subject := registryPlugin(t)
	ctx := context.Background()
	if subject.Digest != goldenPlugin {
		t.Fatalf("copied plugin %s", subject.Digest)
	}
	rep, err := (&Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}}).VerifyOCI(ctx, openRepo(t, name), subject)
	if err != nil || rep.Valid()[0].Referrer != goldenReferrer {
		t.Fatalf("cosign.pub: %v %+v", err, rep)
	}
	if _, err := (&Verifier{Keys: []*PublicKey{goldenPublicKey(t, "other.pub")}}).VerifyOCI(ctx, openRepo(t, name), subject); !errors.Is(err, ErrNotVerified) {
		t.Fatalf("other.pub: %v", err)
	}
}

func TestRegistrySignVerify(t *testing.T) {
	_, name, subject := registryPlugin(t)
	ctx := context.Background()
	key := newKey(t, "p256")
	a, err := Sign(ctx, openRepo(t, name), subject, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.ReAdded != 0 {
		t.Errorf("re-added %d times with no other writer", a.ReAdded)
	}
	// The tag schema's fallback index lists both signatures.
	repo := openRepo(t, name)
	idxDesc, err := repo.Resolve(ctx, "sha256-"+subject.Digest.Encoded())
	if err != nil {
		t.Fatalf("no referrers tag: %v", err)
	}
	var idx ocispec.Index
	b, err := content.FetchAll(ctx, repo, idxDesc)
	if err != nil || json.Unmarshal(b, &idx) != nil || len(idx.Manifests) != 2 {
		t.Fatalf("referrers index %s (%v)", b, err)
	}
	for _, d := range idx.Manifests {
		if d.ArtifactType != BundleMediaType || d.Annotations[AnnotationPredicateType] != SignPredicateType {
			t.Errorf("index entry %+v", d)
		}
	}

	rep, err := (&Verifier{Keys: []*PublicKey{key.Public}}).VerifyOCI(ctx, repo, subject)
	if err != nil || len(rep.Valid()) != 1 || rep.Valid()[0].Referrer != a.Referrer.Digest {
		t.Fatalf("right key: %v %+v", err, rep)
	}
	if _, err := (&Verifier{Keys: []*PublicKey{newKey(t, "p256").Public}}).VerifyOCI(ctx, repo, subject); !errors.Is(err, ErrNotVerified) {
		t.Fatalf("other key: %v", err)
	}
	// An attestation goes the same way.
	slsa := "https://slsa.dev/provenance/v1"
	if _, err := Sign(ctx, repo, subject, key, &SignOptions{PredicateType: slsa, Predicate: []byte(`{"builder":{}}`)}); err != nil {
		t.Fatal(err)
	}
	rep, err = (&Verifier{Keys: []*PublicKey{key.Public}, PredicateType: slsa}).VerifyOCI(ctx, openRepo(t, name), subject)
	if err != nil || len(rep.Valid()) != 1 || rep.Skipped != 2 {
		t.Fatalf("attestation: %v %+v", err, rep)
	}
}

// TestRegistryConcurrentSigners signs one subject from several clients of
// the registry at once, in one process: every signature is kept.
func TestRegistryConcurrentSigners(t *testing.T) {
	_, name, subject := registryPlugin(t)
	ctx := context.Background()
	const n = 4
	keys := make([]*PrivateKey, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range keys {
		keys[i] = newKey(t, "p256")
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Sign(ctx, openRepo(t, name), subject, keys[i], &SignOptions{ReAddDelay: 100 * time.Millisecond})
		}()
	}
	wg.Wait()
	for i := range keys {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if _, err := (&Verifier{Keys: []*PublicKey{keys[i].Public}}).VerifyOCI(ctx, openRepo(t, name), subject); err != nil {
			t.Errorf("signer %d lost: %v", i, err)
		}
	}
}

// TestRegistrySignersInParallelProcesses runs signers as separate
// processes, which share no lock: reading back and re-adding is what keeps
// their signatures.
func TestRegistrySignersInParallelProcesses(t *testing.T) {
	_, name, subject := registryPlugin(t)
	ctx := context.Background()
	const n = 4
	dir := t.TempDir()
	keys := make([]*PrivateKey, n)
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for i := range keys {
		keys[i] = newKey(t, "p256")
		pemFile := filepath.Join(dir, fmt.Sprintf("k%d.key", i))
		if err := os.WriteFile(pemFile, pkcs8PEM(t, keys[i]), 0o600); err != nil {
			t.Fatal(err)
		}
		cmds[i] = exec.Command(os.Args[0])
		cmds[i].Env = append(os.Environ(), "TRUST_HELPER_SIGN="+strings.Join([]string{name, subject.Digest.String(), subject.MediaType, fmt.Sprint(subject.Size), pemFile}, ","))
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("signer %d: %v\n%s", i, err, outs[i])
		}
	}
	for i := range keys {
		if _, err := (&Verifier{Keys: []*PublicKey{keys[i].Public}}).VerifyOCI(ctx, openRepo(t, name), subject); err != nil {
			t.Errorf("signer %d lost: %v", i, err)
		}
	}
}

// TestMain runs this test binary as a signer process when
// TestRegistrySignersInParallelProcesses starts it so.
func TestMain(m *testing.M) {
	if spec := os.Getenv("TRUST_HELPER_SIGN"); spec != "" {
		if err := helperSign(spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperSign signs as one process of the parallel signers: spec is
// "REPOSITORY,DIGEST,MEDIATYPE,SIZE,KEYFILE".
func helperSign(spec string) error {
	f := strings.Split(spec, ",")
	if len(f) != 5 {
		return fmt.Errorf("bad TRUST_HELPER_SIGN %q", spec)
	}
	var size int64
	if _, err := fmt.Sscan(f[3], &size); err != nil {
		return err
	}
	key, err := LoadPrivateKey(f[4], nil)
	if err != nil {
		return err
	}
	repo, err := oci.NewRepository(f[0], oci.RemoteOptions{PlainHTTP: true})
	if err != nil {
		return err
	}
	subject := ocispec.Descriptor{Digest: digest.Digest(f[1]), MediaType: f[2], Size: size}
	_, err = Sign(context.Background(), repo, subject, key, nil)
	return err
}

// droppingStore is a registry client with a rogue concurrent writer: after
// each push of a referrer manifest it puts back the referrers index as it
// was before, the lost update of a read-modify-write race, up to drops
// times.
type droppingStore struct {
	*oci.Repository
	subject ocispec.Descriptor
	drops   int
	stale   []byte
}

func (s *droppingStore) Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	tag := "sha256-" + s.subject.Digest.Encoded()
	if s.stale == nil && desc.ArtifactType == BundleMediaType {
		d, err := s.Repository.Resolve(ctx, tag)
		if err != nil {
			return err
		}
		if s.stale, err = content.FetchAll(ctx, s.Repository, d); err != nil {
			return err
		}
	}
	if err := s.Repository.Push(ctx, desc, r); err != nil {
		return err
	}
	if desc.ArtifactType != BundleMediaType || s.drops == 0 {
		return nil
	}
	s.drops--
	d := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: digest.FromBytes(s.stale), Size: int64(len(s.stale))}
	return s.Repository.PushReference(ctx, d, bytes.NewReader(s.stale), tag)
}

func TestRegistryReAddsDroppedSignature(t *testing.T) {
	_, name, subject := registryPlugin(t)
	ctx := context.Background()
	key := newKey(t, "p256")
	store := &droppingStore{Repository: openRepo(t, name), subject: subject, drops: 2}
	a, err := Sign(ctx, store, subject, key, &SignOptions{ReAddDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if a.ReAdded != 2 {
		t.Errorf("re-added %d times, want 2", a.ReAdded)
	}
	if _, err := (&Verifier{Keys: []*PublicKey{key.Public}}).VerifyOCI(ctx, openRepo(t, name), subject); err != nil {
		t.Fatal(err)
	}
	// cosign's signature survived the re-adds too.
	if _, err := (&Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}}).VerifyOCI(ctx, openRepo(t, name), subject); err != nil {
		t.Fatal(err)
	}

	// A writer that always wins exhausts the re-adds: a clear error.
	store = &droppingStore{Repository: openRepo(t, name), subject: subject, drops: 100}
	_, err = Sign(ctx, store, subject, newKey(t, "p256"), &SignOptions{ReAdds: 2, ReAddDelay: 10 * time.Millisecond})
	if !errors.Is(err, ErrReferrerLost) {
		t.Fatalf("err = %v, want ErrReferrerLost", err)
	}
}

// TestRegistryRefusesMovedSignature attaches cosign's valid bundle (over the
// golden plugin) to another manifest in the registry, and a tampered copy
// of it to the plugin itself: neither counts.
func TestRegistryRefusesMovedSignature(t *testing.T) {
	_, name, subject := registryPlugin(t)
	ctx := context.Background()
	repo := openRepo(t, name)
	var m map[string]any
	b, err := content.FetchAll(ctx, repo, subject)
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatal(err)
	}
	m["annotations"].(map[string]any)["org.opencontainers.image.title"] = "impostor"
	ib, _ := json.Marshal(m)
	impostor := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(ib), Size: int64(len(ib)), ArtifactType: "application/vnd.colossus.agent-plugin.v1"}
	if err := repo.Push(ctx, impostor, bytes.NewReader(ib)); err != nil {
		t.Fatal(err)
	}
	bundle, err := content.FetchAll(ctx, repo, ocispec.Descriptor{MediaType: BundleMediaType, Digest: goldenBundle, Size: 659})
	if err != nil {
		t.Fatal(err)
	}
	attach := func(subject ocispec.Descriptor, bundle []byte) {
		layer := ocispec.Descriptor{MediaType: BundleMediaType, Digest: digest.FromBytes(bundle), Size: int64(len(bundle))}
		if err := repo.Push(ctx, layer, bytes.NewReader(bundle)); err != nil {
			t.Fatal(err)
		}
		mb, _ := newReferrerManifest(subject, layer, SignPredicateType, time.Now())
		d := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(mb), Size: int64(len(mb)), ArtifactType: BundleMediaType}
		if err := repo.Push(ctx, d, bytes.NewReader(mb)); err != nil {
			t.Fatal(err)
		}
	}
	attach(impostor, bundle)
	v := &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}}
	rep, err := v.VerifyOCI(ctx, openRepo(t, name), impostor)
	if !errors.Is(err, ErrNotVerified) || len(rep.Signatures) != 1 || !strings.Contains(rep.Signatures[0].Reason, "does not match") {
		t.Fatalf("moved signature: %v %+v", err, rep)
	}
	attach(subject, bytes.Replace(bundle, []byte(`"sig":"ME`), []byte(`"sig":"MF`), 1))
	rep, err = v.VerifyOCI(ctx, openRepo(t, name), subject)
	if err != nil || len(rep.Signatures) != 2 || len(rep.Valid()) != 1 || rep.Valid()[0].Referrer != goldenReferrer {
		t.Fatalf("tampered copy beside the real one: %v %+v", err, rep)
	}
}
