package trust

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
)

// SignOptions tune Sign. The zero value signs (predicate
// SignPredicateType).
type SignOptions struct {
	// PredicateType and Predicate make an attestation: Predicate is the
	// JSON object the statement carries, PredicateType its URI. Empty
	// means a signature: SignPredicateType with the predicate {}.
	PredicateType string
	Predicate     []byte
	// ReAdds bounds how often a signature dropped from a registry's
	// referrers tag index by a concurrent writer is added again (default
	// 5; a negative value skips reading back). Each read-back waits a
	// random two to three times as long as the push took, at most
	// ReAddDelay (default 2 s).
	ReAdds     int
	ReAddDelay time.Duration
}

// Attached describes a signature or attestation attached to a subject.
type Attached struct {
	// Subject is the manifest signed.
	Subject ocispec.Descriptor `json:"subject"`
	// Referrer is the referrer manifest that holds the bundle.
	Referrer ocispec.Descriptor `json:"referrer"`
	// Bundle is the bundle layer.
	Bundle        ocispec.Descriptor `json:"bundle"`
	PredicateType string             `json:"predicateType"`
	// ReAdded counts how often the referrer was added again after a
	// concurrent writer dropped it from the referrers index.
	ReAdded int `json:"reAdded,omitempty"`
}

// ErrReferrerLost means a signature could not be kept in a registry's
// referrers tag index against concurrent writers within SignOptions.ReAdds.
var ErrReferrerLost = errors.New("the signature keeps being dropped from the referrers index by concurrent writers")

// Sign signs subject (a manifest in store) with key and attaches the
// bundle as an OCI 1.1 referrer, exactly as `cosign sign
// --new-bundle-format` does: a DSSE envelope over an in-toto statement
// whose subject is subject's digest, in a referrer manifest with the empty
// config, one bundle layer and cosign's annotations. store is a remote
// repository or an OCI layout (oras-go's oci.Store); registries without
// the referrers API get the referrers tag schema.
//
// Signers of one subject are serialised within this process. Across
// processes, a registry's tag-schema index is read-modify-write without
// conditional update, so after writing Sign reads the referrers back and,
// when its referrer was dropped by a concurrent writer, adds it again
// after a random delay, up to opts.ReAdds times (docs/trust.md describes
// the race that remains).
func Sign(ctx context.Context, store content.GraphStorage, subject ocispec.Descriptor, key *PrivateKey, opts *SignOptions) (*Attached, error) {
	if opts == nil {
		opts = &SignOptions{}
	}
	predicateType := opts.PredicateType
	if predicateType == "" {
		if opts.Predicate != nil {
			return nil, errors.New("a predicate needs its predicate type")
		}
		predicateType = SignPredicateType
	}
	if !isManifestType(subject.MediaType) {
		return nil, fmt.Errorf("%s is a %s, not a manifest", subject.Digest, subject.MediaType)
	}
	stmt, err := newStatement(subject.Digest, predicateType, opts.Predicate)
	if err != nil {
		return nil, err
	}
	bundleJSON, err := bundleDSSE(ctx, key, stmt)
	if err != nil {
		return nil, err
	}
	layer := ocispec.Descriptor{MediaType: BundleMediaType, Digest: digest.FromBytes(bundleJSON), Size: int64(len(bundleJSON))}
	manifest, err := newReferrerManifest(subject, layer, predicateType, time.Now())
	if err != nil {
		return nil, err
	}
	ref := ocispec.Descriptor{
		MediaType:    ocispec.MediaTypeImageManifest,
		Digest:       digest.FromBytes(manifest),
		Size:         int64(len(manifest)),
		ArtifactType: BundleMediaType,
	}
	a := &Attached{Subject: subject, Referrer: ref, Bundle: layer, PredicateType: predicateType}

	unlock := lockSubject(store, subject.Digest)
	defer unlock()
	if err := pushIfAbsent(ctx, store, emptyConfigDescriptor(), emptyConfig); err != nil {
		return nil, fmt.Errorf("pushing the empty config: %w", err)
	}
	if err := pushIfAbsent(ctx, store, layer, bundleJSON); err != nil {
		return nil, fmt.Errorf("pushing the bundle: %w", err)
	}
	start := time.Now()
	if err := store.Push(ctx, ref, bytes.NewReader(manifest)); err != nil {
		return nil, fmt.Errorf("pushing the referrer manifest: %w", err)
	}
	// Read back everywhere: cheap in a layout, and the only defence
	// against a concurrent writer of a registry's referrers tag index.
	if a.ReAdded, err = keepReferrer(ctx, store, subject, ref, manifest, time.Since(start), opts); err != nil {
		return a, err
	}
	return a, nil
}

