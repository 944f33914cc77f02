package distribution

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Extra holds the members of a response object that this version of the
// client does not know, as the server sent them, so that a newer server's
// fields are not lost: a caller can read them, and encoding the value
// again writes them back.
type Extra map[string]json.RawMessage

// knownKeys caches the JSON member names of each struct type.
var knownKeys sync.Map // reflect.Type → map[string]bool

func keysOf(t reflect.Type) map[string]bool {
	if k, ok := knownKeys.Load(t); ok {
		return k.(map[string]bool)
	}
	keys := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys[name] = true
	}
	knownKeys.Store(t, keys)
	return keys
}

// encodeWith encodes v, a struct without JSON methods of its own, and
// appends the extra members that no field of v names, sorted by name.
func encodeWith(v any, extra Extra) ([]byte, error) {
	// No HTML escaping: an encoder that wants it applies it to this
	// output, and the registry's page budgets count on text not growing
	// six-fold.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(out.Bytes(), []byte("\n"))
	if len(extra) == 0 {
		return b, nil
	}
	known := keysOf(reflect.TypeOf(v))
	var names []string
	for k := range extra {
		if !known[k] {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // without the closing brace
	for _, k := range names {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// The types that keep unknown members. MarshalJSON encodes from a twin
// type without the methods, so that encoding/json does the field work;
// UnmarshalJSON parses once and fills the whole value from the tree (see
// decode.go).
type (
	releaseFields       Release
	catalogPluginFields CatalogPlugin
	catalogFields       Catalog
)

// UnmarshalJSON decodes a Release and keeps unknown members in Extra.
func (r *Release) UnmarshalJSON(b []byte) error { return decodeTree(b, r.decode) }

// MarshalJSON encodes a Release with the members of Extra.
func (r Release) MarshalJSON() ([]byte, error) { return encodeWith(releaseFields(r), r.Extra) }

// UnmarshalJSON decodes a CatalogPlugin and keeps unknown members in
// Extra.
func (p *CatalogPlugin) UnmarshalJSON(b []byte) error { return decodeTree(b, p.decode) }

// MarshalJSON encodes a CatalogPlugin with the members of Extra.
func (p CatalogPlugin) MarshalJSON() ([]byte, error) {
	return encodeWith(catalogPluginFields(p), p.Extra)
}

// UnmarshalJSON decodes a Catalog page and keeps unknown members in
// Extra.
func (c *Catalog) UnmarshalJSON(b []byte) error { return decodeTree(b, c.decode) }

// MarshalJSON encodes a Catalog with the members of Extra.
func (c Catalog) MarshalJSON() ([]byte, error) { return encodeWith(catalogFields(c), c.Extra) }
