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
	watchPing        = 2 * time.Second
	watchPingTimeout = 2 * time.Second
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
			state(err)
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
	quiet, timeout := cmp.Or(db.watchPing, watchPing), cmp.Or(db.watchPingTimeout, watchPingTimeout)
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
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err = conn.Ping(pctx)
		timedOut := pctx.Err() != nil
		cancel()
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return ctx.Err()
		case timedOut:
			return fmt.Errorf("%w: no answer to a ping within %v, after %v without a notification: %w",
				errListened, timeout, quiet, context.DeadlineExceeded)
		default:
			return fmt.Errorf("%w: ping: %w", errListened, err)
		}
	}
}
