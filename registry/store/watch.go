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
	// Watch runs until ctx ends. It calls up(true) once it listens, then
	// changed for each committed write; when it stops listening (the
	// connection failed) it calls up(false) at once, then reconnects and
	// calls up(true) again. Writes made while it was down are not
	// replayed: a server must not trust its caches between up(false) and
	// the next up(true), and must drop them at up(true).
	Watch(ctx context.Context, changed func(ChangeKind), up func(bool))
}
