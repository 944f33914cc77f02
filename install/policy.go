package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/internal/boundedfile"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/source"
	"github.com/plugkit/plugkit/trust"
)

// ErrPolicyMismatch is matched by the error of a sync whose lock was
// admitted under a trust policy the home does not hold.
var ErrPolicyMismatch = errors.New("the lock names another trust policy than the home's")

// maxBundleBytes bounds a detached signature bundle beside an archive.
const maxBundleBytes = 1 << 20

// Policy returns the home's trust policy (HOME/policy.json), nil when the
// home has none. While it has one, every install, update and sync applies
// it; no option skips it.
func (h *Home) Policy() (*trust.Policy, error) {
	b, err := boundedfile.Read(h.path(PolicyFile), trust.MaxPolicyBytes, "MaxPolicyBytes")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return trust.ParsePolicy(h.path(PolicyFile), b, h.dir, false)
}

// newPolicy is a policy given to an operation, to be stored in the home:
// its standalone form (keys inline, paths absolute) and that form parsed,
// whose digest the lock records.
type newPolicy struct {
	bytes  []byte
	policy *trust.Policy
}

// standalone prepares p to be stored as HOME/policy.json.
func (h *Home) standalone(p *trust.Policy) (*newPolicy, error) {
	b, err := p.Standalone()
	if err != nil {
		return nil, err
	}
	sp, err := trust.ParsePolicy(h.path(PolicyFile), b, h.dir, false)
	if err != nil {
		return nil, err
	}
	return &newPolicy{bytes: b, policy: sp}, nil
}

// admit applies policy to one plugin: its name, where it comes from and
// its identity, with the evidence its source carries (the signatures of
// an OCI artifact, the bundle beside an archive). archiveBytes and desc
// are what was just fetched, when something was; otherwise they are read
// again from the source (for a plugin already installed).
func (h *Home) admit(ctx context.Context, policy *trust.Policy, name string, src Source, identity string, archiveBytes []byte, desc *ocispec.Descriptor) (*Trust, error) {
	c := &trust.Candidate{Name: name, Digest: digest.Digest(identity)}
	switch src.Kind {
	case KindDirectory:
		c.Source, c.Dir = trust.SourceDirectory, src.Path
	case KindArchive:
		c.Source = trust.SourceArchive
		if archiveBytes == nil {
			b, err := source.ReadArchiveFile(src.Path, h.opts.Source.Limits)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if sha256Hex(b) != digest.Digest(identity).Encoded() {
				return nil, fmt.Errorf("%s: %w: %s no longer holds %s", name, ErrSourceChanged, src.Path, identity)
			}
			archiveBytes = b
		}
		c.Archive = archiveBytes
		bundle, err := boundedfile.Read(src.Path+".sigstore.json", maxBundleBytes, "bundle size")
		switch {
		case err == nil:
			c.Bundles = [][]byte{bundle}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	case KindOCI, KindOCILayout:
		ref := src.parsed().OCI
		store, err := oci.Open(ctx, ref, h.opts.Source.Remote, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer store.Close()
		if desc == nil {
			d, err := oci.Resolve(ctx, store, "@"+identity)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			desc = &d
		}
		c.Source, c.Store, c.Manifest = trust.SourceOCI, store, *desc
	case KindRegistry:
		c.Source = trust.SourceBackplane
	default:
		return nil, fmt.Errorf("%s: unknown source kind %q", name, src.Kind)
	}
	d, err := policy.Admit(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t := &Trust{Rule: fmt.Sprintf("rule %d (%s, %s)", d.Rule.Index, d.Rule.Name, d.Rule.Method)}
	if d.Signer != nil {
		t.Signer = d.Signer.String()
	}
	return t, nil
}

// admitFetched applies policy to a plugin just fetched.
func (h *Home) admitFetched(ctx context.Context, policy *trust.Policy, f *fetched) (*Trust, error) {
	var desc *ocispec.Descriptor
	if f.oci != nil {
		desc = &f.oci.Descriptor
	}
	return h.admit(ctx, policy, f.pkg.Name, f.src, f.identity, f.archive, desc)
}

// admitEntry applies policy to an installed plugin, reading its evidence
// from its source.
func (h *Home) admitEntry(ctx context.Context, policy *trust.Policy, e *Entry) (*Trust, error) {
	return h.admit(ctx, policy, e.Name, e.Source, e.Identity, nil, nil)
}

// appliedPolicy is the trust policy an operation applies, and what that
// changes in the home.
type appliedPolicy struct {
	policy *trust.Policy
	// bytes is a new policy to store as HOME/policy.json, nil when the
	// home keeps its own.
	bytes []byte
	// trusts are the decisions for the installed plugins admitted again,
	// when the policy is not the one the lock records.
	trusts map[string]*Trust
}

// applyPolicy admits every change that installs something under the home's
// policy, or under given, which then replaces it; nil when there is no
// policy. When the policy is not the one the lock records, every other
// installed plugin is admitted again too, so that the lock's policy digest
// speaks for all its entries. With record, a refusal is noted in its
// change (a dry run) instead of returned.
func (s *state) applyPolicy(ctx context.Context, given *trust.Policy, changes []*Change, fetched []*fetched, record bool) (*appliedPolicy, error) {
	cur, err := s.h.Policy()
	if err != nil {
		return nil, err
	}
	ap := &appliedPolicy{policy: cur}
	if given != nil {
		np, err := s.h.standalone(given)
		if err != nil {
			return nil, err
		}
		ap.policy = np.policy
		if cur == nil || cur.Digest != np.policy.Digest {
			ap.bytes = np.bytes
		}
	}
	if ap.policy == nil {
		return nil, nil
	}
	changed := map[string]bool{}
	for i, c := range changes {
		if c.Action == ActionNone {
			continue
		}
		changed[c.Name] = true
		t, err := s.h.admitFetched(ctx, ap.policy, fetched[i])
		if err != nil && record && errors.Is(err, trust.ErrRefused) {
			c.Refused = err.Error()
			continue
		}
		if err != nil {
			return nil, err
		}
		c.New.Trust = t
	}
	if ap.policy.Digest.String() == s.lock.Policy {
		return ap, nil
	}
	ap.trusts = map[string]*Trust{}
	for i := range s.lock.Plugins {
		e := &s.lock.Plugins[i]
		if changed[e.Name] {
			continue
		}
		t, err := s.h.admitEntry(ctx, ap.policy, e)
		if err != nil {
			return nil, fmt.Errorf("%w (installed, and the policy %s must admit every installed plugin)", err, ap.policy.Digest)
		}
		ap.trusts[e.Name] = t
	}
	return ap, nil
}
