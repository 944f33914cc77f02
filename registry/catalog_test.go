package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
	"github.com/plugkit/plugkit/registry/store/storetest"
)

// TestCatalogPoisoning: one small publish with a
// 9 MiB description made /catalog 19 MB and every client's catalog failed.
// The registry now stores a bounded description.
func TestCatalogPoisoning(t *testing.T) {
	ctx := context.Background()
	ts := newTestServer(t, Config{}, false)
	manifest := `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "poison", "version": "1.0.0", "description": "` +
		strings.Repeat("\u00e9", 9<<19) + `"}`
	body := packFiles(t, map[string]string{"plugin.json": manifest})
	if len(body) > 64<<10 {
		t.Fatalf("the hostile archive is %d bytes; it should be small", len(body))
	}
	res, err := client(ts.URL, publishToken).Publish(ctx, body, "")
	if err != nil {
		t.Fatal(err)
	}
	d := res.Release.Description
	if len(d) > DefaultMaxDescriptionBytes || !utf8.ValidString(d) || !strings.HasSuffix(d, "…") {
		t.Fatalf("stored description: %d bytes, valid %v", len(d), utf8.ValidString(d))
	}
	resp, err := http.Get(ts.URL + distribution.Prefix + "/catalog")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(raw) > 8<<10 {
		t.Fatalf("catalog is %d bytes", len(raw))
	}
	cat, err := client(ts.URL, "").Catalog(ctx)
	if err != nil || len(cat.Plugins) != 1 || cat.Plugins[0].Description != d {
		t.Fatalf("catalog: %v", err)
	}
	// The artifact itself keeps every byte.
	resp, err = http.Get(ts.URL + distribution.Prefix + "/artifacts/" + res.Release.ArtifactDigest)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(raw, body) {
		t.Fatal("the artifact is not the published archive")
	}
}

