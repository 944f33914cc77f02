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

// Errors about the home's trust policy and the lock. While the lock
// records a policy, the home must hold that very policy: install, update
// and sync refuse a home whose policy.json is missing or different, so
// that deleting or editing the file never admits what the policy refused.
// List, Remove and the readers still work. Only SetPolicy (and Install
// with InstallOptions.Policy) changes the policy.
var (
	// ErrPolicyMismatch: the home holds another policy than the lock
	// records.
	ErrPolicyMismatch = errors.New("the lock names another trust policy than the home's")
	// ErrPolicyMissing: the lock records a policy and the home has no
	// policy.json.
	ErrPolicyMissing = errors.New("the lock names a trust policy and the home has none")
)

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
		remote := h.opts.Source.Remote
		remote.PlainHTTP = remote.PlainHTTP || src.PlainHTTP
		store, err := oci.Open(ctx, ref, remote, false)
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

// lockedPolicy is the home's policy, checked against the lock: nil when
// neither has one; ErrPolicyMissing or ErrPolicyMismatch when the lock
// records a policy the home does not hold. A policy the lock does not
// record (the lock's "policy" was removed) still applies.
func (s *state) lockedPolicy() (*trust.Policy, error) {
	policy, err := s.h.Policy()
	if err != nil {
		return nil, err
	}
	switch {
	case s.lock.Policy == "":
		return policy, nil
	case policy == nil:
		return nil, fmt.Errorf("%w: the lock was admitted under policy %s, and %s does not exist: restore the policy.json that goes with the lock, or change the policy with plugkit policy set or plugkit policy remove",
			ErrPolicyMissing, s.lock.Policy, s.h.path(PolicyFile))
	case policy.Digest.String() != s.lock.Policy:
		return nil, fmt.Errorf("%w: the lock was admitted under policy %s, and %s holds %s: restore the policy.json that goes with the lock, or change the policy with plugkit policy set",
			ErrPolicyMismatch, s.lock.Policy, s.h.path(PolicyFile), policy.Digest)
	}
	return policy, nil
}

// unrecordedPolicy is the warning about a policy the home holds and the
// lock does not record ("" when there is none): it still applies, but a
// reviewer of the lock does not see it, as when the lock's "policy" was
// deleted in a pull request.
func (s *state) unrecordedPolicy(policy *trust.Policy) string {
	if s.lock.Policy != "" || policy == nil {
		return ""
	}
	return fmt.Sprintf("the lock records no trust policy, and %s holds %s: it still applies, but the lock does not show it; plugkit policy set %s records it, plugkit policy remove removes it",
		s.h.path(PolicyFile), policy.Digest, s.h.path(PolicyFile))
}

// CheckPolicy compares the home's trust policy with the one its lock
// records. The error matches ErrPolicyMissing or ErrPolicyMismatch (or is
// a *trust.PolicyError for a malformed policy.json); warning is set when
// the home holds a policy that the lock does not record.
func (h *Home) CheckPolicy() (warning string, err error) {
	lock, err := h.ReadLock()
	if err != nil {
		return "", err
	}
	s := &state{h: h, lock: lock}
	policy, err := s.lockedPolicy()
	if err != nil {
		return "", err
	}
	return s.unrecordedPolicy(policy), nil
}

// applyPolicy admits every change that installs something under the home's
// policy, or under given, which then replaces it; nil when there is no
// policy. When the policy is not the one the lock records, every other
// installed plugin is admitted again too, so that the lock's policy digest
// speaks for all its entries. With record, a refusal is noted in its
// change (a dry run) instead of returned.
func (s *state) applyPolicy(ctx context.Context, given *trust.Policy, changes []*Change, fetched []*fetched, record bool) (*appliedPolicy, error) {
	ap := &appliedPolicy{}
	if given != nil {
		// A given policy replaces the home's, whatever state that is in.
		np, err := s.h.standalone(given)
		if err != nil {
			return nil, err
		}
		ap.policy = np.policy
		if cur, err := s.h.Policy(); err != nil || cur == nil || cur.Digest != np.policy.Digest {
			ap.bytes = np.bytes
		}
	} else {
		cur, err := s.lockedPolicy()
		if err != nil {
			return nil, err
		}
		ap.policy = cur
	}
	if ap.policy == nil {
		return nil, nil
	}
	changed := map[string]bool{}
	for i, c := range changes {
		if c.Action == ActionNone || c.Action == ActionFailed {
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
