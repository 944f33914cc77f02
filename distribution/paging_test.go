package distribution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// pagedServer answers GET /catalog with pages made by page, given the
// cursor the client sent ("" for the first).
func pagedServer(t *testing.T, page func(cursor string) string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(page(r.URL.Query().Get("cursor"))))
	}))
	t.Cleanup(ts.Close)
	return ts, &calls
}

func TestCatalogFollowsPages(t *testing.T) {
	ts, calls := pagedServer(t, func(cursor string) string {
		switch cursor {
		case "":
			return `{"plugins":[{"id":"a","name":"a","channels":{},"releases":[]}],"next_cursor":"a","server_note":{"x":1}}`
		case "a":
			return `{"plugins":[{"id":"b","name":"b","channels":{},"releases":[]}],"next_cursor":"b"}`
		}
		return `{"plugins":[{"id":"c","name":"c","channels":{},"releases":[]}]}`
	})
	cat, err := (&Client{BaseURL: ts.URL}).Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range cat.Plugins {
		ids = append(ids, p.ID)
	}
	if strings.Join(ids, ",") != "a,b,c" || calls.Load() != 3 || cat.NextCursor != "" || string(cat.Extra["server_note"]) != `{"x":1}` {
		t.Fatalf("got %v after %d calls, extra %v", ids, calls.Load(), cat.Extra)
	}
}

// TestCatalogHostilePages: a server whose cursor never advances, or that
// sends empty pages with a cursor, or pages without end, costs the client
// a bounded number of requests and bytes.
func TestCatalogHostilePages(t *testing.T) {
	plugin := func(id string) string { return `{"id":"` + id + `","name":"x","channels":{},"releases":[]}` }
	for name, tc := range map[string]struct {
		page func(string) string
		want error
	}{
		"same cursor": {func(string) string { return `{"plugins":[` + plugin("a") + `],"next_cursor":"a"}` }, ErrInvalidResponse},
		"empty page":  {func(c string) string { return `{"plugins":[],"next_cursor":"` + c + `x"}` }, ErrInvalidResponse},
		"endless": {func(c string) string {
			return `{"plugins":[` + plugin(c+"x") + `],"next_cursor":"` + c + `x",
				"pad":"` + strings.Repeat(" ", 4000) + `"}`
		}, ErrTooLarge},
		"not json": {func(string) string { return `{"plugins":` }, ErrInvalidResponse},
	} {
		t.Run(name, func(t *testing.T) {
			ts, calls := pagedServer(t, tc.page)
			_, err := (&Client{BaseURL: ts.URL, MaxListingBytes: 64 << 10}).Catalog(context.Background())
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if calls.Load() > 20 {
				t.Fatalf("%d requests for a 64 KiB listing budget", calls.Load())
			}
		})
	}
}

// TestExtraMembersKept: members a newer server adds survive decoding and
// encoding again, at every level of the catalog and on a release.
func TestExtraMembersKept(t *testing.T) {
	in := `{"plugins":[{"id":"a","name":"a","description":"","channels":{},"releases":[
		{"id":"a@1","plugin_id":"a","version":"1","description":"","artifact_digest":"sha256:` + strings.Repeat("0", 64) + `",
		 "size":1,"yanked":false,"published_at":"2026-01-01T00:00:00Z","signatures":["s1"]}],
		"verified":true}],"total":1}`
	var cat Catalog
	if err := json.Unmarshal([]byte(in), &cat); err != nil {
		t.Fatal(err)
	}
	if string(cat.Extra["total"]) != "1" || string(cat.Plugins[0].Extra["verified"]) != "true" ||
		string(cat.Plugins[0].Releases[0].Extra["signatures"]) != `["s1"]` {
		t.Fatalf("extras lost: %v %v %v", cat.Extra, cat.Plugins[0].Extra, cat.Plugins[0].Releases[0].Extra)
	}
	if _, known := cat.Plugins[0].Releases[0].Extra["id"]; known {
		t.Fatal("a known member is in Extra")
	}
	out, err := json.Marshal(cat)
	if err != nil {
		t.Fatal(err)
	}
	var again, want any
	json.Unmarshal(out, &again)
	json.Unmarshal([]byte(in), &want)
	if fmt.Sprint(again) != fmt.Sprint(want) {
		t.Fatalf("round trip:\n%s\nwant\n%s", out, in)
	}
	// A release without extras encodes as before, with no HTML escaping
	// of its own.
	b, _ := json.Marshal(Release{ID: "a@1", Description: "<b>"})
	if strings.Contains(string(b), "{}") || !strings.Contains(string(b), `"description":"\u003cb\u003e"`) {
		t.Fatalf("plain release: %s", b)
	}
}

func TestRetryAfter(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"code":"busy","message":"x"}}`))
	}))
	defer ts.Close()
	_, err := (&Client{BaseURL: ts.URL, HTTPClient: &http.Client{}}).Publish(context.Background(), []byte("x"), "")
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 503 || se.Code != CodeBusy || se.RetryAfter != 7 {
		t.Fatalf("got %#v", err)
	}
}

// FuzzExtraRoundTrip: decoding a release keeps every member, known or
// not, and encoding it again gives the same members.
func FuzzExtraRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"id":"a@1","plugin_id":"a","size":3,"new":{"x":[1,2]}}`,
		`{"id":"a@1","yanked":true,"published_at":"2026-01-01T00:00:00Z","z":null,"y":"\u001b"}`,
		`{}`, `{"id":1}`, `[]`, `{"id":"a","id":"b"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var r Release
		if json.Unmarshal([]byte(in), &r) != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: re-encode: %v", in, err)
		}
		var a, b map[string]json.RawMessage
		json.Unmarshal([]byte(in), &a)
		json.Unmarshal(out, &b)
		for k := range a {
			if _, ok := b[k]; !ok {
				t.Fatalf("%s: member %q lost: %s", in, k, out)
			}
		}
	})
}
