package trust

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"
	"github.com/sigstore/sigstore-go/pkg/root"
	"go.yaml.in/yaml/v3"

	"github.com/plugkit/plugkit/internal/boundedfile"
	"github.com/plugkit/plugkit/internal/jsontree"
	"github.com/plugkit/plugkit/snapshot"
)

// PolicySchema is the JSON Schema (draft 2020-12) of a policy file. The
// loader applies every rule it states, and more (files exist, keys parse,
// regexps compile).
//
//go:embed policy.schema.json
var PolicySchema []byte

// MaxPolicyBytes bounds a policy file, and each trusted root it names.
const MaxPolicyBytes = 1 << 20

// Method is how a rule decides.
type Method string

// The methods: Colossus's trust methods, as data.
const (
	// MethodSigstoreKey admits a plugin with a valid signature by one of
	// the rule's public keys (OCI referrers, or a detached bundle beside
	// an archive).
	MethodSigstoreKey Method = "sigstore-key"
	// MethodSigstoreIdentity admits a plugin with a valid keyless
	// signature whose certificate matches one of the rule's identities
	// under the rule's trusted root.
	MethodSigstoreIdentity Method = "sigstore-identity"
	// MethodDigest admits a plugin whose identity is one of the rule's
	// digests.
	MethodDigest Method = "digest"
	// MethodLocalDirectory admits a plugin read from a directory under one
	// of the rule's directories.
	MethodLocalDirectory Method = "local-directory"
)

// methodFields lists each method's own fields; a field of another method
// in a rule is an error (a "keys" on a digest rule is a mistake that would
// otherwise be silently ignored).
var methodFields = map[Method][]string{
	MethodSigstoreKey:      {"keys"},
	MethodSigstoreIdentity: {"identities", "trustedRoot"},
	MethodDigest:           {"digests"},
	MethodLocalDirectory:   {"directories"},
}

// Policy is an ordered list of rules: the first rule whose name glob
// matches a plugin's name decides, and no match is a refusal.
type Policy struct {
	Rules []*Rule
	// Digest is the SHA-256 of the policy file's bytes, which lock files
	// record.
	Digest digest.Digest
	// Source names where the policy was read from.
	Source string
	// Limits bound the signature checks the policy makes.
	Limits Limits
}

// Rule is one rule, with its paths resolved and its keys and trusted root
// loaded.
type Rule struct {
	// Index is the rule's position in the file, from 0.
	Index int
	// Name is a glob (path.Match: *, ?, [a-z]) over plugin names.
	Name   string
	Method Method
	// Keys are the sigstore-key rule's public keys.
	Keys []*PublicKey
	// Identities and TrustedRoot are the sigstore-identity rule's.
	Identities  []Identity
	TrustedRoot root.TrustedMaterial
	// Digests are the digest rule's identities.
	Digests []digest.Digest
	// Directories are the local-directory rule's, absolute, with links
	// resolved where they exist.
	Directories []string

	keyPEM   [][]byte
	rootJSON []byte
}

func (r *Rule) String() string { return fmt.Sprintf("rule %d (%s, %s)", r.Index+1, r.Name, r.Method) }

// PolicyError locates a problem in a policy file by its RFC 6901 pointer.
type PolicyError struct {
	Source  string
	Pointer string
	Err     error
}

func (e *PolicyError) Error() string {
	if e.Pointer == "" {
		return fmt.Sprintf("%s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Source, e.Pointer, e.Err)
}

func (e *PolicyError) Unwrap() error { return e.Err }

// LoadPolicy reads a policy file, JSON or YAML (by extension: .json, .yaml,
// .yml; otherwise JSON when it starts with "{"). Relative paths in it are
// relative to the file's directory.
func LoadPolicy(file string) (*Policy, error) {
	data, err := boundedfile.Read(file, MaxPolicyBytes, "MaxPolicyBytes")
	if errors.Is(err, snapshot.ErrLimit) {
		return nil, &PolicyError{Source: file, Err: err}
	}
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	yamlFile := false
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yaml", ".yml":
		yamlFile = true
	case ".json":
	default:
		yamlFile = !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))
	}
	return ParsePolicy(file, data, dir, yamlFile)
}

