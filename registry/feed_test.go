package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/internal/syncbuf"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/registry/blobs"
	"github.com/plugkit/plugkit/registry/store/postgres"
)

// TestChangeFeedDownBypassesCaches holds replica B's LISTEN connection
// down (its backend terminated, new connections to the database refused)
// while the replicas keep their pooled connections: B must then answer
// from the database, never from its cache, so a yank on A is refused on B
// at once; when the feed is back B caches again. B logs the loss with the
// server's message and its cause, the first refused reconnection only, and
// the return, and counts the loss under its cause.
func TestChangeFeedDownBypassesCaches(t *testing.T) {
	pg := testservice.StartPostgres(t)
	t.Setenv("PGPASSWORD", pg.Password)
	url := pg.NewDatabase(t)
	dbName := url[strings.LastIndex(url, "/")+1 : strings.Index(url, "?")]
	ctx := context.Background()
	blobDir, err := blobs.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	replica := func(log *slog.Logger) *Server {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		s, err := New(Config{Store: db, Blobs: blobDir, PublishTokens: []string{publishToken}, AnonymousRead: true, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	var bLog syncbuf.Buffer
	a, b := newServerFor(t, replica(nil)), replica(slog.New(slog.NewJSONHandler(&bLog, nil)))
	bs := newServerFor(t, b)
	// The gauge moves after the caches are switched, so once it reads
	// 0 the caches are bypassed.
	feedUp := func(s *Server, want bool) func() error {
		return func() error {
			if got := testutil.ToFloat64(s.metrics.feedUp); (got == 1) != want {
				return fmt.Errorf("plugkit_change_feed_up = %v", got)
			}
			return nil
		}
	}
	eventually(t, "B's feed up", feedUp(b, true))
	ca, cb := client(a.URL, publishToken), client(bs.URL, publishToken)
	if _, err := ca.Publish(ctx, pluginArchive(t, "feed", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	q := distribution.ResolveQuery{PluginID: "feed"}
	eventually(t, "B resolves", func() error { _, err := cb.Resolve(ctx, q); return err })

	admin, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := admin.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`ALTER DATABASE ` + dbName + ` ALLOW_CONNECTIONS false`)
	exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'plugkit change feed'`, dbName)
	eventually(t, "B's feed down", feedUp(b, false))
	lost := feedLines(t, &bLog)[0]
	if lost["level"] != "WARN" || lost["cause"] != "connection" ||
		!strings.Contains(fmt.Sprint(lost["err"]), "terminating connection due to administrator command") {
		t.Fatalf("B logged the loss as %v", lost)
	}

	if _, err := ca.Yank(ctx, "feed@1.0.0", true); err != nil {
		t.Fatal(err)
	}
	for range 3 { // at once, and every time
		if _, err := cb.Resolve(ctx, q); status(err) != 404 {
			t.Fatalf("B answered from its cache while the feed was down: %v", err)
		}
	}
	for cause, want := range map[string]float64{"connection": 1, "ping_timeout": 0} {
		if n := testutil.ToFloat64(b.metrics.feedLosses.WithLabelValues(cause)); n != want {
			t.Fatalf("plugkit_change_feed_losses_total{cause=%q} = %v after one terminated connection", cause, n)
		}
	}
	if n := testutil.ToFloat64(b.metrics.resolveBypass()); n != 3 {
		t.Fatalf("plugkit_cache_bypasses_total{cache=\"resolve\"} = %v after 3 resolves with the feed down", n)
	}
	if _, err := ca.Yank(ctx, "feed@1.0.0", false); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Resolve(ctx, q); err != nil {
		t.Fatalf("B after the unyank: %v", err)
	}
	if feedUp(b, false)() != nil {
		t.Fatal("the feed came back while connections were refused")
	}

	eventually(t, "B logs a refused reconnection", func() error {
		if lines := feedLines(t, &bLog); len(lines) < 2 {
			return fmt.Errorf("B logged %v", lines)
		}
		return nil
	})
	exec(`ALTER DATABASE ` + dbName + ` ALLOW_CONNECTIONS true`)
	eventually(t, "B's feed up again", feedUp(b, true))
	lines := feedLines(t, &bLog)
	if len(lines) != 3 || lines[1]["level"] != "WARN" || !strings.Contains(fmt.Sprint(lines[1]["err"]), "is not currently accepting connections") ||
		lines[2]["msg"] != "change feed back" || lines[2]["down_ms"] == nil {
		t.Fatalf("B's log of the feed, want the loss, the first refused connection and the return:\n%v", lines)
	}
	cb.Resolve(ctx, q)
	if _, hit := b.resolved.get(distribution.ResolveQuery{PluginID: "feed", Channel: distribution.DefaultChannel}); !hit {
		t.Fatal("B does not cache once the feed is back")
	}
	if _, err := ca.Yank(ctx, "feed@1.0.0", true); err != nil {
		t.Fatal(err)
	}
	eventually(t, "yank on A refused on B through the feed", func() error {
		if _, err := cb.Resolve(ctx, q); status(err) != 404 {
			return fmt.Errorf("B still resolves")
		}
		return nil
	})
}

// feedLines are the JSON log lines about the change feed in log so far.
func feedLines(t *testing.T, log *syncbuf.Buffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for l := range strings.Lines(log.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if msg, _ := m["msg"].(string); strings.HasPrefix(msg, "change feed") {
			lines = append(lines, m)
		}
	}
	return lines
}