func isManifestType(mt string) bool {
	return mt == ocispec.MediaTypeImageManifest || mt == ocispec.MediaTypeImageIndex
}

func pushIfAbsent(ctx context.Context, store content.Storage, d ocispec.Descriptor, b []byte) error {
	ok, err := store.Exists(ctx, d)
	if err != nil || ok {
		return err
	}
	return store.Push(ctx, d, bytes.NewReader(b))
}

// keepReferrer reads the referrers of subject back after the push and,
// while its referrer is missing, pushes the referrer manifest again (which
// makes oras-go add it to the current index).
//
// Only a writer that read the tag-schema index before our push and wrote
// it after can drop our referrer, and such a read-modify-write takes about
// as long as our own push (pushed: the same requests to the same
// registry). So each look waits a random two to three times that, capped
// by ReAddDelay: a writer in flight at our push has finished by then, and
// one that starts later reads an index that lists us.
func keepReferrer(ctx context.Context, store content.GraphStorage, subject, ref ocispec.Descriptor, manifest []byte, pushed time.Duration, opts *SignOptions) (int, error) {
	readds, ceiling := opts.ReAdds, opts.ReAddDelay
	if readds < 0 {
		return 0, nil
	}
	if readds == 0 {
		readds = 5
	}
	if ceiling <= 0 {
		ceiling = 2 * time.Second
	}
	for n := 0; ; n++ {
		d := min(2*pushed+rand.N(pushed+1), ceiling)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return n, ctx.Err()
		case <-t.C:
		}
		now, err := referrerSet(ctx, store, subject)
		if err != nil {
			return n, fmt.Errorf("reading the referrers back: %w", err)
		}
		if now[ref.Digest] {
			return n, nil
		}
		if n >= readds {
			return n, fmt.Errorf("%s: %w (re-added %d times)", ref.Digest, ErrReferrerLost, n)
		}
		start := time.Now()
		if err := store.Push(ctx, ref, bytes.NewReader(manifest)); err != nil {
			return n, fmt.Errorf("adding the referrer again: %w", err)
		}
		pushed = time.Since(start)
	}
}

// referrerSet is the set of referrer digests of subject.
func referrerSet(ctx context.Context, store content.ReadOnlyGraphStorage, subject ocispec.Descriptor) (map[digest.Digest]bool, error) {
	descs, err := listReferrers(ctx, store, subject)
	if err != nil {
		return nil, err
	}
	set := make(map[digest.Digest]bool, len(descs))
	for _, d := range descs {
		set[d.Digest] = true
	}
	return set, nil
}

// subjectLocks serialises signers per subject within the process: oras-go
// merges concurrent referrers-index updates only within one Repository
// value, and an OCI layout store writes index.json whole. Entries live
// while someone holds or waits for them.
var subjectLocks = struct {
	sync.Mutex
	m map[string]*subjectLock
}{m: map[string]*subjectLock{}}

type subjectLock struct {
	sync.Mutex
	users int
}

func lockSubject(store content.ReadOnlyStorage, d digest.Digest) (unlock func()) {
	where := fmt.Sprintf("%p", store)
	switch r := store.(type) {
	case *remote.Repository:
		where = r.Reference.Registry + "/" + r.Reference.Repository
	case interface{ Reference() registry.Reference }:
		where = r.Reference().Registry + "/" + r.Reference().Repository
	}
	key := where + "@" + d.String()
	subjectLocks.Lock()
	l := subjectLocks.m[key]
	if l == nil {
		l = &subjectLock{}
		subjectLocks.m[key] = l
	}
	l.users++
	subjectLocks.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		subjectLocks.Lock()
		if l.users--; l.users == 0 {
			delete(subjectLocks.m, key)
		}
		subjectLocks.Unlock()
	}
}

// SignBlob signs data and returns the bundle v0.3 (a message signature over
// its SHA-256, or SHA-512 with Ed25519ph) that `cosign sign-blob
// --new-bundle-format --bundle` writes.
func SignBlob(ctx context.Context, data []byte, key *PrivateKey) ([]byte, error) {
	return bundleMessage(ctx, key, data)
}