// ParsePolicy reads a policy document. source names it in errors, dir is
// the directory relative paths start from, and yamlDoc selects YAML over
// JSON. Keys and trusted roots named by path are read now.
func ParsePolicy(source string, data []byte, dir string, yamlDoc bool) (*Policy, error) {
	perr := func(ptr string, format string, args ...any) error {
		return &PolicyError{Source: source, Pointer: ptr, Err: fmt.Errorf(format, args...)}
	}
	var doc any
	if yamlDoc {
		var err error
		if doc, err = decodeYAML(data); err != nil {
			return nil, &PolicyError{Source: source, Err: err}
		}
	} else {
		// jsontree first: it refuses duplicate names, which
		// encoding/json would silently resolve.
		if err := jsontree.Check(data, 0); err != nil {
			return nil, &PolicyError{Source: source, Err: err}
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, &PolicyError{Source: source, Err: err}
		}
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, perr("", "a policy is an object with \"rules\"")
	}
	if s, ok := top["$schema"]; ok {
		if _, ok := s.(string); !ok {
			return nil, perr("/$schema", "\"$schema\" must be a string")
		}
	}
	for k := range top {
		if k != "rules" && k != "$schema" {
			return nil, perr("/"+jsontree.EscapePointer(k), "unknown field %q (a policy has \"rules\")", k)
		}
	}
	rules, ok := top["rules"].([]any)
	if !ok {
		return nil, perr("/rules", "\"rules\" must be an array of rules")
	}
	sum := sha256.Sum256(data)
	p := &Policy{Source: source, Digest: digest.NewDigestFromBytes(digest.SHA256, sum[:])}
	for i, r := range rules {
		rule, err := parseRule(r, i, fmt.Sprintf("/rules/%d", i), dir, perr)
		if err != nil {
			return nil, err
		}
		p.Rules = append(p.Rules, rule)
	}
	return p, nil
}

// decodeYAML decodes a YAML document into the same shapes encoding/json
// gives, refusing what JSON cannot say.
func decodeYAML(data []byte) (any, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	return jsonShape(doc)
}

func jsonShape(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			s, err := jsonShape(e)
			if err != nil {
				return nil, err
			}
			x[k] = s
		}
		return x, nil
	case map[any]any:
		return nil, errors.New("mapping keys must be strings")
	case []any:
		for i, e := range x {
			s, err := jsonShape(e)
			if err != nil {
				return nil, err
			}
			x[i] = s
		}
		return x, nil
	}
	return v, nil
}

func parseRule(v any, index int, ptr, dir string, perr func(string, string, ...any) error) (*Rule, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, perr(ptr, "a rule is an object")
	}
	str := func(field string) (string, error) {
		s, ok := obj[field].(string)
		if !ok || s == "" {
			return "", perr(ptr+"/"+field, "%q must be a non-empty string", field)
		}
		return s, nil
	}
	r := &Rule{Index: index}
	var err error
	if r.Name, err = str("name"); err != nil {
		return nil, err
	}
	if _, err := path.Match(r.Name, ""); err != nil {
		return nil, perr(ptr+"/name", "bad glob %q: %v", r.Name, err)
	}
	m, err := str("method")
	if err != nil {
		return nil, err
	}
	r.Method = Method(m)
	own, ok := methodFields[r.Method]
	if !ok {
		return nil, perr(ptr+"/method", "unknown method %q (want sigstore-key, sigstore-identity, digest or local-directory)", m)
	}
	for k := range obj {
		if k == "name" || k == "method" || k == "comment" || contains(own, k) {
			continue
		}
		if isMethodField(k) {
			return nil, perr(ptr+"/"+jsontree.EscapePointer(k), "%q does not belong to a %s rule (it takes %s)", k, r.Method, strings.Join(quoteAll(own), " and "))
		}
		return nil, perr(ptr+"/"+jsontree.EscapePointer(k), "unknown field %q", k)
	}
	list := func(field string) ([]string, error) {
		a, ok := obj[field].([]any)
		if !ok || len(a) == 0 {
			return nil, perr(ptr+"/"+field, "a %s rule needs %q: a non-empty array", r.Method, field)
		}
		out := make([]string, len(a))
		for i, e := range a {
			s, ok := e.(string)
			if !ok || s == "" {
				return nil, perr(fmt.Sprintf("%s/%s/%d", ptr, field, i), "must be a non-empty string")
			}
			out[i] = s
		}
		return out, nil
	}
	switch r.Method {
	case MethodSigstoreKey:
		keys, err := list("keys")
		if err != nil {
			return nil, err
		}
		for i, k := range keys {
			kp := fmt.Sprintf("%s/keys/%d", ptr, i)
			var pemBytes []byte
			name := k
			if strings.HasPrefix(strings.TrimSpace(k), "-----BEGIN") {
				pemBytes, name = []byte(k), fmt.Sprintf("rules[%d].keys[%d]", index, i)
			} else if pemBytes, err = readKeyFile(resolve(dir, k)); err != nil {
				return nil, perr(kp, "%v", err)
			}
			pub, err := ParsePublicKey(name, pemBytes)
			if err != nil {
				return nil, perr(kp, "%v", err)
			}
			r.Keys = append(r.Keys, pub)
			r.keyPEM = append(r.keyPEM, pemBytes)
		}
	case MethodSigstoreIdentity:
		ids, ok := obj["identities"].([]any)
		if !ok || len(ids) == 0 {
			return nil, perr(ptr+"/identities", "a sigstore-identity rule needs \"identities\": a non-empty array")
		}
		for i, e := range ids {
			id, err := parseIdentity(e)
			if err != nil {
				return nil, perr(fmt.Sprintf("%s/identities/%d", ptr, i), "%v", err)
			}
			r.Identities = append(r.Identities, id)
		}
		if r.TrustedRoot, r.rootJSON, err = parseTrustedRootField(obj["trustedRoot"], dir); err != nil {
			return nil, perr(ptr+"/trustedRoot", "%v", err)
		}
	case MethodDigest:
		ds, err := list("digests")
		if err != nil {
			return nil, err
		}
		for i, d := range ds {
			dg, err := ParseIdentity(d)
			if err != nil {
				return nil, perr(fmt.Sprintf("%s/digests/%d", ptr, i), "%v", err)
			}
			r.Digests = append(r.Digests, dg)
		}
	case MethodLocalDirectory:
		ds, err := list("directories")
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			r.Directories = append(r.Directories, resolveDir(resolve(dir, d)))
		}
	}
	return r, nil
}

