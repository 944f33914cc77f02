package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/plugkit/plugkit/registry/store"
	"github.com/plugkit/plugkit/registry/store/storetest"
)

// transactions counts the transactions that wrote the releases of plugins.
func transactions(t *testing.T, db *DB, plugins ...string) int {
	t.Helper()
	var n int
	err := db.pool.QueryRow(context.Background(),
		`SELECT COUNT(DISTINCT xmin::text) FROM releases WHERE plugin_id = ANY($1)`, plugins).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPublishGroup writes publishes as one group, as it does with
// concurrent ones: each gets the outcome it has when the same publishes
// are made one after the other, in one transaction, with one
// notification; a publish whose context has ended is left out.
func TestPublishGroup(t *testing.T) {
	pg := cluster(t)
	db := openTest(t, pg)
	other, err := Open(context.Background(), pg.URL(db.pool.Config().ConnConfig.Database), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	w := watchUp(t, other)
	alice, bob := store.Actor{Identity: "alice"}, store.Actor{Identity: "bob"}
	d := storetest.Digest
	quota := storetest.NewRelease(alice, "g", "3.0.0", d(3), "stable")
	quota.MaxReleases = 2
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		ctx     context.Context
		nr      store.NewRelease
		created bool
		want    error
	}{
		{nr: storetest.NewRelease(alice, "g", "1.0.0", d(1), "stable"), created: true},
		{nr: storetest.NewRelease(alice, "g", "1.0.0", d(1), "beta")},
		{nr: storetest.NewRelease(alice, "g", "1.0.0", d(2), "stable"), want: store.ErrConflict},
		{nr: storetest.NewRelease(bob, "g", "2.0.0", d(2), "stable"), want: store.ErrNotOwner},
		{nr: storetest.NewRelease(alice, "g", "2.0.0", d(2), "stable"), created: true},
		{nr: quota, want: store.ErrQuota},
		{ctx: ended, nr: storetest.NewRelease(bob, "h", "1.0.0", d(4), "stable"), want: context.Canceled},
		{nr: storetest.NewRelease(bob, "i", "1.0.0", d(5), "stable"), created: true},
	}
	var group []*pendingPublish
	for _, c := range cases {
		if c.ctx == nil {
			c.ctx = context.Background()
		}
		group = append(group, &pendingPublish{ctx: c.ctx, nr: c.nr, now: time.Now().UnixNano()})
	}
	db.publishGroup(group)
	for i, c := range cases {
		p := group[i]
		err := p.err
		created := false
		if err == nil {
			_, created, err = p.judge()
		}
		if !errors.Is(err, c.want) || created != c.created {
			t.Errorf("%d: %s by %s: created %v, error %v; want %v, %v", i, c.nr.Release.ID, c.nr.By.Identity, created, err, c.created, c.want)
		}
	}
	if _, err := db.Release(context.Background(), cases[6].nr.Release.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the publish whose context had ended was written: %v", err)
	}
	if n := transactions(t, db, "g", "i"); n != 1 {
		t.Errorf("the group was written in %d transactions, want 1", n)
	}
	within(t, w.changes, 5*time.Second, "notification")
	select {
	case <-w.changes:
		t.Error("a group notified more than once")
	case <-time.After(200 * time.Millisecond):
	}
}

// TestPublishGroupIsolatesErrors: a publish the server refuses rolls its
// group back; each of the others is then written alone, and only the
// faulty one fails.
func TestPublishGroupIsolatesErrors(t *testing.T) {
	db := openTest(t, cluster(t))
	alice := store.Actor{Identity: "alice"}
	bad := storetest.NewRelease(alice, "bad", "1.0.0", storetest.Digest(2), "stable")
	bad.Release.Description = "a NUL \x00 byte, which text cannot hold"
	group := []*pendingPublish{
		{ctx: context.Background(), nr: storetest.NewRelease(alice, "good1", "1.0.0", storetest.Digest(1), "stable")},
		{ctx: context.Background(), nr: bad},
		{ctx: context.Background(), nr: storetest.NewRelease(alice, "good2", "1.0.0", storetest.Digest(3), "stable")},
	}
	db.publishGroup(group)
	var pgErr *pgconn.PgError
	if !errors.As(group[1].err, &pgErr) {
		t.Errorf("the faulty publish: %v, want the server's error", group[1].err)
	}
	for _, i := range []int{0, 2} {
		if _, created, err := group[i].judge(); group[i].err != nil || err != nil || !created {
			t.Errorf("%s: created %v, %v %v", group[i].nr.Release.ID, created, group[i].err, err)
		}
	}
	if _, err := db.Release(context.Background(), bad.Release.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the faulty publish was written: %v", err)
	}
}

// TestConcurrentPublishesShareATransaction: publishes that arrive while a
// group is being written (here held up by another transaction's lock on
// its plugin) are written together once it is done, whatever their
// plugins, and each caller gets its own outcome; one whose context ends
// while it waits returns at once and is not written.
func TestConcurrentPublishesShareATransaction(t *testing.T) {
	pg := cluster(t)
	db := openTest(t, pg)
	ctx := context.Background()
	alice := store.Actor{Identity: "alice"}
	holder, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey("plugin", "first")); err != nil {
		t.Fatal(err)
	}

	errs := make(chan error, 6)
	publish := func(plugin string, n int) {
		_, created, err := db.Publish(ctx, storetest.NewRelease(alice, plugin, "1.0.0", storetest.Digest(n), "stable"))
		if err == nil && !created {
			err = errors.New(plugin + " not created")
		}
		errs <- err
	}
	go publish("first", 0)
	waitFor := func(what string, ok func(q *publishQueue) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			db.publishes.mu.Lock()
			done := ok(&db.publishes)
			db.publishes.mu.Unlock()
			if done {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 10s", what)
			}
		}
	}
	waitFor("leader", func(q *publishQueue) bool { return q.leading && len(q.waiting) == 0 })
	names := []string{"second", "third", "fourth", "fifth", "sixth"}
	for i, name := range names {
		go publish(name, i+1)
	}
	waitFor("queue of 5", func(q *publishQueue) bool { return len(q.waiting) == len(names) })
	// A waiting publish whose context ends leaves at once, unwritten.
	gone, cancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() {
		_, _, err := db.Publish(gone, storetest.NewRelease(alice, "gone", "1.0.0", storetest.Digest(9), "stable"))
		left <- err
	}()
	waitFor("queue of 6", func(q *publishQueue) bool { return len(q.waiting) == len(names)+1 })
	cancel()
	if err := within(t, left, 10*time.Second, "return of the cancelled publish"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled publish: %v", err)
	}
	waitFor("queue of 5 again", func(q *publishQueue) bool { return len(q.waiting) == len(names) })
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := transactions(t, db, names...); n != 1 {
		t.Errorf("the %d publishes that waited were written in %d transactions, want 1", len(names), n)
	}
	if _, err := db.Release(ctx, "gone@1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the cancelled publish was written: %v", err)
	}
	if n := transactions(t, db, append(names, "first")...); n != 2 {
		t.Errorf("%d transactions in all, want 2", n)
	}
}
