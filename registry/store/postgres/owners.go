package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/registry/store"
)

const ownersSQL = `SELECT identity FROM owners WHERE plugin_id = $1 ORDER BY identity`

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

// Owners implements store.Store in one statement: one round trip rather
// than a transaction's four, since every publish asks first; and one
// snapshot, so that "no owners" is never confused with "no plugin" by a
// publish landing in between.
func (db *DB) Owners(ctx context.Context, pluginID string) ([]string, error) {
	var found bool
	var owners []string
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM plugins WHERE id = $1),
		ARRAY(`+ownersSQL+`)`, pluginID).Scan(&found, &owners)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, store.ErrNotFound
	case owners == nil:
		owners = []string{}
	}
	return owners, nil
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
