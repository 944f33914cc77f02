package trust

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"golang.org/x/sync/semaphore"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
)

// ErrNotVerified is matched (errors.Is) by every "no valid signature"
// outcome, so callers can tell a refusal from an I/O failure.
var ErrNotVerified = errors.New("no valid signature")

// Limits bound what verification reads from a registry, layout or file.
// A zero field takes its default.
type Limits struct {
	// MaxSignatures is how many bundle referrers of one subject are
	// checked; more are reported as unchecked. Default 100.
	MaxSignatures int
	// MaxUnknownReferrers is how many referrers listed with no
	// artifactType, or one plugkit does not know, have their manifests
	// read (each within MaxManifestBytes) to learn whether they are
	// bundles; more are reported as unread. Default 100.
	MaxUnknownReferrers int
	// MaxManifestBytes bounds a referrer manifest. Default 4 MiB.
	MaxManifestBytes int64
	// MaxBundleBytes bounds a bundle (attestations carry their predicate,
	// SBOMs included). Default 16 MiB.
	MaxBundleBytes int64
}

// Default limits.
const (
	DefaultMaxSignatures       = 100
	DefaultMaxUnknownReferrers = 100
	DefaultMaxManifestBytes    = 4 << 20
	DefaultMaxBundleBytes      = 16 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxSignatures <= 0 {
		l.MaxSignatures = DefaultMaxSignatures
	}
	if l.MaxUnknownReferrers <= 0 {
		l.MaxUnknownReferrers = DefaultMaxUnknownReferrers
	}
	if l.MaxManifestBytes <= 0 {
		l.MaxManifestBytes = DefaultMaxManifestBytes
	}
	if l.MaxBundleBytes <= 0 {
		l.MaxBundleBytes = DefaultMaxBundleBytes
	}
	return l
}

// Identity is a keyless signer: the OIDC issuer that vouched for the
// signer and the subject (the certificate's SAN: an email, a workflow URL)
// that Fulcio certified. Each half is matched exactly or by a Go regexp
// (RE2, unanchored as in cosign: write ^ and $).
type Identity struct {
	Issuer        string `json:"issuer,omitempty"`
	IssuerRegexp  string `json:"issuerRegexp,omitempty"`
	Subject       string `json:"subject,omitempty"`
	SubjectRegexp string `json:"subjectRegexp,omitempty"`
}

// Check reports an identity that names neither or both of an exact value
// and a regexp for a half, or whose regexp does not compile.
func (id Identity) Check() error {
	for _, half := range []struct{ name, exact, re string }{
		{"issuer", id.Issuer, id.IssuerRegexp},
		{"subject", id.Subject, id.SubjectRegexp},
	} {
		switch {
		case half.exact == "" && half.re == "":
			return fmt.Errorf("identity needs %s or %sRegexp", half.name, half.name)
		case half.exact != "" && half.re != "":
			return fmt.Errorf("identity has both %s and %sRegexp; give one", half.name, half.name)
		case half.re != "":
			if _, err := regexp.Compile(half.re); err != nil {
				return fmt.Errorf("%sRegexp: %w", half.name, err)
			}
		}
	}
	return nil
}

func (id Identity) String() string {
	s, i := id.Subject, id.Issuer
	if id.SubjectRegexp != "" {
		s = "/" + id.SubjectRegexp + "/"
	}
	if id.IssuerRegexp != "" {
		i = "/" + id.IssuerRegexp + "/"
	}
	return s + " from " + i
}

// Signer names who made a valid signature: a key, or a keyless identity.
type Signer struct {
	// Key is the name of the public key that verified (its path as
	// given) and KeyID its hint.
	Key   string `json:"key,omitempty"`
	KeyID string `json:"keyId,omitempty"`
	// Subject and Issuer are the certificate's SAN and OIDC issuer.
	Subject string `json:"subject,omitempty"`
	Issuer  string `json:"issuer,omitempty"`
}

func (s Signer) String() string {
	if s.Key != "" {
		return "key " + s.Key
	}
	return s.Subject + " (issuer " + s.Issuer + ")"
}

// Verifier checks Sigstore bundles against whom it trusts: any of Keys,
// or, for keyless bundles, a certificate chaining to TrustedRoot whose
// identity matches any of Identities. Nothing is fetched: TrustedRoot is
// read from disk by the caller. The zero Verifier trusts nobody.
type Verifier struct {
	Keys        []*PublicKey
	Identities  []Identity
	TrustedRoot root.TrustedMaterial
	// PredicateType is the statement type asked for; empty means a
	// signature (SignPredicateType).
	PredicateType string
	Limits        Limits
}

