package registry

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/distribution"
)

func installation(id, plugin string) distribution.Installation {
	return distribution.Installation{ID: id, PluginID: plugin, ReleaseID: plugin + "@1.0.0",
		ArtifactDigest: "sha256:" + strings.Repeat("a", 64), Status: "installed", Host: "h"}
}

// TestInstallationReports: with no reader tokens,
// anyone could overwrite another host's installation record and add rows
// without bound. Reports now need a token by default, a reporter can only
// replace its own records, records are bounded per plugin and only for
// plugins the registry has, and the listing is paginated.
func TestInstallationReports(t *testing.T) {
	ctx := context.Background()
	ts := newTestServer(t, Config{
		ReadTokens:                []string{"host-a=secret-a", "host-b=secret-b"},
		MaxInstallationsPerPlugin: 3,
	}, false) // anonymous reads
	if _, err := client(ts.URL, publishToken).Publish(ctx, pluginArchive(t, "demo", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	anon, a, b := client(ts.URL, ""), client(ts.URL, "secret-a"), client(ts.URL, "secret-b")

	if st, code := statusOf(func() error { _, err := anon.ReportInstallation(ctx, installation("x", "demo")); return err }()); st != 401 || code != distribution.CodeUnauthorized {
		t.Fatalf("anonymous report: %d %s", st, code)
	}
	if _, err := anon.Installations(ctx, ""); err == nil {
		t.Fatal("anonymous listing of installations")
	}
	got, err := a.ReportInstallation(ctx, installation("laptop/demo", "demo"))
	if err != nil || got.Reporter != "host-a" || got.ReportedAt.IsZero() {
		t.Fatalf("report: %+v %v", got, err)
	}
	// B reports the same id: its own record, A's is untouched.
	evil := installation("laptop/demo", "demo")
	evil.Status = "removed"
	if _, err := b.ReportInstallation(ctx, evil); err != nil {
		t.Fatal(err)
	}
	list, err := a.Installations(ctx, "demo")
	if err != nil || len(list) != 2 || list[0].Reporter != "host-a" || list[0].Status != "installed" || list[1].Reporter != "host-b" {
		t.Fatalf("list: %+v %v", list, err)
	}
	// Bounded per plugin; replacing is always allowed.
	if _, err := a.ReportInstallation(ctx, installation("desk/demo", "demo")); err != nil {
		t.Fatal(err)
	}
	if st, code := statusOf(func() error { _, err := a.ReportInstallation(ctx, installation("more/demo", "demo")); return err }()); st != 409 || code != distribution.CodeQuotaExceeded {
		t.Fatalf("a fourth report: %d %s", st, code)
	}
	if _, err := a.ReportInstallation(ctx, installation("laptop/demo", "demo")); err != nil {
		t.Fatalf("replacing at the quota: %v", err)
	}
	// Only plugins of this registry: made-up plugin ids add no rows.
	if st, _ := statusOf(func() error { _, err := a.ReportInstallation(ctx, installation("x", "made-up")); return err }()); st != 404 {
		t.Fatalf("a report of an unknown plugin: %d", st)
	}
	// The reporter is the server's to set.
	forged := installation("y", "demo")
	forged.Reporter = "host-b"
	if st, _ := statusOf(func() error { _, err := a.ReportInstallation(ctx, forged); return err }()); st != 400 {
		t.Fatalf("a forged reporter: %d", st)
	}
}

func TestInstallationPages(t *testing.T) {
	ctx := context.Background()
	ts := newTestServer(t, Config{AnonymousReports: true}, false)
	for _, p := range []string{"a", "b"} {
		if _, err := client(ts.URL, publishToken).Publish(ctx, pluginArchive(t, p, "1.0.0", nil), ""); err != nil {
			t.Fatal(err)
		}
	}
	anon := client(ts.URL, "")
	for i := range 130 {
		p := []string{"a", "b"}[i%2]
		if _, err := anon.ReportInstallation(ctx, installation(fmt.Sprintf("h%03d/%s", i, p), p)); err != nil {
			t.Fatal(err)
		}
	}
	all, err := anon.Installations(ctx, "")
	if err != nil || len(all) != 130 || all[0].PluginID != "a" || all[129].PluginID != "b" {
		t.Fatalf("all: %d %v", len(all), err)
	}
	onlyB, err := anon.Installations(ctx, "b")
	if err != nil || len(onlyB) != 65 {
		t.Fatalf("b: %d %v", len(onlyB), err)
	}
	v1 := ts.URL + distribution.Prefix + "/installations"
	st, _, _ := do(t, "GET", v1+"?limit=1", "", "", nil)
	if st != 200 {
		t.Fatalf("limit=1: %d", st)
	}
	for _, q := range []string{"?cursor=%%%", "?cursor=bm9wZQ", "?limit=0", "?plugin_id=b&cursor=" + installationCursor(installation("x", "a"))} {
		if st, _, _ := do(t, "GET", v1+q, "", "", nil); st != 400 {
			t.Errorf("GET /installations%s: %d, want 400", q, st)
		}
	}
	// The JSON body stays bounded.
	if st, _, _ := do(t, "POST", v1, "", "application/json", bytes.NewReader(bytes.Repeat([]byte(" "), maxJSONBody+1))); st != 413 {
		t.Fatalf("oversized report: %d", st)
	}
}
