package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/registry/store"
)

// Reconnection and liveness of Watch.
const (
	watchRetryMin = 50 * time.Millisecond
	watchRetryMax = 2 * time.Second
	// watchPing: with no notification for this long, the connection is
	// pinged, so that a silently dead link is noticed within about this
	// long plus the ping's timeout.
	watchPing = 2 * time.Second
	// watchPingTimeout: a ping unanswered for this long reports the feed
	// down (the server bypasses its caches), but the connection is kept.
	// On a machine saturated by wrk (bench/replicas.sh, section 1) the
	// listeners' PostgreSQL backends went without a CPU for up to 2 s,
	// all at once, while the replicas' timers were on time: pings took
	// 0.25-1.9 s, and one past 2 s cost a reconnection. Notifications
	// are not lost on a connection that answers, so a late answer
	// reports the feed up again on the same connection.
	watchPingTimeout = 2 * time.Second
	// watchPingGiveUp: a ping unanswered for this long closes the
	// connection, and Watch connects again.
	watchPingGiveUp = 15 * time.Second
)

// watchAppName is the application_name of the LISTEN connection, after the
// URL's if it has one.
const watchAppName = "plugkit change feed"

// Watch implements store.Watcher with LISTEN on its own connection (a pool
// connection could be handed to another request between notifications).
func (db *DB) Watch(ctx context.Context, changed func(store.ChangeKind), state func(error)) {
	delay := watchRetryMin
	failing := false // a failed attempt to connect was reported since the last loss
	for {
		err := db.listen(ctx, changed, state)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, errListened):
			if !errors.Is(err, errReported) {
				state(err)
			}
			delay, failing = watchRetryMin, false // it worked for a while: retry at once
		case !failing:
			state(err)
			failing = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, watchRetryMax)
	}
}

// errListened tells Watch that listen had been up before it failed; the
// errors of listen wrap it with the cause.
var errListened = errors.New("postgres: LISTEN connection lost")

// listen connects, listens, calls state(nil) and delivers notifications
// until the connection fails or ctx ends.
func (db *DB) listen(ctx context.Context, changed func(store.ChangeKind), state func(error)) error {
	cfg := db.cfg.Copy()
	// Named, so that pg_stat_activity tells it from the pool's.
	cfg.RuntimeParams["application_name"] = strings.TrimSpace(cfg.RuntimeParams["application_name"] + " " + watchAppName)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres: change feed: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return fmt.Errorf("postgres: change feed: LISTEN: %w", err)
	}
	state(nil)
	quiet := cmp.Or(db.watchPing, watchPing)
	for {
		// Whether a context timed out is read before its cancel, after
		// which Err is always set.
		wctx, cancel := context.WithTimeout(ctx, quiet)
		n, err := conn.WaitForNotification(wctx)
		quietFor := wctx.Err() != nil
		cancel()
		switch {
		case err == nil:
			changed(store.ChangeKind(n.Payload))
			continue
		case ctx.Err() != nil:
			return ctx.Err()
		case !quietFor:
			return fmt.Errorf("%w: %w", errListened, err)
		}
		// Quiet for watchPing: make sure the link is alive.
		if err := db.ping(ctx, conn, quiet, state); err != nil {
			return err
		}
	}
}

// errReported marks a loss that listen has already passed to state.
var errReported = errors.New("reported")

// ping pings conn. An answer within the ping's timeout changes nothing.
// Past it, state is told the feed is down, and a later answer (before
// the give-up) tells it the feed is up again; no answer by then is an
// error that wraps errListened, context.DeadlineExceeded and errReported.
func (db *DB) ping(ctx context.Context, conn *pgx.Conn, quiet time.Duration, state func(error)) error {
	timeout, giveUp := cmp.Or(db.watchPingTimeout, watchPingTimeout), cmp.Or(db.watchPingGiveUp, watchPingGiveUp)
	slow := fmt.Errorf("%w: no answer to a ping within %v, after %v without a notification: %w",
		errListened, timeout, quiet, context.DeadlineExceeded)
	reported := make(chan struct{})
	late := time.AfterFunc(timeout, func() {
		if ctx.Err() == nil { // no call to state once ctx has ended
			state(slow)
		}
		close(reported)
	})
	pctx, cancel := context.WithTimeout(ctx, giveUp)
	err := conn.Ping(pctx)
	timedOut := pctx.Err() != nil
	cancel()
	wasLate := !late.Stop()
	if wasLate {
		<-reported // state is called by one goroutine at a time
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil:
		if wasLate {
			state(nil)
		}
		return nil
	case timedOut:
		return fmt.Errorf("%w: gave up after %v: %w", slow, giveUp, errReported)
	case wasLate:
		return fmt.Errorf("%w: ping: %w: %w", errListened, err, errReported)
	default:
		return fmt.Errorf("%w: ping: %w", errListened, err)
	}
}