func isMethodField(k string) bool {
	for _, fs := range methodFields {
		if contains(fs, k) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteAll(list []string) []string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return q
}

func parseIdentity(v any) (Identity, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Identity{}, errors.New("an identity is an object with issuer or issuerRegexp, and subject or subjectRegexp")
	}
	var id Identity
	fields := map[string]*string{"issuer": &id.Issuer, "issuerRegexp": &id.IssuerRegexp, "subject": &id.Subject, "subjectRegexp": &id.SubjectRegexp}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		dst, ok := fields[k]
		if !ok {
			return Identity{}, fmt.Errorf("unknown field %q (an identity has issuer, issuerRegexp, subject, subjectRegexp)", k)
		}
		s, ok := obj[k].(string)
		if !ok || s == "" {
			return Identity{}, fmt.Errorf("%q must be a non-empty string", k)
		}
		*dst = s
	}
	return id, id.Check()
}

// parseTrustedRootField reads a rule's trustedRoot: a path to a Sigstore
// trusted root JSON file, or the trusted root object itself.
func parseTrustedRootField(v any, dir string) (root.TrustedMaterial, []byte, error) {
	var b []byte
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil, nil, errors.New("must name a trusted root file")
		}
		var err error
		if b, err = boundedfile.Read(resolve(dir, x), MaxPolicyBytes, "MaxPolicyBytes"); err != nil {
			return nil, nil, err
		}
	case map[string]any:
		var err error
		if b, err = json.Marshal(x); err != nil {
			return nil, nil, err
		}
	case nil:
		return nil, nil, errors.New("a sigstore-identity rule needs \"trustedRoot\": the Sigstore trusted root JSON (a file path or the object); nothing is fetched")
	default:
		return nil, nil, errors.New("must be a file path or a trusted root object")
	}
	tr, err := ParseTrustedRoot(b)
	if err != nil {
		return nil, nil, err
	}
	return tr, b, nil
}

// ParseTrustedRoot reads a Sigstore trusted root JSON document (what
// `cosign trusted-root create` writes, or the public-good instance's
// trusted_root.json copied from TUF).
func ParseTrustedRoot(b []byte) (*root.TrustedRoot, error) {
	tr, err := root.NewTrustedRootFromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("not a Sigstore trusted root: %w", err)
	}
	return tr, nil
}

// LoadTrustedRoot reads a trusted root file; see ParseTrustedRoot.
func LoadTrustedRoot(file string) (*root.TrustedRoot, error) {
	b, err := boundedfile.Read(file, MaxPolicyBytes, "MaxPolicyBytes")
	if err != nil {
		return nil, err
	}
	tr, err := ParseTrustedRoot(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return tr, nil
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// resolveDir resolves links in an existing directory's path, so that a
// plugin read through a link is judged by where it really is.
func resolveDir(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// ParseIdentity reads a plugin identity: "sha256:" and 64 lowercase hex
// digits (an OCI manifest digest, or an archive's SHA-256).
func ParseIdentity(s string) (digest.Digest, error) {
	// Validate before Algorithm, which panics on a string without ':'.
	d := digest.Digest(s)
	if d.Validate() != nil || d.Algorithm() != digest.SHA256 {
		return "", fmt.Errorf("identity %q is not sha256:<64 hex digits>", s)
	}
	return d, nil
}

// Standalone returns the policy as JSON that needs no other file: keys as
// PEM, trusted roots as objects, directories absolute. An installer that
// keeps a copy of a policy keeps this one.
func (p *Policy) Standalone() ([]byte, error) {
	type rule struct {
		Name        string          `json:"name"`
		Method      Method          `json:"method"`
		Keys        []string        `json:"keys,omitempty"`
		Identities  []Identity      `json:"identities,omitempty"`
		TrustedRoot json.RawMessage `json:"trustedRoot,omitempty"`
		Digests     []digest.Digest `json:"digests,omitempty"`
		Directories []string        `json:"directories,omitempty"`
	}
	out := struct {
		Rules []rule `json:"rules"`
	}{Rules: []rule{}}
	for _, r := range p.Rules {
		x := rule{Name: r.Name, Method: r.Method, Identities: r.Identities, Digests: r.Digests, Directories: r.Directories}
		for _, k := range r.keyPEM {
			x.Keys = append(x.Keys, string(k))
		}
		if r.rootJSON != nil {
			var buf bytes.Buffer
			if err := json.Compact(&buf, r.rootJSON); err != nil {
				return nil, err
			}
			x.TrustedRoot = buf.Bytes()
		}
		out.Rules = append(out.Rules, x)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
