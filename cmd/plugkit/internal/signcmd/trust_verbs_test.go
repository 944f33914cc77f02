package signcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/trust"
)

const cosignFixtures = "../../../../trust/testdata/cosign"

// verifyDoc is verify's --json document, as a script reads it.
type verifyDoc struct {
	Error *struct {
		Code, Message string
	}
	Diagnostics   []json.RawMessage
	Reference     string
	Digest        string
	Name, Version string
	Verified      bool
	PredicateType string
	Signatures    []trust.Signature
	Skipped       int
	Unread        int
	Decision      *trust.Decision
}

// verifyJSON runs verify --json and decodes its one document.
func verifyJSON(t *testing.T, wantExit int, args ...string) verifyDoc {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"verify", "--json"}, args...)...)
	if code != wantExit {
		t.Fatalf("verify %v: exit %d, want %d\n%s%s", args, code, wantExit, stdout, stderr)
	}
	var d verifyDoc
	clitest.DecodeOne(t, stdout, &d)
	if d.Diagnostics == nil {
		t.Errorf("verify %v: no diagnostics array", args)
	}
	if (wantExit == 0) != d.Verified || (wantExit == 1) != (d.Error != nil) {
		t.Errorf("verify %v: document %+v", args, d)
	}
	return d
}

// newKeyPair runs key generate in dir with an empty password.
func newKeyPair(t *testing.T, dir, name string) (priv, pub string) {
	t.Helper()
	t.Setenv("COSIGN_PASSWORD", "")
	prefix := filepath.Join(dir, name)
	mustRun(t, "key", "generate", "--output-key-prefix", prefix)
	return prefix + ".key", prefix + ".pub"
}

