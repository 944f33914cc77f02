package postgres

import (
	"context"
	"errors"
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

// Watch implements store.Watcher with LISTEN on its own connection (a pool
// connection could be handed to another request between notifications).
func (db *DB) Watch(ctx context.Context, changed func(store.ChangeKind), up func(bool)) {
	delay := watchRetryMin
	for ctx.Err() == nil {
		err := db.listen(ctx, changed, up)
		if ctx.Err() != nil {
			return
		}
		if err == errListened {
			delay = watchRetryMin // it worked for a while: retry at once
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, watchRetryMax)
	}
}

// errListened tells Watch that listen had been up before it failed.
var errListened = errors.New("postgres: LISTEN connection lost")

// listen connects, listens and delivers notifications until the
// connection fails or ctx ends; it calls up(false) on the way out when it
// had called up(true).
func (db *DB) listen(ctx context.Context, changed func(store.ChangeKind), up func(bool)) error {
	conn, err := pgx.ConnectConfig(ctx, db.cfg.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return err
	}
	up(true)
	defer up(false)
	for {
		wctx, cancel := context.WithTimeout(ctx, watchPing)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			changed(store.ChangeKind(n.Payload))
			continue
		case ctx.Err() != nil:
			return ctx.Err()
		case wctx.Err() == nil:
			return errListened // the connection failed
		}
		// Quiet for watchPing: make sure the link is alive.
		pctx, cancel := context.WithTimeout(ctx, watchPingTimeout)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return errListened
		}
	}
}
