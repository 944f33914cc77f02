package trust

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"google.golang.org/protobuf/encoding/protojson"
)

// virtualSigstore is sigstore-go's in-memory Fulcio, timestamp authority
// and Rekor, and a trusted root for it as a file.
type virtualSigstore struct {
	vs       *ca.VirtualSigstore
	root     *root.TrustedRoot
	rootFile string
	withLog  bool
}

// newVirtualSigstore makes one. withLog puts its transparency log in the
// trusted root (so entries are required); withCT its CT log (so SCTs are).
func newVirtualSigstore(t testing.TB, withLog, withCT bool) *virtualSigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	logs, cts := map[string]*root.TransparencyLog{}, map[string]*root.TransparencyLog{}
	if withLog {
		// The virtual log's ID is its hex key ID as text; a trusted root
		// file holds the raw key ID, which log entries name.
		for id, l := range vs.RekorLogs() {
			raw, err := hex.DecodeString(id)
			if err != nil {
				t.Fatal(err)
			}
			c := *l
			c.ID = raw
			logs[id] = &c
		}
	}
	if withCT {
		cts = vs.CTLogs()
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), cts, vs.TimestampingAuthorities(), logs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadTrustedRoot(file)
	if err != nil {
		t.Fatal(err)
	}
	return &virtualSigstore{vs: vs, root: loaded, rootFile: file, withLog: withLog}
}

// sign makes a keyless bundle v0.3 of statement for identity and issuer:
// a Fulcio certificate, a DSSE envelope, an RFC 3161 timestamp, and (when
// the trusted root has the log) a Rekor entry with its inclusion proof.
func (v *virtualSigstore) sign(t testing.TB, identity, issuer string, statement []byte) []byte {
	t.Helper()
	ent, err := v.vs.AttestAtTime(identity, issuer, statement, time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := ent.VerificationContent()
	sc, _ := ent.SignatureContent()
	env := sc.EnvelopeContent().RawEnvelope()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		t.Fatal(err)
	}
	tss, _ := ent.Timestamps()
	vm := &protobundle.VerificationMaterial{
		Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
		TimestampVerificationData: &protobundle.TimestampVerificationData{},
	}
	for _, ts := range tss {
		vm.TimestampVerificationData.Rfc3161Timestamps = append(vm.TimestampVerificationData.Rfc3161Timestamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
	}
	if v.withLog {
		entries, _ := ent.TlogEntries()
		tle := entries[0].TransparencyLogEntry()
		tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
		vm.TlogEntries = []*protorekor.TransparencyLogEntry{tle}
	}
	pb := &protobundle.Bundle{
		MediaType:            BundleMediaType,
		VerificationMaterial: vm,
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload:     payload,
			PayloadType: env.PayloadType,
			Signatures:  []*protodsse.Signature{{Sig: sig}},
		}},
	}
	b, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	ghIssuer   = "https://token.actions.githubusercontent.com"
	ghIdentity = "https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v1.0.0"
)

