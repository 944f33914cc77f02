package trust

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"oras.land/oras-go/v2/content/oci"
)

// policyFixture is a directory holding a policy's files: keys/acme.pub (the
// public half of acme), cosign.pub, trusted_root.json of a virtual
// Sigstore, and plugins/ for local-directory rules.
type policyFixture struct {
	dir  string
	acme *PrivateKey
	vs   *virtualSigstore
}

func newPolicyFixture(t *testing.T) *policyFixture {
	t.Helper()
	f := &policyFixture{dir: t.TempDir(), acme: newKey(t, "p256"), vs: newVirtualSigstore(t, false, false)}
	if err := os.MkdirAll(filepath.Join(f.dir, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	writePublicKey(t, filepath.Join(f.dir, "keys"), "acme.pub", f.acme.Public)
	writePublicKey(t, f.dir, "cosign.pub", goldenPublicKey(t, "cosign.pub"))
	rootJSON, err := os.ReadFile(f.vs.rootFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "trusted_root.json"), rootJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.dir, "plugins", "kv"), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// write stores a policy document in the fixture and loads it.
func (f *policyFixture) load(t *testing.T, name, doc string) (*Policy, error) {
	t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return LoadPolicy(p)
}

func (f *policyFixture) mustLoad(t *testing.T, name, doc string) *Policy {
	t.Helper()
	p, err := f.load(t, name, doc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// issueExample is the example policy of docs/trust.md, with a real digest.
const issueExample = `{"rules": [
  {"name": "acme-*",   "method": "sigstore-key",      "keys": ["keys/acme.pub"]},
  {"name": "tools-*",  "method": "sigstore-identity", "identities": [{"issuer": "https://token.actions.githubusercontent.com",
                        "subjectRegexp": "^https://github.com/acme/"}], "trustedRoot": "trusted_root.json"},
  {"name": "pinned",   "method": "digest",            "digests": ["sha256:a81d6d7d5c9bda9cdce2f95911cca9442fda4c320501719949742448cb05d8b4"]},
  {"name": "*",        "method": "local-directory",   "directories": ["plugins"]}
]}`

const issueExampleYAML = `# the same policy as YAML
rules:
  - name: acme-*
    method: sigstore-key
    keys: [keys/acme.pub]
  - name: tools-*
    method: sigstore-identity
    identities:
      - issuer: https://token.actions.githubusercontent.com
        subjectRegexp: ^https://github.com/acme/
    trustedRoot: trusted_root.json
  - name: pinned
    method: digest
    digests: ["sha256:a81d6d7d5c9bda9cdce2f95911cca9442fda4c320501719949742448cb05d8b4"]
  - name: "*"
    method: local-directory
    directories: [plugins]
`

func TestPolicyIssueExample(t *testing.T) {
	f := newPolicyFixture(t)
	for _, c := range []struct{ name, doc string }{{"policy.json", issueExample}, {"policy.yaml", issueExampleYAML}} {
		p := f.mustLoad(t, c.name, c.doc)
		if len(p.Rules) != 4 {
			t.Fatalf("%s: %d rules", c.name, len(p.Rules))
		}
		r := p.Rules
		if r[0].Method != MethodSigstoreKey || len(r[0].Keys) != 1 || r[0].Keys[0].ID != f.acme.Public.ID {
			t.Errorf("%s: rule 1 %+v", c.name, r[0])
		}
		if r[1].TrustedRoot == nil || r[1].Identities[0].SubjectRegexp != "^https://github.com/acme/" {
			t.Errorf("%s: rule 2 %+v", c.name, r[1])
		}
		if r[2].Digests[0] != goldenPlugin {
			t.Errorf("%s: rule 3 %+v", c.name, r[2])
		}
		if want := resolveDir(filepath.Join(f.dir, "plugins")); r[3].Directories[0] != want {
			t.Errorf("%s: rule 4 directory %s, want %s (relative to the policy file)", c.name, r[3].Directories[0], want)
		}
		if p.Digest != digest.FromBytes([]byte(c.doc)) {
			t.Errorf("%s: policy digest %s", c.name, p.Digest)
		}
	}
}

// policyErrors are documents the loader refuses, with the pointer and a
// piece of the message. structural marks those the JSON Schema refuses
// too (the rest need files, keys or regexps to be checked).
var policyErrors = []struct {
	name, doc, pointer, msg string
	structural              bool
}{
	{"not an object", `[]`, "", "an object with \"rules\"", true},
	{"no rules", `{}`, "/rules", "array of rules", true},
	{"unknown top-level field", `{"rules": [], "rule": []}`, "/rule", "unknown field", true},
	{"rule not an object", `{"rules": ["acme-*"]}`, "/rules/0", "a rule is an object", true},
	{"no name", `{"rules": [{"method": "digest", "digests": ["` + goldenPlugin + `"]}]}`, "/rules/0/name", "non-empty string", true},
	{"empty name", `{"rules": [{"name": "", "method": "digest", "digests": ["` + goldenPlugin + `"]}]}`, "/rules/0/name", "non-empty string", true},
	{"bad glob", `{"rules": [{"name": "acme-[", "method": "digest", "digests": ["` + goldenPlugin + `"]}]}`, "/rules/0/name", "bad glob", false},
	{"unknown method", `{"rules": [{"name": "*", "method": "trust-me"}]}`, "/rules/0/method", "unknown method", true},
	{"field of another method", `{"rules": [{"name": "*", "method": "digest", "digests": ["` + goldenPlugin + `"], "keys": ["cosign.pub"]}]}`, "/rules/0/keys", "does not belong to a digest rule", true},
	{"unknown rule field", `{"rules": [{"name": "*", "method": "digest", "digests": ["` + goldenPlugin + `"], "digest": "x"}]}`, "/rules/0/digest", "unknown field", true},
	{"empty keys", `{"rules": [{"name": "*", "method": "sigstore-key", "keys": []}]}`, "/rules/0/keys", "non-empty array", true},
	{"missing keys", `{"rules": [{"name": "*", "method": "sigstore-key"}]}`, "/rules/0/keys", "needs \"keys\"", true},
	{"key not a string", `{"rules": [{"name": "*", "method": "sigstore-key", "keys": [1]}]}`, "/rules/0/keys/0", "non-empty string", true},
	{"missing key file", `{"rules": [{"name": "*", "method": "sigstore-key", "keys": ["keys/none.pub"]}]}`, "/rules/0/keys/0", "no such file", false},
	{"key file not a key", `{"rules": [{"name": "*", "method": "sigstore-key", "keys": ["trusted_root.json"]}]}`, "/rules/0/keys/0", "not a PEM public key", false},
	{"inline key not a key", `{"rules": [{"name": "*", "method": "sigstore-key", "keys": ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"]}]}`, "/rules/0/keys/0", "not a PEM public key", false},
	{"bad digest", `{"rules": [{"name": "*", "method": "digest", "digests": ["sha256:ABC"]}]}`, "/rules/0/digests/0", "sha256:<64 hex digits>", true},
	{"md5 digest", `{"rules": [{"name": "*", "method": "digest", "digests": ["md5:d41d8cd98f00b204e9800998ecf8427e"]}]}`, "/rules/0/digests/0", "sha256:<64 hex digits>", true},
	{"no identities", `{"rules": [{"name": "*", "method": "sigstore-identity", "trustedRoot": "trusted_root.json"}]}`, "/rules/0/identities", "needs \"identities\"", true},
	{"identity with both", `{"rules": [{"name": "*", "method": "sigstore-identity", "trustedRoot": "trusted_root.json", "identities": [{"issuer": "a", "issuerRegexp": "b", "subject": "c"}]}]}`, "/rules/0/identities/0", "both issuer and issuerRegexp", true},
	{"identity without subject", `{"rules": [{"name": "*", "method": "sigstore-identity", "trustedRoot": "trusted_root.json", "identities": [{"issuer": "a"}]}]}`, "/rules/0/identities/0", "needs subject or subjectRegexp", true},
	{"identity unknown field", `{"rules": [{"name": "*", "method": "sigstore-identity", "trustedRoot": "trusted_root.json", "identities": [{"issuer": "a", "subject": "b", "san": "c"}]}]}`, "/rules/0/identities/0", "unknown field \"san\"", true},
	{"bad regexp", `{"rules": [{"name": "*", "method": "sigstore-identity", "trustedRoot": "trusted_root.json", "identities": [{"issuer": "a", "subjectRegexp": "(("}]}]}`, "/rules/0/identities/0", "subjectRegexp", false},
	{"no trusted root", `{"rules": [{"name": "*", "method": "sigstore-identity", "identities": [{"issuer": "a", "subject": "b"}]}]}`, "/rules/0/trustedRoot", "nothing is fetched", true},
	{"trusted root not one", `{"rules": [{"name": "*", "method": "sigstore-identity", "trustedRoot": "cosign.pub", "identities": [{"issuer": "a", "subject": "b"}]}]}`, "/rules/0/trustedRoot", "not a Sigstore trusted root", false},
	{"trusted root a number", `{"rules": [{"name": "*", "method": "sigstore-identity", "trustedRoot": 7, "identities": [{"issuer": "a", "subject": "b"}]}]}`, "/rules/0/trustedRoot", "file path or a trusted root object", true},
	{"no directories", `{"rules": [{"name": "*", "method": "local-directory"}]}`, "/rules/0/directories", "needs \"directories\"", true},
	{"second rule", `{"rules": [{"name": "*", "method": "local-directory", "directories": ["plugins"]}, {"name": "x", "method": "digest"}]}`, "/rules/1/digests", "needs \"digests\"", true},
	{"$schema not a string", `{"$schema": 1, "rules": []}`, "/$schema", "must be a string", true},
}

func TestPolicyErrors(t *testing.T) {
	f := newPolicyFixture(t)
	for _, c := range policyErrors {
		_, err := f.load(t, "policy.json", c.doc)
		var pe *PolicyError
		if !errors.As(err, &pe) {
			t.Errorf("%s: err = %v, want a PolicyError", c.name, err)
			continue
		}
		if pe.Pointer != c.pointer || !strings.Contains(pe.Error(), c.msg) {
			t.Errorf("%s: %v (pointer %q), want pointer %q and %q", c.name, err, pe.Pointer, c.pointer, c.msg)
		}
	}
	for _, c := range []struct{ name, file, doc, msg string }{
		{"duplicate name in JSON", "policy.json", `{"rules": [], "rules": []}`, "duplicate"},
		{"JSON syntax", "policy.json", `{"rules": [}`, ""},
		{"duplicate key in YAML", "policy.yaml", "rules: []\nrules: []\n", "already defined"},
		{"YAML non-string key", "policy.yaml", "rules:\n  - {1: 2}\n", "keys must be strings"},
		{"YAML syntax", "policy.yaml", "rules: [\n", ""},
		{"too large", "policy.json", `{"rules": [], "$schema": "` + strings.Repeat("x", MaxPolicyBytes) + `"}`, "MaxPolicyBytes"},
	} {
		_, err := f.load(t, c.file, c.doc)
		var pe *PolicyError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want a PolicyError with %q", c.name, err, c.msg)
		}
	}
	if _, err := LoadPolicy(filepath.Join(f.dir, "absent.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
}

// TestPolicySchemaAgrees checks the published JSON Schema against the
// loader: every example is valid, every structural error invalid.
func TestPolicySchemaAgrees(t *testing.T) {
	c := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(PolicySchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("policy.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	valid := func(doc string) bool {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			return false
		}
		return schema.Validate(v) == nil
	}
	f := newPolicyFixture(t)
	for _, d := range []string{issueExample, `{"rules": []}`, `{"$schema": "x", "rules": [{"name": "a", "method": "digest", "digests": ["` + goldenPlugin + `"], "comment": "why"}]}`} {
		if !valid(d) {
			t.Errorf("schema refuses %s", d)
		}
		if _, err := f.load(t, "policy.json", d); err != nil {
			t.Errorf("loader refuses %s: %v", d, err)
		}
	}
	for _, c := range policyErrors {
		if c.structural && valid(c.doc) {
			t.Errorf("%s: the schema accepts what the loader refuses: %s", c.name, c.doc)
		}
	}
	// The standalone form is valid too.
	p := f.mustLoad(t, "policy.json", issueExample)
	b, err := p.Standalone()
	if err != nil {
		t.Fatal(err)
	}
	if !valid(string(b)) {
		t.Errorf("schema refuses the standalone form: %s", b)
	}
}

func TestPolicyStandalone(t *testing.T) {
	f := newPolicyFixture(t)
	p := f.mustLoad(t, "policy.json", issueExample)
	b, err := p.Standalone()
	if err != nil {
		t.Fatal(err)
	}
	// Elsewhere, with no file beside it, it means the same.
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "policy.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := LoadPolicy(filepath.Join(elsewhere, "policy.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for i := range p.Rules {
		a, b := p.Rules[i], q.Rules[i]
		if a.Name != b.Name || a.Method != b.Method || len(a.Keys) != len(b.Keys) || len(a.Digests) != len(b.Digests) ||
			strings.Join(a.Directories, ",") != strings.Join(b.Directories, ",") || (a.TrustedRoot == nil) != (b.TrustedRoot == nil) {
			t.Errorf("rule %d differs: %+v vs %+v", i, a, b)
		}
		for j := range a.Keys {
			if a.Keys[j].ID != b.Keys[j].ID {
				t.Errorf("rule %d key %d differs", i, j)
			}
		}
	}
}

func admitted(t *testing.T, d *Decision, err error, rule int) {
	t.Helper()
	if err != nil || !d.Admitted || d.Rule == nil || d.Rule.Index != rule {
		t.Fatalf("want admitted by rule %d: err = %v, decision %+v", rule, err, d)
	}
}

func refused(t *testing.T, d *Decision, err error, reason string) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefused) || d.Admitted || !strings.Contains(d.Reason, reason) {
		t.Fatalf("want refused with %q: err = %v, decision %+v", reason, err, d)
	}
}

func TestAdmitDigest(t *testing.T) {
	f := newPolicyFixture(t)
	p := f.mustLoad(t, "policy.json", issueExample)
	ctx := context.Background()
	for _, src := range []SourceKind{SourceBackplane, SourceDirectory} {
		d, err := p.Admit(ctx, &Candidate{Name: "pinned", Source: src, Digest: goldenPlugin})
		admitted(t, d, err, 3)
		if d.Policy != p.Digest || d.Identity != goldenPlugin {
			t.Errorf("decision %+v", d)
		}
		d, err = p.Admit(ctx, &Candidate{Name: "pinned", Source: src, Digest: goldenBundle})
		refused(t, d, err, "is not one of them")
	}
}

func TestAdmitLocalDirectory(t *testing.T) {
	f := newPolicyFixture(t)
	p := f.mustLoad(t, "policy.json", issueExample)
	ctx := context.Background()
	kv := filepath.Join(f.dir, "plugins", "kv")
	d, err := p.Admit(ctx, &Candidate{Name: "kv", Source: SourceDirectory, Dir: kv, Digest: goldenBundle})
	admitted(t, d, err, 4)

	// A sibling whose name starts the same is not under it.
	sibling := filepath.Join(f.dir, "plugins2", "kv")
	if err := os.MkdirAll(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err = p.Admit(ctx, &Candidate{Name: "kv", Source: SourceDirectory, Dir: sibling, Digest: goldenBundle})
	refused(t, d, err, "under none of them")
	// Nor is a link inside plugins/ that leads out of it.
	if err := os.Symlink(sibling, filepath.Join(f.dir, "plugins", "link")); err != nil {
		t.Fatal(err)
	}
	d, err = p.Admit(ctx, &Candidate{Name: "kv", Source: SourceDirectory, Dir: filepath.Join(f.dir, "plugins", "link"), Digest: goldenBundle})
	refused(t, d, err, "under none of them")
	// A relative path, and a path with .. segments, are judged where they lead.
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, filepath.Join(f.dir, "plugins", "kv", "..", "..", "plugins2", "kv"))
	if err != nil {
		t.Fatal(err)
	}
	d, err = p.Admit(ctx, &Candidate{Name: "kv", Source: SourceDirectory, Dir: rel, Digest: goldenBundle})
	refused(t, d, err, "under none of them")
	// Other sources never pass a local-directory rule.
	for _, src := range []SourceKind{SourceArchive, SourceBackplane} {
		d, err = p.Admit(ctx, &Candidate{Name: "kv", Source: src, Digest: goldenBundle})
		refused(t, d, err, "admits only plugins read from a directory")
	}
}

func TestAdmitFirstMatchAndNoMatch(t *testing.T) {
	f := newPolicyFixture(t)
	p := f.mustLoad(t, "policy.json", `{"rules": [
		{"name": "kv", "method": "digest", "digests": ["`+goldenPlugin+`"]},
		{"name": "k*", "method": "local-directory", "directories": ["plugins"]}
	]}`)
	ctx := context.Background()
	kv := filepath.Join(f.dir, "plugins", "kv")
	// The first matching rule decides, even to refuse: the second would
	// have admitted it.
	d, err := p.Admit(ctx, &Candidate{Name: "kv", Source: SourceDirectory, Dir: kv, Digest: goldenBundle})
	refused(t, d, err, "rule 1 (kv, digest)")
	if d.Rule.Index != 1 {
		t.Errorf("rule %+v", d.Rule)
	}
	d, err = p.Admit(ctx, &Candidate{Name: "kx", Source: SourceDirectory, Dir: kv, Digest: goldenBundle})
	admitted(t, d, err, 2)
	d, err = p.Admit(ctx, &Candidate{Name: "other", Source: SourceDirectory, Dir: kv, Digest: goldenBundle})
	refused(t, d, err, `no rule of`)
	if d.Rule != nil {
		t.Errorf("no match names rule %+v", d.Rule)
	}
	// An empty policy refuses everything.
	empty := f.mustLoad(t, "empty.json", `{"rules": []}`)
	d, err = empty.Admit(ctx, &Candidate{Name: "kv", Source: SourceDirectory, Dir: kv, Digest: goldenBundle})
	refused(t, d, err, "no rule")
}

func TestAdmitSigstoreKeyOCI(t *testing.T) {
	f := newPolicyFixture(t)
	ctx := context.Background()
	store, err := oci.NewFromTar(ctx, filepath.Join(goldenDir, "signed-plugin.tar"))
	if err != nil {
		t.Fatal(err)
	}
	m := resolveRef(t, store, "1.2.0")
	p := f.mustLoad(t, "policy.json", `{"rules": [
		{"name": "release-*", "method": "sigstore-key", "keys": ["keys/acme.pub", "cosign.pub"]},
		{"name": "*", "method": "sigstore-key", "keys": ["keys/acme.pub"]}
	]}`)
	d, err := p.Admit(ctx, &Candidate{Name: "release-notes", Source: SourceOCI, Digest: m.Digest, Store: store, Manifest: m})
	admitted(t, d, err, 1)
	if d.Signer == nil || d.Signer.KeyID != goldenHint || !strings.HasSuffix(d.Signer.Key, "cosign.pub") {
		t.Errorf("signer %+v", d.Signer)
	}
	d, err = p.Admit(ctx, &Candidate{Name: "notes", Source: SourceOCI, Digest: m.Digest, Store: store, Manifest: m})
	refused(t, d, err, "rule 2")
	if d.Report == nil || len(d.Report.Signatures) != 1 || d.Report.Signatures[0].Reason == "" {
		t.Errorf("report %+v", d.Report)
	}
	// Sources without signatures are refused by a signature rule.
	for _, src := range []SourceKind{SourceDirectory, SourceBackplane} {
		d, err = p.Admit(ctx, &Candidate{Name: "release-notes", Source: src, Dir: f.dir, Digest: m.Digest})
		refused(t, d, err, "carries none")
	}
	// A candidate whose digest is not its manifest's is an error, not a
	// decision to admit.
	d, err = p.Admit(ctx, &Candidate{Name: "release-notes", Source: SourceOCI, Digest: goldenBundle, Store: store, Manifest: m})
	if err == nil || errors.Is(err, ErrRefused) || d.Admitted {
		t.Errorf("mismatched digest: %v %+v", err, d)
	}
}

func TestAdmitSigstoreKeyArchive(t *testing.T) {
	f := newPolicyFixture(t)
	ctx := context.Background()
	p := f.mustLoad(t, "policy.json", `{"rules": [{"name": "acme-*", "method": "sigstore-key", "keys": ["keys/acme.pub"]}]}`)
	archive := []byte("pretend this is acme-kv-1.0.0.tar.gz")
	good, err := SignBlob(ctx, archive, f.acme)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := SignBlob(ctx, archive, newKey(t, "p256"))
	if err != nil {
		t.Fatal(err)
	}
	c := &Candidate{Name: "acme-kv", Source: SourceArchive, Digest: digest.FromBytes(archive), Archive: archive, Bundles: [][]byte{bad, good}}
	d, err := p.Admit(ctx, c)
	admitted(t, d, err, 1)
	if len(d.Report.Signatures) != 2 || d.Signer.KeyID != f.acme.Public.ID {
		t.Errorf("decision %+v", d)
	}
	c.Bundles = [][]byte{bad}
	d, err = p.Admit(ctx, c)
	refused(t, d, err, "does not verify")
	c.Bundles = nil
	d, err = p.Admit(ctx, c)
	refused(t, d, err, "no signature")
	c.Bundles, c.Digest = [][]byte{good}, goldenPlugin
	if _, err := p.Admit(ctx, c); err == nil || errors.Is(err, ErrRefused) {
		t.Errorf("digest that is not the archive's: %v", err)
	}
}

func TestAdmitSigstoreIdentity(t *testing.T) {
	f := newPolicyFixture(t)
	ctx := context.Background()
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	stmt, _ := newStatement(subject.Digest, SignPredicateType, nil)
	b := f.vs.sign(t, ghIdentity, ghIssuer, stmt)
	attachForTest(t, store, subject, b)
	p := f.mustLoad(t, "policy.json", issueExample)
	d, err := p.Admit(ctx, &Candidate{Name: "tools-release-notes", Source: SourceOCI, Digest: subject.Digest, Store: store, Manifest: subject})
	admitted(t, d, err, 2)
	if d.Signer.Subject != ghIdentity || d.Signer.Issuer != ghIssuer {
		t.Errorf("signer %+v", d.Signer)
	}
	q := f.mustLoad(t, "policy2.json", strings.Replace(issueExample, "^https://github.com/acme/", "^https://github.com/other/", 1))
	d, err = q.Admit(ctx, &Candidate{Name: "tools-release-notes", Source: SourceOCI, Digest: subject.Digest, Store: store, Manifest: subject})
	refused(t, d, err, "rule 2")
	js, _ := json.Marshal(d)
	if !strings.Contains(string(js), `"reason"`) {
		t.Errorf("decision JSON %s", js)
	}
}