// The whole path against a real registry without the referrers API: push,
// sign, verify with the right and the wrong key, attest, then carry it all
// to a layout and an air-gap tar and verify there, offline.
func TestSignVerifyVerbs(t *testing.T) {
	clitest.OCIEnv(t)
	dir := t.TempDir()
	priv, pub := newKeyPair(t, dir, "acme")
	_, otherPub := newKeyPair(t, dir, "other")
	reg := testservice.StartRegistry(t)
	ref := "oci://" + reg.Host + "/plugins/release-notes:1.2.0"
	var pushed struct{ Digest string }
	clitest.DecodeOne(t, mustRun(t, "push", clitest.ExamplePlugin(), ref, "--plain-http", "--json"), &pushed)

	var signed signedResult
	clitest.DecodeOne(t, mustRun(t, "sign", ref, "--key", priv, "--plain-http", "--json"), &signed)
	if signed.Digest != pushed.Digest || signed.Name != "release-notes" || signed.PredicateType != trust.SignPredicateType ||
		!strings.HasPrefix(signed.Referrer.Digest, "sha256:") || signed.Key.KeyID == "" {
		t.Fatalf("sign --json: %+v", signed)
	}

	d := verifyJSON(t, 0, ref, "--key", pub, "--plain-http")
	if d.Digest != pushed.Digest || len(d.Signatures) != 1 || d.Signatures[0].Signer.KeyID != signed.Key.KeyID {
		t.Fatalf("verify: %+v", d)
	}
	d = verifyJSON(t, 1, ref, "--key", otherPub, "--plain-http")
	if d.Error.Code != command.CodeNotVerified || d.Signatures[0].Valid || !strings.Contains(d.Signatures[0].Reason, "other.pub") {
		t.Fatalf("verify, other key: %+v", d)
	}
	// Text output: the verdict and each candidate, the error on stderr.
	code, stdout, stderr := runCLI(t, "verify", ref, "--key", otherPub, "--plain-http")
	if code != 1 || !strings.Contains(stdout, "NOT verified release-notes 1.2.0") || !strings.Contains(stdout, "invalid  "+signed.Referrer.Digest) || !strings.Contains(stderr, "not valid") {
		t.Errorf("verify text: exit %d\n%s%s", code, stdout, stderr)
	}

	predicate := filepath.Join(dir, "provenance.json")
	if err := os.WriteFile(predicate, []byte(`{"buildDefinition": {"buildType": "https://example.com/build/v1"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var attested signedResult
	clitest.DecodeOne(t, mustRun(t, "attest", ref, "--predicate", predicate, "--type", "slsaprovenance1", "--key", priv, "--plain-http", "--json"), &attested)
	if attested.PredicateType != "https://slsa.dev/provenance/v1" {
		t.Fatalf("attest: %+v", attested)
	}
	d = verifyJSON(t, 0, ref, "--key", pub, "--type", "slsaprovenance1", "--plain-http")
	if d.PredicateType != "https://slsa.dev/provenance/v1" || len(d.Signatures) != 1 || d.Skipped != 1 {
		t.Fatalf("verify --type: %+v", d)
	}
	verifyJSON(t, 1, ref, "--key", pub, "--type", "spdxjson", "--plain-http")

	// Carried to a layout directory and an air-gap tar, and verified there.
	layout := filepath.Join(dir, "layout")
	mustRun(t, "copy", ref, "oci-layout:"+layout+":1.2.0", "--plain-http")
	tarFile := filepath.Join(dir, "airgap.tar")
	mustRun(t, "export", ref, tarFile, "--plain-http")
	for _, where := range []string{"oci-layout:" + layout + ":1.2.0", "oci-layout:" + tarFile + "@" + pushed.Digest} {
		d = verifyJSON(t, 0, where, "--key", pub)
		if d.Digest != pushed.Digest || d.Skipped != 1 {
			t.Errorf("%s: %+v", where, d)
		}
		verifyJSON(t, 1, where, "--key", otherPub)
	}
	// A tar is read-only: sign where it came from.
	code, _, stderr = runCLI(t, "sign", "oci-layout:"+tarFile, "--key", priv)
	if code != 1 || !strings.Contains(stderr, "read-only") {
		t.Errorf("sign a tar: exit %d, %s", code, stderr)
	}
	// Signing the layout writes a sorted index.json it still reads.
	mustRun(t, "sign", "oci-layout:"+layout+":1.2.0", "--key", priv)
	if d = verifyJSON(t, 0, "oci-layout:"+layout, "--key", pub); len(d.Signatures) != 2 {
		t.Errorf("layout after a second signature: %+v", d)
	}
}

// The golden files cosign made: plugkit verifies them with cosign.pub and
// refuses them with other.pub.
func TestVerifyVerbGolden(t *testing.T) {
	fx := func(name string) string { return filepath.Join(cosignFixtures, name) }
	tarRef := "oci-layout:" + fx("signed-plugin.tar")
	for _, ref := range []string{tarRef, tarRef + ":1.2.0", tarRef + "@sha256:a81d6d7d5c9bda9cdce2f95911cca9442fda4c320501719949742448cb05d8b4"} {
		d := verifyJSON(t, 0, ref, "--key", fx("cosign.pub"))
		if d.Name != "release-notes" || d.Signatures[0].Referrer != "sha256:aa3c08383987f74c193866f846b55b7dd0df58d12a6d11fb435a0d79fe1789f3" {
			t.Errorf("%s: %+v", ref, d)
		}
		verifyJSON(t, 1, ref, "--key", fx("other.pub"))
	}
	verifyJSON(t, 0, fx("blob.txt"), "--bundle", fx("blob.sigstore.json"), "--key", fx("cosign.pub"))
	verifyJSON(t, 1, fx("blob.txt"), "--bundle", fx("blob.sigstore.json"), "--key", fx("other.pub"))
	other := filepath.Join(t.TempDir(), "blob.txt")
	if err := os.WriteFile(other, []byte("other bytes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	verifyJSON(t, 1, other, "--bundle", fx("blob.sigstore.json"), "--key", fx("cosign.pub"))
	// Limits: a bundle over --max-bundle-bytes is refused with its reason.
	d := verifyJSON(t, 1, tarRef, "--key", fx("cosign.pub"), "--max-bundle-bytes", "100")
	if !strings.Contains(d.Signatures[0].Reason, "MaxBundleBytes") {
		t.Errorf("--max-bundle-bytes: %+v", d)
	}

	// A keyless check of a keyed signature is refused with the reason.
	d = verifyJSON(t, 1, tarRef, "--certificate-identity", "a@example.com", "--certificate-oidc-issuer", "https://accounts.example.com",
		"--trusted-root", fx("empty-trusted-root.json"))
	if !strings.Contains(d.Signatures[0].Reason, "signed with a key") {
		t.Errorf("keyless: %+v", d)
	}
}

func TestSignBlobVerbs(t *testing.T) {
	dir := t.TempDir()
	priv, pub := newKeyPair(t, dir, "cosign")
	file := filepath.Join(dir, "release-notes-1.2.0.tar.gz")
	mustRun(t, "pack", clitest.ExamplePlugin(), "-o", file)
	var res signFileResult
	clitest.DecodeOne(t, mustRun(t, "sign", file, "--key", priv, "--json"), &res)
	if res.Bundle != file+".sigstore.json" || !strings.HasPrefix(res.Digest, "sha256:") {
		t.Fatalf("sign FILE: %+v", res)
	}
	d := verifyJSON(t, 0, file, "--key", pub)
	if d.Digest != res.Digest {
		t.Errorf("verify FILE: %+v", d)
	}
	// Replacing a bundle needs --force; another output needs --bundle.
	if code, _, stderr := runCLI(t, "sign", file, "--key", priv); code != 1 || !strings.Contains(stderr, "--force") {
		t.Errorf("existing bundle: exit %d %s", code, stderr)
	}
	mustRun(t, "sign", file, "--key", priv, "--force")
	alt := filepath.Join(dir, "alt.json")
	mustRun(t, "sign", file, "--key", priv, "--bundle", alt)
	verifyJSON(t, 0, file, "--key", pub, "--bundle", alt)
	// The bytes changed: refused.
	if err := os.WriteFile(file, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	verifyJSON(t, 1, file, "--key", pub)
}

func TestKeyGenerateVerb(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("COSIGN_PASSWORD", "s3cret")
	prefix := filepath.Join(dir, "release")
	var res keyResult
	clitest.DecodeOne(t, mustRun(t, "key", "generate", "--output-key-prefix", prefix, "--json"), &res)
	if res.PrivateKey != prefix+".key" || res.PublicKey != prefix+".pub" {
		t.Fatalf("%+v", res)
	}
	fi, err := os.Stat(res.PrivateKey)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v (%v)", fi.Mode(), err)
	}
	k, err := trust.LoadPrivateKey(res.PrivateKey, func() ([]byte, error) { return []byte("s3cret"), nil })
	if err != nil || k.Public.ID != res.KeyID {
		t.Fatalf("key does not load with its password: %v", err)
	}
	pub, err := trust.LoadPublicKey(res.PublicKey)
	if err != nil || pub.ID != res.KeyID {
		t.Fatalf("public key: %v", err)
	}
	// Never overwritten without --force; a refusal changes nothing.
	before, _ := os.ReadFile(res.PrivateKey)
	if code, stdout, _ := runCLI(t, "key", "generate", "--output-key-prefix", prefix, "--json"); code != 1 || clitest.ErrorCode(t, stdout) != command.CodeFailed {
		t.Fatalf("existing: exit %d %s", code, stdout)
	}
	if after, _ := os.ReadFile(res.PrivateKey); string(after) != string(before) {
		t.Error("refused generate changed the key")
	}
	mustRun(t, "key", "generate", "--output-key-prefix", prefix, "--force")
	// With the wrong password, sign says so.
	t.Setenv("COSIGN_PASSWORD", "wrong")
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("x"), 0o644)
	if code, stdout, _ := runCLI(t, "sign", file, "--key", res.PrivateKey, "--json"); code != 1 || clitest.ErrorCode(t, stdout) != command.CodePassword {
		t.Errorf("wrong password: exit %d %s", code, stdout)
	}
	if _, err := os.Stat(file + ".sigstore.json"); !os.IsNotExist(err) {
		t.Error("a refused sign wrote a bundle")
	}
	// Without COSIGN_PASSWORD and without a terminal: a usage error.
	os.Unsetenv("COSIGN_PASSWORD")
	if code, _, stderr := runCLI(t, "key", "generate", "--output-key-prefix", filepath.Join(dir, "x")); code != 2 || !strings.Contains(stderr, "COSIGN_PASSWORD") {
		t.Errorf("no password: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.key")); !os.IsNotExist(err) {
		t.Error("a refused generate wrote a key")
	}
	// Into a directory that does not exist: an I/O error, nothing written.
	t.Setenv("COSIGN_PASSWORD", "")
	if code, stdout, _ := runCLI(t, "key", "generate", "--output-key-prefix", filepath.Join(dir, "none", "k"), "--json"); code != 2 || clitest.ErrorCode(t, stdout) != command.CodeIO {
		t.Errorf("missing directory: exit %d %s", code, stdout)
	}
}

// Every refusal of the signing verbs, with its exit status and code.
func TestTrustVerbRefusals(t *testing.T) {
	dir := t.TempDir()
	priv, pub := newKeyPair(t, dir, "k")
	fx := func(name string) string { return filepath.Join(cosignFixtures, name) }
	tarRef := "oci-layout:" + fx("signed-plugin.tar")
	notObject := filepath.Join(dir, "list.json")
	os.WriteFile(notObject, []byte(`[1]`), 0o644)
	badPolicy := filepath.Join(dir, "policy.json")
	os.WriteFile(badPolicy, []byte(`{"rules": [{"name": "*", "method": "digest", "keys": ["k.pub"]}]}`), 0o644)
	for _, c := range []struct {
		args []string
		exit int
		code string
	}{
		{[]string{"sign", clitest.ExamplePlugin(), "--key", priv}, 2, command.CodeUsage},
		{[]string{"sign", tarRef, "--key", priv}, 1, command.CodeFailed},
		{[]string{"sign", tarRef}, 2, command.CodeUsage},
		{[]string{"sign", tarRef, "--key", filepath.Join(dir, "absent.key")}, 2, command.CodeIO},
		{[]string{"sign", tarRef, "--key", pub}, 1, command.CodeFailed},
		{[]string{"sign", "oci-layout:" + filepath.Join(dir, "nolayout"), "--key", priv}, 2, command.CodeIO},
		{[]string{"sign", tarRef, "--key", priv, "--bundle", "x"}, 2, command.CodeUsage},
		{[]string{"attest", fx("blob.txt"), "--predicate", notObject, "--type", "custom", "--key", priv}, 2, command.CodeUsage},
		{[]string{"attest", tarRef, "--predicate", notObject, "--type", "custom", "--key", priv}, 1, command.CodeFailed},
		{[]string{"attest", tarRef, "--predicate", notObject, "--type", "not a uri", "--key", priv}, 2, command.CodeUsage},
		{[]string{"attest", tarRef, "--type", "custom", "--key", priv}, 2, command.CodeUsage},
		{[]string{"verify", tarRef}, 2, command.CodeUsage},
		{[]string{"verify", clitest.ExamplePlugin(), "--key", pub}, 2, command.CodeUsage},
		{[]string{"verify", tarRef, "--key", pub, "--policy", badPolicy}, 2, command.CodeUsage},
		{[]string{"verify", tarRef, "--policy", badPolicy}, 2, command.CodePolicyInvalid},
		{[]string{"verify", tarRef, "--key", fx("blob.txt")}, 2, command.CodeUsage},
		{[]string{"verify", tarRef, "--certificate-identity", "a@example.com", "--trusted-root", fx("empty-trusted-root.json")}, 2, command.CodeUsage},
		{[]string{"verify", tarRef, "--certificate-identity", "a@example.com", "--certificate-oidc-issuer", "x"}, 2, command.CodeUsage},
		{[]string{"verify", tarRef, "--certificate-identity-regexp", "((", "--certificate-oidc-issuer", "x", "--trusted-root", fx("empty-trusted-root.json")}, 2, command.CodeUsage},
		{[]string{"verify", tarRef, "--key", pub, "--type", "nonsense"}, 2, command.CodeUsage},
		{[]string{"verify", fx("blob.txt"), "--key", pub}, 2, command.CodeIO},
		{[]string{"verify", "oci-layout:" + fx("blob.txt"), "--key", pub}, 2, ""},
		{[]string{"verify", tarRef, "--key", pub, "--max-signatures", "0"}, 2, command.CodeUsage},
		{[]string{"verify", fx("blob.txt"), "--bundle", fx("blob.sigstore.json"), "--key", pub, "--max-bundle-bytes", "100"}, 1, command.CodeLimit},
	} {
		code, stdout, stderr := runCLI(t, append(c.args, "--json")...)
		if code != c.exit {
			t.Errorf("%v: exit %d, want %d\n%s%s", c.args, code, c.exit, stdout, stderr)
			continue
		}
		if got := clitest.ErrorCode(t, stdout); c.code != "" && got != c.code {
			t.Errorf("%v: code %q, want %q (%s)", c.args, got, c.code, stdout)
		}
	}
}

// verify --policy: each method through the CLI, the rule and signer named,
// a refusal with its reason.
func TestVerifyPolicyVerb(t *testing.T) {
	dir := t.TempDir()
	fx := func(name string) string { p, _ := filepath.Abs(filepath.Join(cosignFixtures, name)); return p }
	demo := clitest.WritePackPlugin(t, clitest.PackManifest) // "demo", in a directory of its own
	priv, _ := newKeyPair(t, dir, "k")
	archiveFile := filepath.Join(dir, "demo-1.2.0.tar.gz")
	mustRun(t, "pack", demo, "-o", archiveFile)
	policy := filepath.Join(dir, "policy.yaml")
	doc := `rules:
  - name: release-*
    method: sigstore-key
    keys: [` + fx("cosign.pub") + `]
  - name: demo
    method: local-directory
    directories: [` + filepath.Dir(demo) + `]
  - name: "*"
    method: sigstore-key
    keys: [k.pub]
`
	if err := os.WriteFile(policy, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	tarRef := "oci-layout:" + fx("signed-plugin.tar")
	d := verifyJSON(t, 0, tarRef, "--policy", policy)
	if d.Decision == nil || d.Decision.Rule.Index != 1 || d.Decision.Signer == nil || d.Decision.Signer.KeyID == "" || d.Decision.Policy == "" {
		t.Fatalf("sigstore-key: %+v", d.Decision)
	}
	code, stdout, _ := runCLI(t, "verify", tarRef, "--policy", policy)
	if code != 0 || !strings.Contains(stdout, "rule 1 (release-*, sigstore-key)") {
		t.Errorf("text: exit %d\n%s", code, stdout)
	}

	d = verifyJSON(t, 0, demo, "--policy", policy)
	if d.Decision.Rule.Index != 2 || d.Name != "demo" {
		t.Errorf("local-directory: %+v", d.Decision)
	}
	// release-notes from a directory: its rule wants a signature.
	d = verifyJSON(t, 1, clitest.ExamplePlugin(), "--policy", policy)
	if d.Error.Code != command.CodePolicyRefused || d.Decision.Rule.Index != 1 || !strings.Contains(d.Decision.Reason, "carries none") {
		t.Errorf("directory under a key rule: %+v", d.Decision)
	}
	// The demo archive is not a directory: rule 2 refuses it.
	d = verifyJSON(t, 1, archiveFile, "--policy", policy)
	if d.Decision.Rule.Index != 2 {
		t.Errorf("archive under a directory rule: %+v", d.Decision)
	}
	// Renamed so that rule 3 decides: admitted with its detached bundle,
	// refused without it.
	doc3 := strings.Replace(doc, "name: demo", "name: nothing", 1)
	if err := os.WriteFile(policy, []byte(doc3), 0o644); err != nil {
		t.Fatal(err)
	}
	d = verifyJSON(t, 1, archiveFile, "--policy", policy)
	if d.Decision.Rule.Index != 3 || !strings.Contains(d.Error.Message, "no signature") {
		t.Errorf("archive without a bundle: %+v", d)
	}
	mustRun(t, "sign", archiveFile, "--key", priv)
	d = verifyJSON(t, 0, archiveFile, "--policy", policy)
	if d.Decision.Rule.Index != 3 || d.Decision.Signer == nil {
		t.Errorf("archive with its bundle: %+v", d.Decision)
	}
}
