package distribution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/internal/jsontree"
)

// TestDecodeRefusesWrongKinds: a member of the wrong type is an error that
// names the member, at every level, as encoding/json refuses it; so is
// ambiguous or broken JSON.
func TestDecodeRefusesWrongKinds(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"plugins":{}}`, `"plugins"`},
		{`{"plugins":[1]}`, `[0]`},
		{`{"plugins":[{"id":7}]}`, `"id"`},
		{`{"plugins":[{"channels":{"stable":1}}]}`, `"stable"`},
		{`{"plugins":[{"channels":[]}]}`, `"channels"`},
		{`{"plugins":[{"releases":[{"size":1.5}]}]}`, `"size"`},
		{`{"plugins":[{"releases":[{"size":"1"}]}]}`, `"size"`},
		{`{"plugins":[{"releases":[{"yanked":"no"}]}]}`, `"yanked"`},
		{`{"plugins":[{"releases":[{"published_at":"yesterday"}]}]}`, `"published_at"`},
		{`{"next_cursor":false}`, `"next_cursor"`},
		{`[]`, `object`},
	} {
		var c Catalog
		err := json.Unmarshal([]byte(tc.in), &c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %s", tc.in, err, tc.want)
		}
		if err := decodeResponse([]byte(tc.in), &c); err == nil {
			t.Errorf("%s: decodeResponse accepted it", tc.in)
		}
	}
	for _, in := range []string{`{"id":"a","id":"b"}`, "{\"id\":\"\xff\"}", `{"id":"a"`, `{"id":"a"} x`} {
		var r Release
		err := decodeResponse([]byte(in), &r)
		if !errors.Is(err, jsontree.ErrSyntax) {
			t.Errorf("%q: got %v, want a syntax error", in, err)
		}
	}
}

// TestDecodeNullAndEmpty: null leaves a value alone and null members leave
// their field at zero; an empty array stays an empty, non-nil slice.
func TestDecodeNullAndEmpty(t *testing.T) {
	r := Release{ID: "kept"}
	if err := decodeResponse([]byte(` null `), &r); err != nil || r.ID != "kept" {
		t.Fatalf("null: %+v %v", r, err)
	}
	var c Catalog
	in := `{"plugins":[{"id":"a","channels":null,"releases":[]}],"next_cursor":null}`
	if err := decodeResponse([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	p := c.Plugins[0]
	if p.ID != "a" || p.Channels != nil || p.Releases == nil || len(p.Releases) != 0 || c.NextCursor != "" || c.Extra != nil {
		t.Fatalf("got %+v", c)
	}
}

// TestDecodeAgreesWithEncodingJSON: for a well-formed page, the one-pass
// decoder fills the known fields as encoding/json fills the method-less
// twin types.
func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	b := catalogPage(3, 2)
	var got Catalog
	if err := decodeResponse(b, &got); err != nil {
		t.Fatal(err)
	}
	var want struct {
		Plugins []struct {
			ID, Name, Description string
			Channels              map[string]string
			Releases              []releaseFields
		}
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for i, p := range want.Plugins {
		g := got.Plugins[i]
		if g.ID != p.ID || g.Name != p.Name || g.Description != p.Description || fmt.Sprint(g.Channels) != fmt.Sprint(p.Channels) {
			t.Fatalf("plugin %d: got %+v, want %+v", i, g, p)
		}
		for j, r := range p.Releases {
			g := g.Releases[j]
			g.Extra = nil
			if fmt.Sprintf("%+v", Release(r)) != fmt.Sprintf("%+v", g) {
				t.Fatalf("release %d/%d: got %+v, want %+v", i, j, g, r)
			}
		}
	}
	if string(got.Plugins[0].Releases[0].Extra["signatures"]) != `["s"]` {
		t.Fatalf("extra lost: %v", got.Plugins[0].Releases[0].Extra)
	}
}

// catalogPage builds a catalog page of n plugins with releases releases
// each, every release with one member this client does not know.
func catalogPage(n, releases int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"plugins":[`)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339Nano)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		id := fmt.Sprintf("plugin-%05d", i)
		fmt.Fprintf(&sb, `{"id":%q,"name":%q,"description":%q,"channels":{"stable":"%s@1.0.0"},"releases":[`,
			id, id, strings.Repeat("d", 200)+"\u00e9\\n", id)
		for v := range releases {
			if v > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"id":"%s@1.0.%d","plugin_id":%q,"version":"1.0.%d","description":"a \"plugin\"","artifact_digest":"sha256:%064d","size":%d,"yanked":%t,"published_at":%q,"signatures":["s"]}`,
				id, v, id, v, i, 1000+v, v%2 == 1, at)
		}
		sb.WriteString(`]}`)
	}
	sb.WriteString(`],"next_cursor":"x"}`)
	return []byte(sb.String())
}

// BenchmarkCatalogDecode decodes a page of 4,500 plugins with three
// releases each, the shape whose double decoding took 1.2 s.
func BenchmarkCatalogDecode(b *testing.B) {
	page := catalogPage(4500, 3)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		var c Catalog
		if err := decodeResponse(page, &c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestClientRefusesAmbiguousPages: a catalog page the one-pass decoder
// refuses is ErrInvalidResponse from Client.Catalog.
func TestClientRefusesAmbiguousPages(t *testing.T) {
	for _, page := range []string{
		`{"plugins":[],"plugins":[{"id":"evil"}]}`,
		`{"plugins":[{"id":"a","releases":[{"id":"a@1","id":"a@2"}]}]}`,
		`{"plugins":[{"id":"a","releases":{}}]}`,
	} {
		ts, _ := pagedServer(t, func(string) string { return page })
		_, err := (&Client{BaseURL: ts.URL}).Catalog(context.Background())
		if !errors.Is(err, ErrInvalidResponse) {
			t.Errorf("%s: got %v, want ErrInvalidResponse", page, err)
		}
		ts.Close()
	}
}
