package agentplugin

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/plugkit/plugkit/internal/jsontree"
	"github.com/plugkit/plugkit/snapshot"
)

const manifestPath = "plugin.json"

// manifest loads and validates plugin.json (spec 5). It reports whether the
// plugin may load: false means reject.
func (l *loader) manifest() bool {
	switch k, why := l.kind(manifestPath); {
	case why == snapshot.ReasonSpecial:
		l.report(Diagnostic{Severity: Error, Code: CodeManifestNotFile, Path: manifestPath,
			Message: "plugin.json is not a regular file"})
		return false
	case why == snapshot.ReasonBroken:
		l.report(Diagnostic{Severity: Error, Code: CodeManifestMissing, Path: manifestPath,
			Message: "plugin.json is a broken link"})
		return false
	case why != "":
		l.report(Diagnostic{Severity: Error, Code: CodeManifestEscapes, Path: manifestPath,
			Message: "plugin.json does not resolve within the plugin root (" + string(why) + ")"})
		return false
	case k == snapshot.Dir:
		l.report(Diagnostic{Severity: Error, Code: CodeManifestNotFile, Path: manifestPath,
			Message: "plugin.json is a directory, not a regular file"})
		return false
	case k == snapshot.Absent:
		l.report(Diagnostic{Severity: Error, Code: CodeManifestMissing, Path: manifestPath,
			Message: "no plugin.json at the plugin root"})
		return false
	}
	d, root, ok := l.parseJSON(manifestPath, Error, CodeManifestJSON, CodeManifestDuplicateKey)
	if !ok {
		return false
	}
	if root.Kind() != jsontree.Object {
		l.at(Error, CodeManifestNotObject, d, ptr(""), root.Offset(),
			"plugin.json must hold a JSON object, not %s", article(root.Kind()))
		return false
	}
	m := &manifestCheck{l: l, doc: d}
	if !m.schema(root) {
		return false
	}
	m.rule = manifestRule(l.version)
	m.fields(root)
	return m.ok
}

// manifestCheck validates the members of one plugin.json object.
type manifestCheck struct {
	l    *loader
	doc  *jsonDoc
	rule *rule // the fields of the manifest and their types
	ok   bool
}

func (m *manifestCheck) fail(code string, p pointer, n jsontree.Node, format string, args ...any) {
	m.l.at(Error, code, m.doc, p, n.Offset(), format, args...)
	m.ok = false
}

// failMsg is fail with a message built only when it is kept (see atMsg).
func (m *manifestCheck) failMsg(code string, p pointer, n jsontree.Node, msg func() string) {
	m.l.atMsg(Error, code, m.doc, p, n.Offset(), msg)
	m.ok = false
}

// schema selects the rules from $schema (spec 5.2). Nothing is fetched.
func (m *manifestCheck) schema(root jsontree.Node) bool {
	s, ok := root.Get("$schema")
	switch {
	case !ok:
		m.l.at(Error, CodeManifestRequired, m.doc, ptr(""), root.Offset(),
			"required field \"$schema\" is missing")
		if _, ok := root.Get("name"); !ok {
			m.l.at(Error, CodeManifestRequired, m.doc, ptr(""), root.Offset(),
				"required field \"name\" is missing")
		}
		return false
	case s.Kind() != jsontree.String:
		m.l.at(Error, CodeManifestType, m.doc, ptr("/$schema"), s.Offset(),
			"\"$schema\" must be a string, not %s", article(s.Kind()))
		return false
	}
	v := versionByManifestSchema(s.Str())
	if v == nil {
		m.l.at(Error, CodeManifestSchema, m.doc, ptr("/$schema"), s.Offset(),
			"unsupported Agent Plugins version: %q is not a recognised plugin manifest schema (supported: %s)",
			s.Str(), strings.Join(SupportedVersions(), ", "))
		return false
	}
	m.l.version = v
	m.l.pkg.SpecVersion = v.Version
	m.ok = true
	return true
}

