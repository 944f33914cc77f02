package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"

	"github.com/plugkit/plugkit/registry/storage"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOpsEndpoints: /healthz, /readyz and /metrics answer at the root
// without a token, also on a private registry; /readyz turns 503 when the
// database does not answer, while /healthz stays 200.
func TestOpsEndpoints(t *testing.T) {
	db, b, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: db, Blobs: b, PublishTokens: []string{publishToken}, ReadTokens: []string{readToken}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	if code, body := get(t, ts.URL+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, ts.URL+"/readyz"); code != 200 || body != "ready\n" {
		t.Fatalf("/readyz: %d %q", code, body)
	}
	// A series appears when it is first counted in, not before.
	if _, before := get(t, ts.URL+"/metrics"); strings.Contains(before, "plugkit_cache_requests_total") {
		t.Error("/metrics has cache lookups before any resolve")
	}
	ctx := context.Background()
	if _, err := client(ts.URL, publishToken).Publish(ctx, pluginArchive(t, "m", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := client(ts.URL, readToken).Resolve(ctx, distribution.ResolveQuery{PluginID: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	get(t, ts.URL+"/plugin-protocol/v1/no/such/"+strings.Repeat("x", 50)) // one "other" route, not a new label
	code, metrics := get(t, ts.URL+"/metrics")
	for _, want := range []string{
		`plugkit_http_requests_total{code="201",method="POST",route="/publish"} 1`,
		`plugkit_http_requests_total{code="200",method="GET",route="/resolve"} 2`,
		`plugkit_http_requests_total{code="404",method="GET",route="other"} 1`,
		`plugkit_http_request_duration_seconds_bucket{route="/resolve",le="+Inf"} 2`,
		`plugkit_publishes_total{result="created"} 1`,
		`plugkit_cache_requests_total{cache="resolve",result="hit"} 1`,
		`plugkit_cache_requests_total{cache="resolve",result="miss"} 1`,
		`go_goroutines`,
	} {
		if code != 200 || !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(metrics, "plugkit_change_feed_up") {
		t.Error("a store without a change feed reports one")
	}
	db.Close() // the database is gone
	if code, body := get(t, ts.URL+"/readyz"); code != 503 || !strings.Contains(body, "database") {
		t.Fatalf("/readyz without a database: %d %q", code, body)
	}
	if code, _ := get(t, ts.URL+"/healthz"); code != 200 {
		t.Fatalf("/healthz without a database: %d", code)
	}
}

// TestAccessLog: one structured line per request with route, status and
// bytes, and never the token.
func TestAccessLog(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	ts := newTestServer(t, Config{Logger: logger, AccessLog: true}, true)
	ctx := context.Background()
	client(ts.URL, readToken).Resolve(ctx, distribution.ResolveQuery{PluginID: "nope"})
	client(ts.URL, "wrong-secret").Resolve(ctx, distribution.ResolveQuery{PluginID: "nope"})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var entries []map[string]any
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if e["msg"] == "request" {
			entries = append(entries, e)
		}
	}
	if len(entries) != 2 || entries[0]["route"] != "/resolve" || entries[0]["status"] != 404.0 || entries[1]["status"] != 401.0 ||
		entries[0]["bytes"].(float64) == 0 || entries[0]["query"] != "plugin_id=nope" {
		t.Fatalf("access log: %v", entries)
	}
	if strings.Contains(buf.String(), readToken) || strings.Contains(buf.String(), "wrong-secret") {
		t.Fatal("a token reached the access log")
	}
}

// TestDatabaseTokens: a token added to the store authenticates with its
// role and identity at once, beside the configured ones, and stops at once
// when revoked (without a change feed nothing is cached).
func TestDatabaseTokens(t *testing.T) {
	db, b, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(Config{Store: db, Blobs: b, PublishTokens: []string{"alice=a-secret"}, AnonymousRead: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	ctx := context.Background()
	tok, secret, err := NewToken(ctx, db, store.RolePublisher, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := NewToken(ctx, db, "root", ""); err == nil {
		t.Fatal("a token with an unknown role")
	}
	if _, _, err := NewToken(ctx, db, store.RoleReader, "bad\x1bname"); err == nil {
		t.Fatal("a token name with a control character")
	}
	_, readerSecret, err := NewToken(ctx, db, store.RoleReader, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(ts.URL, secret).Publish(ctx, pluginArchive(t, "dbt", "1.0.0", nil), ""); err != nil {
		t.Fatalf("publish with a database token: %v", err)
	}
	if owners, err := db.Owners(ctx, "dbt"); err != nil || len(owners) != 1 || owners[0] != tok.ID {
		t.Fatalf("owner: %v %v", owners, err)
	}
	if _, err := client(ts.URL, readerSecret).Publish(ctx, pluginArchive(t, "dbt2", "1.0.0", nil), ""); status(err) != 403 {
		t.Fatalf("a database reader token publishes: %v", err)
	}
	if _, err := client(ts.URL, "a-secret").Publish(ctx, pluginArchive(t, "dbt", "2.0.0", nil), ""); status(err) != 403 {
		t.Fatalf("alice writes to the database token's plugin: %v", err)
	}
	if _, err := db.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := client(ts.URL, secret).Publish(ctx, pluginArchive(t, "dbt", "3.0.0", nil), ""); status(err) != 401 {
		t.Fatalf("a revoked token publishes: %v", err)
	}
}