func (v *Verifier) predicateType() string {
	if v.PredicateType == "" {
		return SignPredicateType
	}
	return v.PredicateType
}

// Report is the outcome for every candidate signature of one subject.
type Report struct {
	Subject       digest.Digest `json:"subject"`
	PredicateType string        `json:"predicateType"`
	// Signatures are the bundle referrers checked, in listing order.
	Signatures []Signature `json:"signatures"`
	// Skipped counts referrers that are not bundles of PredicateType
	// (other attestations, SBOM artifacts, …).
	Skipped int `json:"skipped,omitempty"`
	// Unchecked counts bundle referrers past Limits.MaxSignatures.
	Unchecked int `json:"unchecked,omitempty"`
	// Unread counts referrers listed with no artifactType, or one
	// plugkit does not know, past Limits.MaxUnknownReferrers: what they
	// are is not known.
	Unread int `json:"unread,omitempty"`
}

// Signature is the outcome for one bundle.
type Signature struct {
	// Referrer is the digest of the referrer manifest (empty for a
	// detached bundle file).
	Referrer digest.Digest `json:"referrer,omitempty"`
	Valid    bool          `json:"valid"`
	Signer   *Signer       `json:"signer,omitempty"`
	// Reason says why an invalid signature was refused.
	Reason string `json:"reason,omitempty"`
}

// Valid returns the valid signatures.
func (r *Report) Valid() []Signature {
	var v []Signature
	for _, s := range r.Signatures {
		if s.Valid {
			v = append(v, s)
		}
	}
	return v
}

// NotVerifiedError is the refusal of a subject with no valid signature; it
// carries the report with each candidate's reason, and matches
// ErrNotVerified.
type NotVerifiedError struct{ Report *Report }

func (e *NotVerifiedError) Error() string {
	r := e.Report
	what := "signature"
	if r.PredicateType != SignPredicateType {
		what = "attestation of type " + r.PredicateType
	}
	var s string
	switch len(r.Signatures) {
	case 0:
		s = fmt.Sprintf("no %s of %s found", what, r.Subject)
	case 1:
		s = fmt.Sprintf("the %s of %s is not valid: %s", what, r.Subject, r.Signatures[0].Reason)
	default:
		s = fmt.Sprintf("none of the %d candidates for a %s of %s is valid", len(r.Signatures), what, r.Subject)
	}
	if r.Unchecked > 0 {
		s += fmt.Sprintf(" (%d more not checked: over MaxSignatures)", r.Unchecked)
	}
	if r.Unread > 0 {
		s += fmt.Sprintf(" (%d referrers of unknown type not read: over MaxUnknownReferrers)", r.Unread)
	}
	return s
}

// Is makes a NotVerifiedError match ErrNotVerified.
func (e *NotVerifiedError) Is(target error) bool { return target == ErrNotVerified }