// fields checks every member against the closed manifest schema of 5.2–5.6.
func (m *manifestCheck) fields(root jsontree.Node) {
	pkg := m.l.pkg
	pkg.Manifest = make(map[string]json.RawMessage, root.Len())
	if _, ok := root.Get("name"); !ok {
		m.fail(CodeManifestRequired, ptr(""), root, "required field \"name\" is missing")
	}
	names := jsontree.NewNames(root) // the keys of Manifest, one allocation
	for mem := range root.Members() {
		name := names.Name(mem.Key)
		pkg.Manifest[name] = json.RawMessage(mem.Value.Raw())
		p := ptrMember("", mem.Key)
		v := mem.Value
		if _, known := m.rule.field(name); !known {
			// Spec 5.2: report and ignore each unknown field; assign it no
			// meaning. It stays in Manifest as the original object.
			m.l.atMsg(Warning, CodeManifestUnknownField, m.doc, p, mem.Offset(), func() string {
				return fmt.Sprintf("unknown top-level field %q is ignored (client data belongs under \"extensions\")", name)
			})
			continue
		}
		switch name {
		case "$schema":
		case "name":
			if s, ok := m.str(p, v); ok {
				if why := checkPluginName(s); why != "" {
					m.fail(CodeManifestName, p, v, "plugin name %q is invalid: %s", s, why)
				} else {
					pkg.Name = s
				}
			}
		case "version":
			pkg.Version, _ = m.str(p, v)
		case "description":
			pkg.Description, _ = m.str(p, v)
		case "homepage":
			pkg.Homepage, _ = m.str(p, v)
		case "repository":
			pkg.Repository, _ = m.str(p, v)
		case "license":
			pkg.License, _ = m.str(p, v)
		case "keywords":
			m.keywords(p.String(), v)
		case "author":
			m.author(p.String(), v)
		case "extensions":
			m.extensions(p.String(), v)
		}
	}
}

func (m *manifestCheck) str(p pointer, v jsontree.Node) (string, bool) {
	if v.Kind() != jsontree.String {
		m.fail(CodeManifestType, p, v, "%q must be a string, not %s", strings.TrimPrefix(p.String(), "/"), article(v.Kind()))
		return "", false
	}
	return v.Str(), true
}

func (m *manifestCheck) keywords(p string, v jsontree.Node) {
	if v.Kind() != jsontree.Array {
		m.fail(CodeManifestType, ptr(p), v, "\"keywords\" must be an array of strings, not %s", article(v.Kind()))
		return
	}
	kw := make([]string, 0, countStrings(v))
	for i, e := range v.Elems() {
		if e.Kind() != jsontree.String {
			m.fail(CodeManifestType, ptrIndex(p, i), e, "\"keywords\" must hold only strings, not %s", article(e.Kind()))
			continue
		}
		kw = append(kw, e.Str())
	}
	m.l.pkg.Keywords = kw
}

func (m *manifestCheck) author(p string, v jsontree.Node) {
	if v.Kind() != jsontree.Object {
		m.fail(CodeManifestType, ptr(p), v, "\"author\" must be an object, not %s", article(v.Kind()))
		return
	}
	a := &Author{}
	authorRule, _ := m.rule.field("author")
	for mem := range v.Members() {
		name := mem.Name()
		if _, known := authorRule.field(name); !known {
			m.failMsg(CodeManifestAuthor, ptrMember(p, mem.Key), mem.Value, func() string {
				return fmt.Sprintf("\"author\" may hold only name, email and url, not %q", name)
			})
			continue
		}
		if mem.Value.Kind() != jsontree.String {
			m.fail(CodeManifestAuthor, ptrMember(p, mem.Key), mem.Value, "author %q must be a string, not %s", name, article(mem.Value.Kind()))
			continue
		}
		switch name {
		case "name":
			a.Name = mem.Value.Str()
		case "email":
			a.Email = mem.Value.Str()
		case "url":
			a.URL = mem.Value.Str()
		}
	}
	m.l.pkg.Author = a
}