func TestKeylessIdentities(t *testing.T) {
	ctx := context.Background()
	for _, withLog := range []bool{false, true} {
		name := "timestamp authority only"
		if withLog {
			name = "with transparency log"
		}
		t.Run(name, func(t *testing.T) {
			v := newVirtualSigstore(t, withLog, false)
			store, _ := goldenLayout(t)
			subject := resolveRef(t, store, "1.2.0")
			stmt, _ := newStatement(subject.Digest, SignPredicateType, nil)
			attachForTest(t, store, subject, v.sign(t, ghIdentity, ghIssuer, stmt))

			cases := []struct {
				name string
				id   Identity
				ok   bool
			}{
				{"exact", Identity{Issuer: ghIssuer, Subject: ghIdentity}, true},
				{"subject regexp", Identity{Issuer: ghIssuer, SubjectRegexp: "^https://github.com/acme/"}, true},
				{"issuer regexp", Identity{IssuerRegexp: `^https://token\.actions\.`, Subject: ghIdentity}, true},
				{"wrong subject", Identity{Issuer: ghIssuer, Subject: "https://github.com/evil/tools/.github/workflows/release.yml@refs/tags/v1.0.0"}, false},
				{"wrong subject regexp", Identity{Issuer: ghIssuer, SubjectRegexp: "^https://github.com/evil/"}, false},
				{"wrong issuer", Identity{Issuer: "https://accounts.google.com", Subject: ghIdentity}, false},
				{"wrong issuer regexp", Identity{IssuerRegexp: "^https://gitlab", Subject: ghIdentity}, false},
			}
			for _, c := range cases {
				ver := &Verifier{Identities: []Identity{c.id}, TrustedRoot: v.root}
				rep, err := ver.VerifyOCI(ctx, store, subject)
				if c.ok {
					if err != nil {
						t.Errorf("%s: %v %+v", c.name, err, rep)
						continue
					}
					s := rep.Valid()[0].Signer
					if s.Subject != ghIdentity || s.Issuer != ghIssuer {
						t.Errorf("%s: signer %+v", c.name, s)
					}
					continue
				}
				if !errors.Is(err, ErrNotVerified) {
					t.Errorf("%s: err = %v, want refused", c.name, err)
				}
			}

			// Trusting another Sigstore (its own root) refuses it.
			other := newVirtualSigstore(t, withLog, false)
			ver := &Verifier{Identities: []Identity{{Issuer: ghIssuer, Subject: ghIdentity}}, TrustedRoot: other.root}
			if _, err := ver.VerifyOCI(ctx, store, subject); !errors.Is(err, ErrNotVerified) {
				t.Errorf("another trusted root: err = %v", err)
			}
			// Keys alone do not accept a keyless signature.
			ver = &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}}
			rep, err := ver.VerifyOCI(ctx, store, subject)
			if err != nil || len(rep.Signatures) != 2 {
				t.Fatalf("keys: %v %+v", err, rep)
			}
			for _, s := range rep.Signatures {
				if !s.Valid && !strings.Contains(s.Reason, "keylessly") {
					t.Errorf("keyless signature with keys only: %q", s.Reason)
				}
			}
		})
	}
}

// TestKeylessNeedsWhatTheRootLists: a root that lists a transparency log
// refuses a bundle without a log entry; one that lists a CT log refuses a
// certificate without SCTs; one with neither log nor timestamp authority
// cannot date a keyless signature.
func TestKeylessNeedsWhatTheRootLists(t *testing.T) {
	noLog := newVirtualSigstore(t, false, false)
	stmt, _ := newStatement(goldenPlugin, SignPredicateType, nil)
	b := noLog.sign(t, ghIdentity, ghIssuer, stmt)
	bu, err := parseBundle(b)
	if err != nil {
		t.Fatal(err)
	}
	id := []Identity{{Issuer: ghIssuer, Subject: ghIdentity}}
	if _, err := (&Verifier{Identities: id, TrustedRoot: noLog.root}).checkBundle(bu, true, digestArtifact(goldenPlugin)); err != nil {
		t.Fatalf("baseline: %v", err)
	}

	withLog, err := root.NewTrustedRoot(root.TrustedRootMediaType01, noLog.vs.FulcioCertificateAuthorities(), nil, noLog.vs.TimestampingAuthorities(), noLog.vs.RekorLogs())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Verifier{Identities: id, TrustedRoot: withLog}).checkBundle(bu, true, digestArtifact(goldenPlugin)); err == nil {
		t.Error("a bundle without a log entry passed a root that lists a log")
	}
	withCT, err := root.NewTrustedRoot(root.TrustedRootMediaType01, noLog.vs.FulcioCertificateAuthorities(), noLog.vs.CTLogs(), noLog.vs.TimestampingAuthorities(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Verifier{Identities: id, TrustedRoot: withCT}).checkBundle(bu, true, digestArtifact(goldenPlugin)); err == nil {
		t.Error("a certificate without SCTs passed a root that lists a CT log")
	}
	bare, err := root.NewTrustedRoot(root.TrustedRootMediaType01, noLog.vs.FulcioCertificateAuthorities(), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&Verifier{Identities: id, TrustedRoot: bare}).checkBundle(bu, true, digestArtifact(goldenPlugin))
	if err == nil || !strings.Contains(err.Error(), "cannot be dated") {
		t.Errorf("root with no log and no TSA: %v", err)
	}
	// The statement's subject still decides.
	if _, err := (&Verifier{Identities: id, TrustedRoot: noLog.root}).checkBundle(bu, true, digestArtifact(goldenBundle)); err == nil {
		t.Error("a keyless signature of another digest passed")
	}
	// The empty trusted root cosign uses for keys verifies nothing keyless.
	empty, err := ParseTrustedRoot(golden(t, "empty-trusted-root.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Verifier{Identities: id, TrustedRoot: empty}).checkBundle(bu, true, digestArtifact(goldenPlugin)); err == nil {
		t.Error("the empty trusted root verified a keyless signature")
	}
}