func TestBoundText(t *testing.T) {
	for in, want := range map[string]string{
		"short":               "short",
		"a\nb\tc\rd":          "a b c d",
		"bell\x07\x1b[31mred": "bell[31…",
		"0123456789":          "0123456789",
		"0123456789a":         "0123456…",
		"éééééé":              "ééé…",
		"abcdef ghij":         "abcdef…",
		"bad\xffutf8":         "bad\uFFFDutf8",
	} {
		if got := boundText(in, 10); got != want || len(got) > 10 {
			t.Errorf("boundText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCatalogManyPlugins: 4,500 ordinary plugins made the catalog larger
// than every client's 8 MiB response limit. Scaled down tenfold (450
// plugins of 2 KiB against a 512 KiB client limit), the catalog is now
// served in pages that the client follows.
func TestCatalogManyPlugins(t *testing.T) {
	ctx := context.Background()
	ts, s := newTestServerWith(t, Config{}, false)
	const n = 450
	desc := strings.Repeat("d", DefaultMaxDescriptionBytes)
	for i := range n {
		r := storetest.NewRelease(store.Actor{Identity: "p"}, fmt.Sprintf("plugin-%04d", i), "1.0.0", storetest.Digest(i), "stable")
		r.Release.Description = desc
		if _, _, err := s.store.Publish(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	c := client(ts.URL, "")
	c.MaxResponseBytes = 512 << 10
	cat, err := c.Catalog(ctx)
	if err != nil || len(cat.Plugins) != n || cat.Plugins[n-1].ID != fmt.Sprintf("plugin-%04d", n-1) {
		t.Fatalf("catalog: %d plugins, %v", len(cat.Plugins), err)
	}
	page, err := c.CatalogPage(ctx, "")
	if err != nil || len(page.Plugins) != DefaultPageLimit || page.NextCursor != page.Plugins[DefaultPageLimit-1].ID {
		t.Fatalf("first page: %d plugins, %v", len(page.Plugins), err)
	}
	page, err = c.CatalogPage(ctx, page.NextCursor)
	if err != nil || page.Plugins[0].ID != fmt.Sprintf("plugin-%04d", DefaultPageLimit) {
		t.Fatalf("second page: %v", err)
	}
}

// TestClientLimitsFitServerPages:
// client and server limits must agree. A page stays within the page budget,
// half the client's default response limit, unless its one entry is larger
// (TestCatalogPageBudget); so the largest entry the default quotas allow
// (1,000 releases and 32 channels, every name and description at its
// bound, the description in the character JSON doubles) must fit that
// limit too.
func TestClientLimitsFitServerPages(t *testing.T) {
	if 2*DefaultCatalogPageBytes > distribution.DefaultMaxResponseBytes {
		t.Fatalf("a %d-byte page does not fit twice in the client's %d-byte limit", DefaultCatalogPageBytes, distribution.DefaultMaxResponseBytes)
	}
	id := strings.Repeat("p", distribution.MaxPluginIDLen)
	desc := strings.Repeat(`"`, DefaultMaxDescriptionBytes)
	p := distribution.CatalogPlugin{ID: id, Name: id, Description: desc, Channels: map[string]string{}}
	for i := range DefaultMaxReleasesPerPlugin {
		version := fmt.Sprintf("%d.0.0-", i)
		version += strings.Repeat("x", distribution.MaxVersionLen-len(version))
		r := storetest.NewRelease(store.Actor{}, id, version, storetest.Digest(i), "").Release
		r.Description = desc
		p.Releases = append(p.Releases, r)
		p.Channels[fmt.Sprintf("c%0*d", distribution.MaxChannelLen-1, i%DefaultMaxChannelsPerPlugin)] = r.ID
	}
	rec := httptest.NewRecorder()
	err := writePage(rec, "plugins", []distribution.CatalogPlugin{p}, DefaultPageLimit, DefaultCatalogPageBytes,
		func(p distribution.CatalogPlugin) string { return p.ID })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the largest entry is a %d-byte page", rec.Body.Len())
	if bound := (DefaultMaxReleasesPerPlugin + 1) * (2*DefaultMaxDescriptionBytes + maxEntryOverhead); rec.Body.Len() > bound {
		t.Fatalf("the largest entry is %d bytes, over the %d that Config.Check assumes", rec.Body.Len(), bound)
	}
	for _, c := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{}, true},
		{Config{MaxDescriptionBytes: 64 << 10}, false},
		{Config{MaxDescriptionBytes: 64 << 10, MaxReleasesPerPlugin: 50}, true},
		{Config{MaxReleasesPerPlugin: 100_000}, false},
	} {
		if err := c.cfg.Check(); (err == nil) != c.ok {
			t.Errorf("Check(description %d, releases %d): %v", c.cfg.MaxDescriptionBytes, c.cfg.MaxReleasesPerPlugin, err)
		}
	}
	if rec.Body.Len() > distribution.DefaultMaxResponseBytes {
		t.Fatalf("the largest entry is %d bytes, over the client's %d-byte limit", rec.Body.Len(), distribution.DefaultMaxResponseBytes)
	}
	var page distribution.Catalog
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || len(page.Plugins) != 1 ||
		len(page.Plugins[0].Releases) != DefaultMaxReleasesPerPlugin || len(page.Plugins[0].Channels) != DefaultMaxChannelsPerPlugin {
		t.Fatalf("the page does not decode to the entry: %v", err)
	}
}

// TestCatalogPageBudget: a page stops at its byte budget, yet always holds
// one entry, so the listing moves on whatever the entries' size.
func TestCatalogPageBudget(t *testing.T) {
	ctx := context.Background()
	ts, s := newTestServerWith(t, Config{CatalogPageBytes: 8 << 10}, false)
	for i := range 20 {
		r := storetest.NewRelease(store.Actor{Identity: "p"}, fmt.Sprintf("p%02d", i), "1.0.0", storetest.Digest(i), "stable")
		r.Release.Description = strings.Repeat("x", 1000)
		if i == 7 { // one entry larger than a page
			for v := range 12 {
				r := storetest.NewRelease(store.Actor{Identity: "p"}, "p07", fmt.Sprintf("0.%d", v), storetest.Digest(100+v), "stable")
				r.Release.Description = strings.Repeat("y", 1000)
				s.store.Publish(ctx, r)
			}
		}
		if _, _, err := s.store.Publish(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	cursor, pages, seen := "", 0, 0
	for {
		resp, err := http.Get(ts.URL + distribution.Prefix + "/catalog?limit=1000" + map[bool]string{true: "&cursor=" + cursor}[cursor != ""])
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var page distribution.Catalog
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatal(err)
		}
		pages++
		seen += len(page.Plugins)
		if len(page.Plugins) > 1 && len(raw) > 8<<10 {
			t.Fatalf("page of %d plugins is %d bytes", len(page.Plugins), len(raw))
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if seen != 20 || pages < 3 {
		t.Fatalf("%d plugins in %d pages", seen, pages)
	}
}

func TestCatalogQueries(t *testing.T) {
	ts := newTestServer(t, Config{}, false)
	if _, err := client(ts.URL, publishToken).Publish(context.Background(), pluginArchive(t, "one", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	v1 := ts.URL + distribution.Prefix + "/catalog"
	for q, want := range map[string]int{
		"?limit=1":                200,
		"?limit=1000":             200,
		"?limit=0":                400,
		"?limit=1001":             400,
		"?limit=01":               400,
		"?limit=x":                400,
		"?cursor=one":             200,
		"?cursor=Bad!":            400,
		"?plugin_id=one":          200,
		"?plugin_id=nope":         200,
		"?plugin_id=one&cursor=a": 400,
		"?plugin_id=Bad!":         400,
		"?cursor=a&cursor=b":      400,
	} {
		if st, _, _ := do(t, "GET", v1+q, "", "", nil); st != want {
			t.Errorf("GET /catalog%s: %d, want %d", q, st, want)
		}
	}
	c := client(ts.URL, "")
	if p, err := c.Plugin(context.Background(), "one"); err != nil || p.Channels["stable"] != "one@1.0.0" {
		t.Fatalf("Plugin: %+v %v", p, err)
	}
	if _, err := c.Plugin(context.Background(), "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("Plugin of an unknown plugin: %v", err)
	}
}

// TestPluginQuotas: one plugin cannot grow the catalog without bound by
// publishing releases or channels.
func TestPluginQuotas(t *testing.T) {
	ctx := context.Background()
	ts := newTestServer(t, Config{MaxReleasesPerPlugin: 2, MaxChannelsPerPlugin: 2}, false)
	c := client(ts.URL, publishToken)
	for _, v := range []string{"1", "2"} {
		if _, err := c.Publish(ctx, pluginArchive(t, "q", v, nil), ""); err != nil {
			t.Fatal(err)
		}
	}
	if st, code := statusOf(func() error { _, err := c.Publish(ctx, pluginArchive(t, "q", "3", nil), ""); return err }()); st != 409 || code != distribution.CodeQuotaExceeded {
		t.Fatalf("third release: %d %s", st, code)
	}
	if _, err := c.Publish(ctx, pluginArchive(t, "q", "2", nil), "beta"); err != nil {
		t.Fatal(err)
	}
	if st, code := statusOf(func() error {
		_, err := c.SetChannel(ctx, distribution.ChannelUpdate{PluginID: "q", Channel: "edge", ReleaseID: "q@1"})
		return err
	}()); st != 409 || code != distribution.CodeQuotaExceeded {
		t.Fatalf("third channel: %d %s", st, code)
	}
}