// VerifyOCI checks the Sigstore bundle referrers of subject (a plugin
// manifest) in store: a remote repository, an OCI layout or an air-gap
// tar, one algorithm for all three. A referrer counts when its bundle is a
// DSSE envelope over an in-toto statement whose subject is subject's
// digest and whose predicate type is v.PredicateType, signed by someone v
// trusts. A referrer listed with no artifactType, or one plugkit does not
// know, is read to learn from its manifest whether it is a bundle, as
// cosign does (up to Limits.MaxUnknownReferrers of them). It returns the
// report and nil when at least one is valid, the report and a
// *NotVerifiedError when none is, or nil and an error when the referrers
// cannot be listed.
func (v *Verifier) VerifyOCI(ctx context.Context, store content.ReadOnlyGraphStorage, subject ocispec.Descriptor) (*Report, error) {
	lim := v.Limits.withDefaults()
	rep := &Report{Subject: subject.Digest, PredicateType: v.predicateType(), Signatures: []Signature{}}
	if err := subject.Digest.Validate(); err != nil {
		return nil, fmt.Errorf("subject digest: %w", err)
	}
	descs, err := listReferrers(ctx, store, subject)
	if err != nil {
		return nil, fmt.Errorf("listing the referrers of %s: %w", subject.Digest, err)
	}
	var refs, unknown []*referrer
	for _, d := range descs {
		switch listedKind(d, rep.PredicateType) {
		case listedOther:
			rep.Skipped++
		case listedBundle:
			refs = append(refs, &referrer{desc: d})
		default:
			if len(unknown) == lim.MaxUnknownReferrers {
				rep.Unread++
				continue
			}
			r := &referrer{desc: d}
			refs, unknown = append(refs, r), append(unknown, r)
		}
	}
	// The unknown are read first: those that are bundles take their
	// places, in listing order, among the bundles MaxSignatures admits.
	eachReferrer(unknown, func(r *referrer) { r.read(ctx, store, subject, rep.PredicateType, lim) })
	var cands []*referrer
	for _, r := range refs {
		switch {
		case r.notCandidate:
			rep.Skipped++
		case len(cands) == lim.MaxSignatures:
			rep.Unchecked++
		default:
			cands = append(cands, r)
		}
	}
	// Candidates are fetched and checked a few at a time (a registry's
	// round trips overlap), with at most MaxBundleBytes of bundles in
	// hand at once (verifying one allocates several times its size).
	budget := semaphore.NewWeighted(lim.MaxBundleBytes)
	eachReferrer(cands, func(r *referrer) {
		if !r.isRead {
			r.read(ctx, store, subject, rep.PredicateType, lim)
		}
		if !r.notCandidate {
			r.sig = v.checkReferrer(ctx, store, subject, r, budget)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, r := range cands {
		if r.notCandidate {
			rep.Skipped++
		} else {
			rep.Signatures = append(rep.Signatures, r.sig)
		}
	}
	if len(rep.Valid()) == 0 {
		return rep, &NotVerifiedError{Report: rep}
	}
	return rep, nil
}

// listReferrers lists the manifests that may refer to subject. Registries
// answer with the referrers API or the tag schema; layouts answer from the
// graph of index.json, whose entries carry no annotations, so the caller
// fetches and checks each candidate either way.
func listReferrers(ctx context.Context, store content.ReadOnlyGraphStorage, subject ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	if _, ok := store.(registry.ReferrerLister); ok {
		return registry.Referrers(ctx, store, subject, "")
	}
	return store.Predecessors(ctx, subject)
}

// verifyWorkers is how many referrers VerifyOCI reads or checks at once.
const verifyWorkers = 4

// eachReferrer calls f for every referrer, verifyWorkers at a time, and
// returns when all calls have.
func eachReferrer(refs []*referrer, f func(*referrer)) {
	workers := make(chan struct{}, verifyWorkers)
	var wg sync.WaitGroup
	for _, r := range refs {
		workers <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-workers; wg.Done() }()
			f(r)
		}()
	}
	wg.Wait()
}

// referrer is one referrer of the subject on its way through VerifyOCI.
type referrer struct {
	desc ocispec.Descriptor
	// isRead is set once read has fetched the manifest: notCandidate
	// when it is no bundle of the predicate type asked for, else layer,
	// the bundle's descriptor, or refusal, why it cannot be one.
	isRead       bool
	notCandidate bool
	layer        ocispec.Descriptor
	refusal      string
	sig          Signature
}

// read fetches the referrer's manifest, within MaxManifestBytes, and
// learns from it whether it is a bundle of the predicate type want.
func (r *referrer) read(ctx context.Context, store content.ReadOnlyGraphStorage, subject ocispec.Descriptor, want string, lim Limits) {
	r.isRead = true
	if r.desc.Size > lim.MaxManifestBytes {
		r.refusal = fmt.Sprintf("referrer manifest is %d bytes, over the limit of %d (MaxManifestBytes)", r.desc.Size, lim.MaxManifestBytes)
		return
	}
	mb, err := content.FetchAll(ctx, store, r.desc)
	if err != nil {
		r.refusal = fmt.Sprintf("fetching the referrer manifest: %v", err)
		return
	}
	layer, annotations, err := bundleLayer(mb, subject.Digest, lim.MaxBundleBytes)
	if t := annotations[AnnotationPredicateType]; errors.Is(err, errNotBundle) || t != "" && t != want {
		r.notCandidate = true
		return
	}
	if err != nil {
		r.refusal = err.Error()
		return
	}
	r.layer = layer
}

// checkReferrer verifies the bundle of a referrer read, holding its size
// of budget meanwhile.
func (v *Verifier) checkReferrer(ctx context.Context, store content.ReadOnlyGraphStorage, subject ocispec.Descriptor, r *referrer, budget *semaphore.Weighted) Signature {
	sig := Signature{Referrer: r.desc.Digest}
	refuse := func(format string, args ...any) Signature {
		sig.Reason = fmt.Sprintf(format, args...)
		return sig
	}
	if r.refusal != "" {
		return refuse("%s", r.refusal)
	}
	if err := budget.Acquire(ctx, r.layer.Size); err != nil {
		return refuse("%v", err)
	}
	defer budget.Release(r.layer.Size)
	bb, err := content.FetchAll(ctx, store, r.layer)
	if err != nil {
		return refuse("fetching the bundle: %v", err)
	}
	b, err := parseBundle(bb)
	if err != nil {
		return refuse("%v", err)
	}
	signer, err := v.checkBundle(b, true, digestArtifact(subject.Digest))
	if err != nil {
		return refuse("%v", err)
	}
	sig.Valid, sig.Signer = true, signer
	return sig
}

// VerifyBlob checks a detached bundle (what `cosign sign-blob --bundle`
// and `plugkit sign FILE` write) over artifact: a message signature over
// its digest, or a DSSE statement whose subject is its digest. artifact is
// read once per key tried, from its start.
func (v *Verifier) VerifyBlob(artifact io.ReadSeeker, bundleJSON []byte) (*Report, error) {
	lim := v.Limits.withDefaults()
	h := digest.SHA256.Digester()
	if _, err := seekCopy(h.Hash(), artifact); err != nil {
		return nil, err
	}
	rep := &Report{Subject: h.Digest(), PredicateType: v.predicateType()}
	sig := Signature{}
	var signer *Signer
	var err error
	if int64(len(bundleJSON)) > lim.MaxBundleBytes {
		err = fmt.Errorf("bundle is %d bytes, over the limit of %d (MaxBundleBytes)", len(bundleJSON), lim.MaxBundleBytes)
	} else {
		var b *bundle.Bundle
		if b, err = parseBundle(bundleJSON); err == nil {
			signer, err = v.checkBundle(b, false, readerArtifact(artifact))
		}
	}
	if err != nil {
		sig.Reason = err.Error()
	} else {
		sig.Valid, sig.Signer = true, signer
	}
	rep.Signatures = []Signature{sig}
	if !sig.Valid {
		return rep, &NotVerifiedError{Report: rep}
	}
	return rep, nil
}

func seekCopy(w io.Writer, r io.ReadSeeker) (int64, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, r)
}

