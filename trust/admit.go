package trust

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// SourceKind says how a plugin arrived, which decides what evidence it can
// carry.
type SourceKind string

// The source kinds.
const (
	// SourceDirectory is a plugin read from a directory; only
	// local-directory and digest rules can admit it.
	SourceDirectory SourceKind = "directory"
	// SourceArchive is a plugin archive file; detached bundles beside it
	// (FILE.sigstore.json) are its signatures.
	SourceArchive SourceKind = "archive"
	// SourceOCI is an OCI artifact from a registry, a layout or an air-gap
	// tar; its signatures are referrers in the same place.
	SourceOCI SourceKind = "oci"
	// SourceBackplane is a Backplane registry download: it carries no
	// signatures, so only digest rules can admit it.
	SourceBackplane SourceKind = "backplane"
)

// Candidate is a plugin asking to be admitted: what it is called, where it
// came from, its identity, and the evidence its source carries.
type Candidate struct {
	// Name is the plugin's name (plugin.json "name").
	Name   string
	Source SourceKind
	// Digest is the installation identity: the OCI manifest digest, the
	// SHA-256 of an archive's or a download's bytes, or the pack digest of
	// a directory.
	Digest digest.Digest
	// Dir is the directory a SourceDirectory plugin was read from.
	Dir string
	// Store and Manifest locate a SourceOCI plugin and its referrers: a
	// remote repository, an OCI layout or an air-gap tar (oras-go
	// targets), and the plugin manifest's descriptor.
	Store    content.ReadOnlyGraphStorage
	Manifest ocispec.Descriptor
	// Archive holds a SourceArchive plugin's bytes and Bundles the
	// detached bundles found beside it.
	Archive []byte
	Bundles [][]byte
}

// RuleRef names the rule that decided.
type RuleRef struct {
	// Index counts from 1, as a person reading the file does.
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Method Method `json:"method"`
}

// Decision is the outcome of Admit: whether the plugin is admitted, by
// which rule, on whose signature, and why.
type Decision struct {
	Plugin   string        `json:"plugin"`
	Identity digest.Digest `json:"identity"`
	Admitted bool          `json:"admitted"`
	// Rule is the first rule whose glob matched; nil when none did.
	Rule *RuleRef `json:"rule,omitempty"`
	// Signer is who signed, for the sigstore methods.
	Signer *Signer `json:"signer,omitempty"`
	Reason string  `json:"reason"`
	// Report lists each signature candidate, for the sigstore methods.
	Report *Report `json:"report,omitempty"`
	// Policy is the SHA-256 of the policy file.
	Policy digest.Digest `json:"policy"`
}

// ErrRefused is matched (errors.Is) by every refusal of a policy.
var ErrRefused = errors.New("refused by the trust policy")

// RefusedError is a policy's refusal; it carries the decision.
type RefusedError struct{ Decision *Decision }

func (e *RefusedError) Error() string { return e.Decision.Reason }

