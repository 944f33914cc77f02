package distribution

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/plugkit/plugkit/internal/jsontree"
)

// maxResponseDepth bounds the nesting of a decoded response, as
// encoding/json bounds it.
const maxResponseDepth = 10000

// treeDecoder is a response type that fills itself, nested values
// included, from one parse of the document. Decoding a catalog page
// through encoding/json and a map of its members would scan every byte
// once per nesting level and twice per level for the members kept in
// Extra.
type treeDecoder interface {
	decode(jsontree.Node) error
}

// decodeResponse decodes a response body into out, in one pass for the
// types that keep unknown members.
func decodeResponse(b []byte, out any) error {
	if d, ok := out.(treeDecoder); ok {
		return decodeTree(b, d.decode)
	}
	return json.Unmarshal(b, out)
}

// decodeTree parses b strictly (no duplicate member names: a server that
// sends two values for one name is ambiguous) and hands its root to fill;
// null is left alone, as encoding/json leaves it.
func decodeTree(b []byte, fill func(jsontree.Node) error) error {
	t, err := jsontree.Parse(b, maxResponseDepth)
	if err != nil {
		return err
	}
	if t.Root().Kind() == jsontree.Null {
		return nil
	}
	return fill(t.Root())
}

// members walks the members of the object n: field sets the one called
// name and reports whether it knows it; the members it does not know are
// returned as Extra, copied out of the source. Names match exactly, as the
// server writes them.
func members(n jsontree.Node, what string, field func(name string, v jsontree.Node) (bool, error)) (Extra, error) {
	if n.Kind() != jsontree.Object {
		return nil, fmt.Errorf("%s: %s where an object belongs", what, n.Kind())
	}
	var extra Extra
	for m := range n.Members() {
		name := m.Name()
		known, err := field(name, m.Value)
		if err != nil {
			return nil, fmt.Errorf("%s member %q: %w", what, name, err)
		}
		if !known {
			if extra == nil {
				extra = Extra{}
			}
			extra[name] = bytes.Clone(m.Value.Raw())
		}
	}
	return extra, nil
}

// kindError says that v is not of the kind a field needs.
func kindError(v jsontree.Node, want string) error {
	return fmt.Errorf("%s where %s belongs", v.Kind(), want)
}

// setScalar sets *dst from v, a value of kind k converted by conv; null
// leaves *dst alone, as encoding/json does.
func setScalar[T any](v jsontree.Node, k jsontree.Kind, want string, dst *T, conv func(jsontree.Node) (T, error)) error {
	switch v.Kind() {
	case k:
		x, err := conv(v)
		if err != nil {
			return err
		}
		*dst = x
	case jsontree.Null:
	default:
		return kindError(v, want)
	}
	return nil
}

func setString(v jsontree.Node, dst *string) error {
	return setScalar(v, jsontree.String, "a string", dst, func(v jsontree.Node) (string, error) { return v.Str(), nil })
}

func setBool(v jsontree.Node, dst *bool) error {
	return setScalar(v, jsontree.Bool, "a boolean", dst, func(v jsontree.Node) (bool, error) { return v.Bool(), nil })
}

func setInt(v jsontree.Node, dst *int64) error {
	return setScalar(v, jsontree.Number, "a number", dst, func(v jsontree.Node) (int64, error) {
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s is not a 64-bit integer", v.Raw())
		}
		return n, nil
	})
}

func setTime(v jsontree.Node, dst *time.Time) error {
	return setScalar(v, jsontree.String, "an RFC 3339 time", dst, func(v jsontree.Node) (t time.Time, err error) {
		return t, t.UnmarshalText([]byte(v.Str()))
	})
}

// setArray decodes the elements of an array, each by decode into a new
// element; null leaves the slice nil.
func setArray[T any](v jsontree.Node, dst *[]T, decode func(*T, jsontree.Node) error) error {
	switch v.Kind() {
	case jsontree.Array:
		s := make([]T, v.Len())
		for i, e := range v.Elems() {
			if err := decode(&s[i], e); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		*dst = s
	case jsontree.Null:
	default:
		return kindError(v, "an array")
	}
	return nil
}

func (r *Release) decode(n jsontree.Node) error {
	*r = Release{}
	extra, err := members(n, "release", func(name string, v jsontree.Node) (bool, error) {
		switch name {
		case "id":
			return true, setString(v, &r.ID)
		case "plugin_id":
			return true, setString(v, &r.PluginID)
		case "version":
			return true, setString(v, &r.Version)
		case "description":
			return true, setString(v, &r.Description)
		case "artifact_digest":
			return true, setString(v, &r.ArtifactDigest)
		case "size":
			return true, setInt(v, &r.Size)
		case "yanked":
			return true, setBool(v, &r.Yanked)
		case "published_at":
			return true, setTime(v, &r.PublishedAt)
		}
		return false, nil
	})
	r.Extra = extra
	return err
}

func (p *CatalogPlugin) decode(n jsontree.Node) error {
	*p = CatalogPlugin{}
	extra, err := members(n, "plugin", func(name string, v jsontree.Node) (bool, error) {
		switch name {
		case "id":
			return true, setString(v, &p.ID)
		case "name":
			return true, setString(v, &p.Name)
		case "description":
			return true, setString(v, &p.Description)
		case "channels":
			return true, p.decodeChannels(v)
		case "releases":
			return true, setArray(v, &p.Releases, (*Release).decode)
		}
		return false, nil
	})
	p.Extra = extra
	return err
}

func (p *CatalogPlugin) decodeChannels(v jsontree.Node) error {
	if v.Kind() == jsontree.Null {
		return nil
	}
	p.Channels = map[string]string{}
	_, err := members(v, "channels", func(name string, rel jsontree.Node) (bool, error) {
		var id string
		err := setString(rel, &id)
		p.Channels[name] = id
		return true, err
	})
	return err
}

func (c *Catalog) decode(n jsontree.Node) error {
	*c = Catalog{}
	extra, err := members(n, "catalog", func(name string, v jsontree.Node) (bool, error) {
		switch name {
		case "plugins":
			return true, setArray(v, &c.Plugins, (*CatalogPlugin).decode)
		case "next_cursor":
			return true, setString(v, &c.NextCursor)
		}
		return false, nil
	})
	c.Extra = extra
	return err
}