// extensions applies spec 8.1: a non-object field is reported and ignored;
// each member value must be an object, whose contents are never validated.
func (m *manifestCheck) extensions(p string, v jsontree.Node) {
	if v.Kind() != jsontree.Object {
		m.l.at(Warning, CodeManifestExtensionsNotObj, m.doc, ptr(p), v.Offset(),
			"\"extensions\" must be an object, not %s; it is ignored", article(v.Kind()))
		return
	}
	pkg := m.l.pkg
	pkg.ExtensionData = make(map[string]json.RawMessage, v.Len())
	names := jsontree.NewNames(v) // the keys of ExtensionData, one allocation
	for mem := range v.Members() {
		name := names.Name(mem.Key)
		if mem.Value.Kind() != jsontree.Object {
			m.failMsg(CodeManifestExtensionType, ptrMember(p, mem.Key), mem.Value, func() string {
				return fmt.Sprintf("extension %q must be an object, not %s", name, article(mem.Value.Kind()))
			})
			continue
		}
		if !IsNamespace(name) {
			m.l.atMsg(Warning, CodeManifestExtensionNamespace, m.doc, ptrMember(p, mem.Key), mem.Offset(), func() string {
				return fmt.Sprintf("extension key %q is not a reverse-domain namespace such as com.example.client", name)
			})
		}
		pkg.Extensions = append(pkg.Extensions, name)
		pkg.ExtensionData[name] = json.RawMessage(mem.Value.Raw())
	}
	sort.Strings(pkg.Extensions)
}

// checkPluginName applies spec 5.5 and returns why name is invalid, or "".
func checkPluginName(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case len(name) > 64:
		return "it is longer than 64 characters"
	case strings.Contains(name, "--"):
		return "it contains consecutive hyphens"
	case strings.Contains(name, ".."):
		return "it contains consecutive periods"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isLowerAlnum(c) && c != '-' && c != '.' {
			return "only lowercase letters a-z, digits, hyphens and periods are allowed"
		}
	}
	if !isLowerAlnum(name[0]) || !isLowerAlnum(name[len(name)-1]) {
		return "it must start and end with a lowercase letter or digit"
	}
	return ""
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// IsNamespace reports whether s looks like a reverse-domain extension
// namespace: two or more dot-separated DNS labels, the first made of
// letters only, as a top-level domain is (com.example.client).
func IsNamespace(s string) bool {
	labels := strings.Split(s, ".")
	if len(labels) < 2 || len(s) > 253 {
		return false
	}
	for i, lab := range labels {
		if lab == "" || len(lab) > 63 || lab[0] == '-' || lab[len(lab)-1] == '-' {
			return false
		}
		// The first label stands for a top-level domain: letters only.
		if i == 0 && strings.IndexFunc(lab, func(r rune) bool { return r > 0x7f || !isLetter(byte(r)) }) >= 0 {
			return false
		}
		for j := 0; j < len(lab); j++ {
			c := lab[j]
			if !isLetter(c) && !(c >= '0' && c <= '9') && c != '-' {
				return false
			}
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// countStrings counts the strings among the elements of array a, to size
// what holds them: an array of anything else costs nothing more.
func countStrings(a jsontree.Node) int {
	n := 0
	for _, e := range a.Elems() {
		if e.Kind() == jsontree.String {
			n++
		}
	}
	return n
}

// articled names a JSON kind with its article in messages ("an array").
// It is a byte, so passing it to a message costs no allocation: building
// diagnostics that MaxDiagnostics then drops must cost nothing.
type articled jsontree.Kind

var articles = [...]string{
	jsontree.Null: "null", jsontree.Bool: "a boolean", jsontree.Number: "a number",
	jsontree.String: "a string", jsontree.Array: "an array", jsontree.Object: "an object",
}

func (a articled) String() string { return articles[a] }

func article(k jsontree.Kind) articled { return articled(k) }