// Is makes a RefusedError match ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Admit applies the policy to c. It returns the decision and nil when a
// rule admits the plugin, the decision and a *RefusedError (matching
// ErrRefused) when the policy refuses it, and an error that does not
// match ErrRefused when the evidence could not be read (a registry that
// does not answer); callers refuse in every non-nil case.
func (p *Policy) Admit(ctx context.Context, c *Candidate) (*Decision, error) {
	d := &Decision{Plugin: c.Name, Identity: c.Digest, Policy: p.Digest}
	refuse := func(format string, args ...any) (*Decision, error) {
		d.Reason = fmt.Sprintf(format, args...)
		return d, &RefusedError{Decision: d}
	}
	if err := checkCandidate(c); err != nil {
		return d, err
	}
	var rule *Rule
	for _, r := range p.Rules {
		if ok, _ := path.Match(r.Name, c.Name); ok {
			rule = r
			break
		}
	}
	if rule == nil {
		return refuse("no rule of %s matches plugin %q", p.Source, c.Name)
	}
	d.Rule = &RuleRef{Index: rule.Index + 1, Name: rule.Name, Method: rule.Method}
	admit := func(format string, args ...any) (*Decision, error) {
		d.Admitted = true
		d.Reason = fmt.Sprintf(format, args...)
		return d, nil
	}
	switch rule.Method {
	case MethodDigest:
		for _, dg := range rule.Digests {
			if dg == c.Digest {
				return admit("identity %s is pinned by %s", c.Digest, rule)
			}
		}
		return refuse("%s pins %d digests, and %s is not one of them", rule, len(rule.Digests), c.Digest)
	case MethodLocalDirectory:
		if c.Source != SourceDirectory {
			return refuse("%s admits only plugins read from a directory; %s is from a %s source", rule, c.Name, c.Source)
		}
		dir, err := filepath.Abs(c.Dir)
		if err != nil {
			return d, err
		}
		dir = resolveDir(dir)
		for _, root := range rule.Directories {
			if within(root, dir) {
				return admit("%s is read from %s, under %s (%s)", c.Name, dir, root, rule)
			}
		}
		return refuse("%s admits directories under %d locations, and %s is under none of them", rule, len(rule.Directories), dir)
	}
	// The sigstore methods.
	v := &Verifier{Keys: rule.Keys, Identities: rule.Identities, TrustedRoot: rule.TrustedRoot, Limits: p.Limits}
	var rep *Report
	var err error
	switch c.Source {
	case SourceOCI:
		rep, err = v.VerifyOCI(ctx, c.Store, c.Manifest)
	case SourceArchive:
		rep, err = v.verifyBundles(c)
	default:
		return refuse("%s needs a signature, and a %s source carries none: admit it with a digest rule", rule, c.Source)
	}
	d.Report = rep
	if err != nil {
		if errors.Is(err, ErrNotVerified) {
			return refuse("%s: %v", rule, err)
		}
		return d, err
	}
	d.Signer = rep.Valid()[0].Signer
	return admit("%s is signed by %s (%s)", c.Name, d.Signer, rule)
}

// verifyBundles checks an archive's detached bundles; one valid is enough.
func (v *Verifier) verifyBundles(c *Candidate) (*Report, error) {
	rep := &Report{Subject: c.Digest, PredicateType: v.predicateType(), Signatures: []Signature{}}
	lim := v.Limits.withDefaults()
	for _, b := range c.Bundles {
		if len(rep.Signatures) == lim.MaxSignatures {
			rep.Unchecked++
			continue
		}
		r, _ := v.VerifyBlob(bytes.NewReader(c.Archive), b)
		rep.Signatures = append(rep.Signatures, r.Signatures...)
	}
	if len(rep.Valid()) == 0 {
		return rep, &NotVerifiedError{Report: rep}
	}
	return rep, nil
}

// checkCandidate refuses a candidate whose evidence contradicts its
// identity: that is a caller's bug or tampering, never a reason to admit.
func checkCandidate(c *Candidate) error {
	if _, err := ParseIdentity(c.Digest.String()); err != nil {
		return fmt.Errorf("candidate %q: %w", c.Name, err)
	}
	switch c.Source {
	case SourceDirectory, SourceBackplane:
	case SourceArchive:
		if c.Archive == nil && len(c.Bundles) > 0 {
			return fmt.Errorf("candidate %q: bundles need the archive's bytes", c.Name)
		}
		if c.Archive != nil && digest.FromBytes(c.Archive) != c.Digest {
			return fmt.Errorf("candidate %q: its digest %s is not the SHA-256 of its archive bytes", c.Name, c.Digest)
		}
	case SourceOCI:
		if c.Store == nil {
			return fmt.Errorf("candidate %q: an OCI candidate needs its store", c.Name)
		}
		if c.Manifest.Digest != c.Digest {
			return fmt.Errorf("candidate %q: its digest %s is not its manifest's %s", c.Name, c.Digest, c.Manifest.Digest)
		}
	default:
		return fmt.Errorf("candidate %q: unknown source kind %q", c.Name, c.Source)
	}
	return nil
}

// within reports whether p is dir or lies under it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel == "." || rel != ".." && !filepath.IsAbs(rel) && !startsWithDotDot(rel)
}

func startsWithDotDot(rel string) bool {
	return len(rel) >= 3 && rel[:2] == ".." && rel[2] == filepath.Separator
}
