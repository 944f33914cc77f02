package store

import "context"

// ChangeKind says what a write changed, so that a server drops only the
// caches it affects.
type ChangeKind string

// The kinds of change.
const (
	// ChangeCatalog: a release, channel, yank, owner or installation.
	ChangeCatalog ChangeKind = "catalog"
	// ChangeTokens: a token was added or revoked.
	ChangeTokens ChangeKind = "tokens"
)

// Watcher is implemented by stores that several servers share (the
// PostgreSQL store): it tells each server of every committed write,
// whichever server made it, so that caches are dropped at once instead of
// expiring.
type Watcher interface {
	// Watch runs until ctx ends. It calls state(nil) once it listens,
	// then changed for each committed write. When it stops listening it
	// calls state at once with the reason, then calls state(nil) again
	// once it listens: on a new connection, or on the same one when the
	// database answers after the store's liveness timeout but before it
	// gives the connection up (no notification is lost on a connection
	// that answers). The reason matches context.DeadlineExceeded
	// (errors.Is) when the database stopped answering within that
	// timeout; otherwise the connection failed or was closed by the
	// server. While it cannot connect (at the start, or
	// after a loss) it also calls state with the error of the first
	// failed attempt, and not with the others, so that a database that
	// is down reports once, not at every retry.
	//
	// Writes made while it was not listening are not replayed: a server
	// must not trust its caches from a state(err) to the next
	// state(nil), and must drop them at state(nil). When ctx ends Watch
	// returns without a last call to state.
	Watch(ctx context.Context, changed func(ChangeKind), state func(error))
}
