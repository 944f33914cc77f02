package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/registry/store"
)

const ownersSQL = `SELECT identity FROM owners WHERE plugin_id = $1 ORDER BY identity`

// ownersReadSQL is Owners in one statement: one snapshot, so that "no
// owners" is never confused with "no plugin" by a publish landing in
// between.
const ownersReadSQL = `SELECT EXISTS (SELECT 1 FROM plugins WHERE id = $1), ARRAY(` + ownersSQL + `)`

func scanOwners(rows pgx.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	owners, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if owners == nil {
		owners = []string{}
	}
	return owners, err
}

// Owners implements store.Store in one statement (ownersReadSQL). Every
// publish asks first, so it goes through the publish queue as a read: at
// once when no group of publishes is being written, else with the next
// group, in its round trip (see publishQueue).
func (db *DB) Owners(ctx context.Context, pluginID string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := &pendingPublish{ctx: ctx, read: true, signal: make(chan struct{})}
	p.nr.Release.PluginID = pluginID
	db.publishes.run(db, p)
	switch {
	case p.err != nil:
		return nil, p.err
	case !p.found:
		return nil, store.ErrNotFound
	case p.owners == nil:
		p.owners = []string{}
	}
	return p.owners, nil
}

// ChangeOwners implements store.Store.
func (db *DB) ChangeOwners(ctx context.Context, pluginID string, op store.OwnerOp, identity string) ([]string, error) {
	var owners []string
	err := db.write(ctx, pluginID, store.ChangeCatalog, func(t writeTx) (err error) {
		owners, err = store.ChangeOwners(t, pluginID, op, identity)
		return err
	})
	return owners, err
}

// AddOwner implements store.OwnerTx.
func (t writeTx) AddOwner(pluginID, identity string) error {
	_, err := t.tx.Exec(t.ctx, `INSERT INTO owners (plugin_id, identity) VALUES ($1, $2) ON CONFLICT DO NOTHING`, pluginID, identity)
	return err
}

// RemoveOwner implements store.OwnerTx.
func (t writeTx) RemoveOwner(pluginID, identity string) error {
	_, err := t.tx.Exec(t.ctx, `DELETE FROM owners WHERE plugin_id = $1 AND identity = $2`, pluginID, identity)
	return err
}

// ClearOwners implements store.OwnerTx.
func (t writeTx) ClearOwners(pluginID string) error {
	_, err := t.tx.Exec(t.ctx, `DELETE FROM owners WHERE plugin_id = $1`, pluginID)
	return err
}

// Owners implements store.OwnerTx.
func (t writeTx) Owners(pluginID string) ([]string, error) {
	return scanOwners(t.tx.Query(t.ctx, ownersSQL, pluginID))
}
