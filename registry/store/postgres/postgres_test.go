package postgres

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/registry/store"
	"github.com/plugkit/plugkit/registry/store/storetest"
)

// cluster starts one PostgreSQL for the test and points PGPASSWORD at it:
// URLs carry no password, as in production.
func cluster(t *testing.T) *testservice.Postgres {
	t.Helper()
	pg := testservice.StartPostgres(t)
	t.Setenv("PGPASSWORD", pg.Password)
	return pg
}

func openTest(t *testing.T, pg *testservice.Postgres) *DB {
	t.Helper()
	db, err := Open(context.Background(), pg.NewDatabase(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	pg := cluster(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t, pg) })
}

// TestMigrateConcurrently opens one fresh database from many replicas at
// once: the advisory lock lets exactly one apply each migration, and the
// others start on the finished schema.
func TestMigrateConcurrently(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	const replicas = 6
	// Checked before the replicas start: once one has migrated, the
	// schema check rightly passes.
	if db, err := Open(ctx, url, Options{NoMigrate: true}); err == nil {
		db.Close()
		t.Fatal("a fresh database passed the schema check")
	}
	var wg sync.WaitGroup
	applied := make([]int, replicas)
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := Open(ctx, url, Options{MaxConns: 2})
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			ms, err := db.Migrate(ctx)
			errs[i] = err
			for _, m := range ms {
				if m.Applied {
					applied[i]++
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Open migrated; the explicit Migrate afterwards finds nothing to do.
	if slices.Max(applied) != 0 {
		t.Fatalf("Migrate after Open applied %v", applied)
	}
	db, err := Open(ctx, url, Options{NoMigrate: true})
	if err != nil {
		t.Fatalf("the migrated schema fails the check: %v", err)
	}
	defer db.Close()
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(migrations) {
		t.Fatalf("schema_migrations holds %d rows (%v), want %d", n, err, len(migrations))
	}
}

// TestRefusesNewerSchema: a database migrated by a newer plugkit is not
// touched.
func TestRefusesNewerSchema(t *testing.T) {
	pg := cluster(t)
	db := openTest(t, pg)
	ctx := context.Background()
	if _, err := db.pool.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES (99)`); err != nil {
		t.Fatal(err)
	}
	_, err := db.Migrate(ctx)
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("migrating a newer schema: %v", err)
	}
}

// TestNoPasswordInErrors: a wrong password or a malformed URL never puts
// the password in the error, which reaches logs.
func TestNoPasswordInErrors(t *testing.T) {
	pg := cluster(t)
	ctx := context.Background()
	for _, url := range []string{
		strings.Replace(pg.URLWithPassword("postgres"), pg.Password, "hunter2-wrong", 1),
		"postgres://u:hunter2-wrong@127.0.0.1:notaport/db",
	} {
		_, err := Open(ctx, url, Options{})
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("Open(%s): %v", Redact(url), err)
		}
	}
	if got := Redact("postgres://u:hunter2@h/db"); strings.Contains(got, "hunter2") {
		t.Fatalf("Redact: %s", got)
	}
}

// watchEvents runs Watch on db and reports what it delivers.
type watchEvents struct {
	changes chan store.ChangeKind
	states  chan bool
}

func watch(t *testing.T, db *DB) *watchEvents {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchEvents{changes: make(chan store.ChangeKind, 100), states: make(chan bool, 100)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		db.Watch(ctx, func(k store.ChangeKind) { w.changes <- k }, func(up bool) { w.states <- up })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func within[T any](t *testing.T, c chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(d):
		t.Fatalf("no %s within %v", what, d)
		panic("unreachable")
	}
}

// TestWatch: a write on one store reaches the Watch of another on the same
// database; a refused write sends nothing; a restart of PostgreSQL shows
// as down, then up again, and notifications flow after it.
func TestWatch(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	a, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	w := watch(t, b)
	if !within(t, w.states, 10*time.Second, "up") {
		t.Fatal("first state is down")
	}
	alice := store.Actor{Identity: "alice"}
	if _, _, err := a.Publish(ctx, storetest.NewRelease(alice, "demo", "1.0.0", storetest.Digest(1), "stable")); err != nil {
		t.Fatal(err)
	}
	if k := within(t, w.changes, 5*time.Second, "notification"); k != store.ChangeCatalog {
		t.Fatalf("change %q", k)
	}
	if _, _, err := a.Publish(ctx, storetest.NewRelease(store.Actor{Identity: "bob"}, "demo", "2.0.0", storetest.Digest(2), "stable")); err == nil {
		t.Fatal("bob published alice's plugin")
	}
	if err := a.AddToken(ctx, store.Token{ID: "token:00000000000000aa", Name: "x", Role: store.RoleReader, CreatedAt: time.Now()}, [32]byte{1}); err != nil {
		t.Fatal(err)
	}
	if k := within(t, w.changes, 5*time.Second, "notification"); k != store.ChangeTokens {
		t.Fatalf("change %q after a refused publish and a token: the refused write notified", k)
	}

	pg.Stop(t)
	if within(t, w.states, 10*time.Second, "down") {
		t.Fatal("up while PostgreSQL is stopped")
	}
	pg.Start(t)
	if !within(t, w.states, 15*time.Second, "up again") {
		t.Fatal("down after the restart")
	}
	// The pool recovers by itself too.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, err := a.Publish(ctx, storetest.NewRelease(alice, "demo", "3.0.0", storetest.Digest(3), "stable"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("publish after the restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	within(t, w.changes, 5*time.Second, "notification after the restart")
}
