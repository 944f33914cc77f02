package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

// TestPoolSize: the URL's pool_max_conns sizes the pool (pgxpool reads
// it, and Connect must not override it), Options.MaxConns overrides the
// URL, and a bad value is refused without the URL in the message.
func TestPoolSize(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	for _, c := range []struct {
		url  string
		opts Options
		want int32
	}{
		{url + "&pool_max_conns=2", Options{}, 2},
		{url + "&pool_max_conns=2", Options{MaxConns: 3}, 3},
		{url, Options{MaxConns: 7}, 7},
	} {
		db, err := Connect(ctx, c.url, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := db.pool.Config().MaxConns; got != c.want {
			t.Errorf("%s, MaxConns %d: pool of %d connections, want %d", c.url, c.opts.MaxConns, got, c.want)
		}
		db.Close()
	}
	_, err := Connect(ctx, url+"&pool_max_conns=many", Options{})
	if err == nil || strings.Contains(err.Error(), "many") {
		t.Errorf("pool_max_conns=many: %v", err)
	}
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
	states  chan error
}

func watch(t *testing.T, db *DB) *watchEvents {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchEvents{changes: make(chan store.ChangeKind, 100), states: make(chan error, 100)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		db.Watch(ctx, func(k store.ChangeKind) { w.changes <- k }, func(err error) { w.states <- err })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// watchUp is watch, once the LISTEN connection is up.
func watchUp(t *testing.T, db *DB) *watchEvents {
	t.Helper()
	w := watch(t, db)
	if err := within(t, w.states, 10*time.Second, "up"); err != nil {
		t.Fatalf("first state is down: %v", err)
	}
	return w
}

// lost waits for w's next state, which must be a loss of the connection.
func (w *watchEvents) lost(t *testing.T) error {
	t.Helper()
	err := within(t, w.states, 10*time.Second, "loss")
	if !errors.Is(err, errListened) {
		t.Fatalf("state after a loss: %v, want errListened", err)
	}
	return err
}

// upAgain waits for w to listen again, past at most one report of a failed
// attempt to connect, which it returns.
func (w *watchEvents) upAgain(t *testing.T) error {
	t.Helper()
	failed := within(t, w.states, 15*time.Second, "up again")
	if failed == nil {
		return nil
	}
	if errors.Is(failed, errListened) {
		t.Fatalf("a loss while down: %v", failed)
	}
	if err := within(t, w.states, 15*time.Second, "up again"); err != nil {
		t.Fatalf("a second report while down (%v), after %v", err, failed)
	}
	return failed
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

// listener is the backend of db's LISTEN connection, found by its
// application_name.
func listener(t *testing.T, db *DB) int {
	t.Helper()
	var pid int
	err := db.pool.QueryRow(context.Background(), `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, watchAppName).Scan(&pid)
	if err != nil {
		t.Fatalf("the listener in pg_stat_activity: %v", err)
	}
	return pid
}

// TestWatchTerminated: a listener whose backend is terminated reports the
// server's message, not a bare "connection lost"; while the database
// refuses connections only the first failed attempt is reported, with
// its error; when it accepts them again the feed is back.
func TestWatchTerminated(t *testing.T) {
	pg := cluster(t)
	db := openTest(t, pg)
	ctx := context.Background()
	w := watchUp(t, db)
	admin, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var name string
	if err := db.pool.QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := admin.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}

	exec(`SELECT pg_terminate_backend($1)`, listener(t, db))
	err = w.lost(t)
	t.Logf("terminated: %v", err)
	if !strings.Contains(err.Error(), "terminating connection due to administrator command") || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("termination reported as %q", err)
	}
	if err := w.upAgain(t); err != nil {
		t.Fatalf("reconnecting to a database that accepts connections failed: %v", err)
	}

	exec(`ALTER DATABASE ` + name + ` ALLOW_CONNECTIONS false`)
	exec(`SELECT pg_terminate_backend($1)`, listener(t, db))
	w.lost(t)
	failed := within(t, w.states, 10*time.Second, "a failed attempt to connect")
	t.Logf("refused: %v", failed)
	if failed == nil || errors.Is(failed, errListened) || !strings.Contains(failed.Error(), "is not currently accepting connections") {
		t.Fatalf("a refused connection reported as %v", failed)
	}
	// Attempts at 50, 100, 200, 400 and 800 ms after the first: none
	// is reported.
	select {
	case err := <-w.states:
		t.Fatalf("reported again while down: %v", err)
	case <-time.After(1600 * time.Millisecond):
	}
	exec(`ALTER DATABASE ` + name + ` ALLOW_CONNECTIONS true`)
	if err := within(t, w.states, 15*time.Second, "up again"); err != nil {
		t.Fatalf("after connections are allowed: %v", err)
	}
}

// stopListener stops the backend of db's listener with SIGSTOP, as a
// server stalled on its disk or starved of CPU would look, until the test
// ends or it is continued; it returns the backend's pid. The cluster runs
// as this user, or as postgres when the tests run as root: either way the
// test may signal its backends.
func stopListener(t *testing.T, db *DB) int {
	t.Helper()
	pid := listener(t, db)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	return pid
}

// lostToPing waits for w to report the feed lost to a ping unanswered
// within 200ms (the tests' timeout), matching context.DeadlineExceeded.
func lostToPing(t *testing.T, w *watchEvents) {
	t.Helper()
	err := w.lost(t)
	t.Logf("stopped: %v", err)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer to a ping within 200ms") {
		t.Fatalf("a stopped backend reported as %q", err)
	}
}

// TestWatchPingTimeout: a listener whose backend stops answering (stopped
// with SIGSTOP, as a server stalled on its disk would look) is reported
// down after the ping's timeout, as a ping that timed out (matching
// context.DeadlineExceeded), given up after the give-up time without a
// second report, and replaced by a new connection.
func TestWatchPingTimeout(t *testing.T) {
	pg := cluster(t)
	db := openTest(t, pg)
	db.watchPing, db.watchPingTimeout, db.watchPingGiveUp = 50*time.Millisecond, 200*time.Millisecond, 500*time.Millisecond
	w := watchUp(t, db)
	stopListener(t, db)
	lostToPing(t, w)
	if err := w.upAgain(t); err != nil {
		t.Fatalf("reconnecting beside a stopped backend failed: %v", err)
	}
	if err := db.AddToken(context.Background(), store.Token{ID: "token:00000000000000aa", Name: "x", Role: store.RoleReader, CreatedAt: time.Now()}, [32]byte{1}); err != nil {
		t.Fatal(err)
	}
	within(t, w.changes, 5*time.Second, "notification on the new connection")
}

// TestWatchSlowPing: a listener whose backend answers its ping after the
// timeout but before the give-up (stopped, then continued, as on a machine
// saturated by its clients) is reported down at the timeout and up again
// at the answer, on the same connection, and a write committed while it
// was stopped is still notified.
func TestWatchSlowPing(t *testing.T) {
	pg := cluster(t)
	db := openTest(t, pg)
	db.watchPing, db.watchPingTimeout, db.watchPingGiveUp = 50*time.Millisecond, 200*time.Millisecond, time.Minute
	w := watchUp(t, db)
	pid := stopListener(t, db)
	lostToPing(t, w)
	if err := db.AddToken(context.Background(), store.Token{ID: "token:00000000000000ab", Name: "x", Role: store.RoleReader, CreatedAt: time.Now()}, [32]byte{2}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.states:
		t.Fatalf("state while the backend is stopped: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	syscall.Kill(pid, syscall.SIGCONT)
	if err := within(t, w.states, 10*time.Second, "up again"); err != nil {
		t.Fatalf("after the late answer: %v", err)
	}
	if got := listener(t, db); got != pid {
		t.Fatalf("the listener is backend %d, was %d: the connection was replaced", got, pid)
	}
	if k := within(t, w.changes, 5*time.Second, "the notification of the write made while stopped"); k != store.ChangeTokens {
		t.Fatalf("change %q", k)
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
	w := watchUp(t, b)
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
	t.Logf("stopped: %v", w.lost(t))
	pg.Start(t)
	if err := w.upAgain(t); err != nil {
		t.Logf("while stopped: %v", err)
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

// BenchmarkPublish is the store's share of publish throughput (the
// target: PostgreSQL at least SQLite's; sqlite.BenchmarkPublish is the
// anchor).
// Besides wall time it reports the CPU time of the PostgreSQL server's
// processes per publish (server-cpu-ns/op), which competes with plugkit
// for the same cores when both run on one machine.
func BenchmarkPublish(b *testing.B) {
	pg := testservice.StartPostgres(b)
	b.Setenv("PGPASSWORD", pg.Password)
	db, err := Open(context.Background(), pg.NewDatabase(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var backend int
	if err := db.pool.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		b.Fatal(err)
	}
	postmaster := parentPID(b, backend)
	before := clusterCPU(b, postmaster)
	storetest.BenchmarkPublish(b, db)
	b.StopTimer()
	b.ReportMetric(float64(clusterCPU(b, postmaster)-before)/float64(b.N), "server-cpu-ns/op")
}

// parentPID reads a process's parent from /proc.
func parentPID(b *testing.B, pid int) int {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	// pid (comm) state ppid ...: comm may hold spaces, so cut at its ')'.
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// clusterCPU is the CPU time, in nanoseconds, of the postmaster, its
// children running now and those it has reaped.
func clusterCPU(b *testing.B, postmaster int) int64 {
	// stat returns a process's parent and its CPU ticks: utime and stime,
	// with reaped also cutime and cstime.
	stat := func(pid int, reaped bool) (ppid int, ticks int64) {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, 0
		}
		// The fields after "pid (comm)", comm possibly holding spaces:
		// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
		// cmajflt utime stime cutime cstime ...
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		ppid, _ = strconv.Atoi(f[1])
		cols := f[11:13]
		if reaped {
			cols = f[11:15]
		}
		for _, v := range cols {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
		return ppid, ticks
	}
	_, total := stat(postmaster, true)
	procs, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range procs {
		if pid, err := strconv.Atoi(p.Name()); err == nil {
			if ppid, t := stat(pid, false); ppid == postmaster {
				total += t
			}
		}
	}
	return total * int64(time.Second) / 100 // USER_HZ
}