// artifactOption makes the policy's artifact option afresh for each
// attempt (a reader is consumed by one).
type artifactOption func() (verify.ArtifactPolicyOption, error)

func digestArtifact(d digest.Digest) artifactOption {
	return func() (verify.ArtifactPolicyOption, error) {
		raw, err := hex.DecodeString(d.Encoded())
		if err != nil {
			return nil, err
		}
		return verify.WithArtifactDigest(d.Algorithm().String(), raw), nil
	}
}

func readerArtifact(r io.ReadSeeker) artifactOption {
	return func() (verify.ArtifactPolicyOption, error) {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return verify.WithArtifact(r), nil
	}
}

// checkBundle verifies one bundle against v's trust and returns its signer.
// dsse requires a DSSE envelope (OCI signatures); without it a message
// signature is accepted too.
func (v *Verifier) checkBundle(b *bundle.Bundle, dsse bool, artifact artifactOption) (*Signer, error) {
	sc, err := b.SignatureContent()
	if err != nil {
		return nil, err
	}
	message := sc.EnvelopeContent() == nil
	if message && dsse {
		return nil, errors.New("the bundle holds a bare message signature; an OCI signature is a DSSE envelope over an in-toto statement")
	}
	if env := sc.EnvelopeContent(); env != nil && env.RawEnvelope().PayloadType != InTotoPayloadType {
		return nil, fmt.Errorf("DSSE payload type is %q, not an in-toto statement", env.RawEnvelope().PayloadType)
	}
	vc, err := b.VerificationContent()
	if err != nil {
		return nil, err
	}
	var signer *Signer
	var res *verify.VerificationResult
	if vc.Certificate() != nil {
		signer, res, err = v.checkKeyless(b, artifact)
	} else {
		signer, res, err = v.checkKeys(b, vc.PublicKey().Hint(), message, artifact)
	}
	if err != nil {
		return nil, err
	}
	if res.Statement != nil && res.Statement.PredicateType != v.predicateType() {
		return nil, fmt.Errorf("the statement's predicate type is %q, not %q", res.Statement.PredicateType, v.predicateType())
	}
	if res.Statement == nil && v.PredicateType != "" && v.PredicateType != SignPredicateType {
		return nil, fmt.Errorf("a bare message signature is not an attestation of type %q", v.PredicateType)
	}
	return signer, nil
}

