package distribution

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeCatalog: whatever a registry sends, the one-pass decoder of
// catalog pages never panics, and what it accepts encoding/json accepts
// too for the same fields (the decoder is the stricter of the two:
// duplicate member names, invalid UTF-8).
func FuzzDecodeCatalog(f *testing.F) {
	f.Add(catalogPage(2, 2))
	f.Add([]byte(`{"plugins":[{"id":"a","releases":[]}],"next_cursor":""}`))
	f.Add([]byte(`{"plugins":null}`))
	f.Add([]byte(`{"plugins":[{"id":"a","id":"b"}]}`))
	f.Add([]byte(`{"plugins":[{"releases":[{"size":1e700}]}]}`))
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Catalog
		if decodeResponse(b, &c) != nil {
			return
		}
		var twin struct {
			Plugins []struct {
				ID, Name, Description string
				Channels              map[string]string
				Releases              []releaseFields
			}
			NextCursor string `json:"next_cursor"`
		}
		if err := json.Unmarshal(b, &twin); err != nil {
			t.Fatalf("the decoder accepted what encoding/json refuses (%v): %q", err, b)
		}
		if len(twin.Plugins) != len(c.Plugins) || twin.NextCursor != c.NextCursor {
			t.Fatalf("decoded %d plugins, cursor %q; encoding/json %d, %q", len(c.Plugins), c.NextCursor, len(twin.Plugins), twin.NextCursor)
		}
	})
}