// checkKeys tries the key whose ID is the bundle's hint first, then the
// others: the hint is a hint, not a proof.
func (v *Verifier) checkKeys(b *bundle.Bundle, hint string, message bool, artifact artifactOption) (*Signer, *verify.VerificationResult, error) {
	if len(v.Keys) == 0 {
		return nil, nil, fmt.Errorf("signed with a key (hint %s), but no public key is trusted here", hint)
	}
	keys := make([]*PublicKey, 0, len(v.Keys))
	for _, k := range v.Keys {
		if k.ID == hint {
			keys = append(keys, k)
		}
	}
	hinted := len(keys) > 0
	for _, k := range v.Keys {
		if k.ID != hint {
			keys = append(keys, k)
		}
	}
	var first error
	for _, k := range keys {
		res, err := verifyWithKey(b, k, message, artifact)
		if err == nil {
			return &Signer{Key: k.Name, KeyID: k.ID}, res, nil
		}
		if first == nil {
			first = err
		}
	}
	switch {
	case len(keys) == 1 && !hinted:
		return nil, nil, fmt.Errorf("does not verify with key %s: the bundle names another key (hint %s)", keys[0].Name, hint)
	case len(keys) == 1:
		return nil, nil, fmt.Errorf("does not verify with key %s: %v", keys[0].Name, first)
	case hinted:
		return nil, nil, fmt.Errorf("does not verify with any of the %d keys (with %s, whose hint it carries: %v)", len(keys), keys[0].Name, first)
	}
	return nil, nil, fmt.Errorf("does not verify with any of the %d keys (its hint %s names none of them)", len(keys), hint)
}

func verifyWithKey(b *bundle.Bundle, k *PublicKey, message bool, artifact artifactOption) (*verify.VerificationResult, error) {
	tm, err := keyMaterial(k, message)
	if err != nil {
		return nil, err
	}
	ver, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps(), verify.WithoutStatementPredicate())
	if err != nil {
		return nil, err
	}
	art, err := artifact()
	if err != nil {
		return nil, err
	}
	return ver.Verify(b, verify.NewPolicy(art, verify.WithKey()))
}

// checkKeyless verifies a certificate-signed bundle offline against the
// trusted root: the chain to a Fulcio CA at a time vouched for by a
// transparency log entry or an RFC 3161 timestamp, the log entry whenever
// the root lists logs, embedded SCTs whenever it lists CT logs, and the
// certificate's identity against v.Identities.
func (v *Verifier) checkKeyless(b *bundle.Bundle, artifact artifactOption) (*Signer, *verify.VerificationResult, error) {
	if v.TrustedRoot == nil || len(v.Identities) == 0 {
		return nil, nil, errors.New("signed keylessly (with a certificate), but no certificate identity and trusted root are trusted here")
	}
	opts, err := keylessOptions(v.TrustedRoot)
	if err != nil {
		return nil, nil, err
	}
	ver, err := verify.NewVerifier(v.TrustedRoot, opts...)
	if err != nil {
		return nil, nil, err
	}
	art, err := artifact()
	if err != nil {
		return nil, nil, err
	}
	popts := make([]verify.PolicyOption, 0, len(v.Identities))
	for _, id := range v.Identities {
		ci, err := verify.NewShortCertificateIdentity(id.Issuer, id.IssuerRegexp, id.Subject, id.SubjectRegexp)
		if err != nil {
			return nil, nil, err
		}
		popts = append(popts, verify.WithCertificateIdentity(ci))
	}
	res, err := ver.Verify(b, verify.NewPolicy(art, popts...))
	if err != nil {
		return nil, nil, err
	}
	c := res.Signature.Certificate
	return &Signer{Subject: c.SubjectAlternativeName, Issuer: c.Issuer}, res, nil
}

// keylessOptions derives what a keyless signature must carry from what the
// trusted root lists.
func keylessOptions(tm root.TrustedMaterial) ([]verify.VerifierOption, error) {
	logs, tsas := len(tm.RekorLogs()), len(tm.TimestampingAuthorities())
	if len(tm.FulcioCertificateAuthorities()) == 0 {
		return nil, errors.New("the trusted root lists no certificate authority: it cannot verify keyless signatures")
	}
	if logs == 0 && tsas == 0 {
		return nil, errors.New("the trusted root lists no transparency log and no timestamp authority: a keyless signature cannot be dated")
	}
	opts := []verify.VerifierOption{verify.WithObserverTimestamps(1), verify.WithoutStatementPredicate()}
	if logs > 0 {
		opts = append(opts, verify.WithTransparencyLog(1))
	}
	if len(tm.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	return opts, nil
}
