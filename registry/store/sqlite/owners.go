package sqlite

import (
	"context"
	"database/sql"

	"github.com/plugkit/plugkit/registry/store"
)

func scanOwners(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.CollectRows(rows, store.ScanString)
}

// Owners implements store.Store.
func (db *DB) Owners(ctx context.Context, pluginID string) ([]string, error) {
	var owners []string
	// One transaction, so that "no owners" is never confused with "no
	// plugin" by a publish landing in between.
	err := db.read(ctx, func(tx *sql.Tx) error {
		found, err := factsTx{ctx, tx, &db.q.factsR}.PluginExists(pluginID)
		if err != nil {
			return err
		}
		if !found {
			return store.ErrNotFound
		}
		owners, err = scanOwners(tx.StmtContext(ctx, db.q.owners).QueryContext(ctx, pluginID))
		return err
	})
	return owners, err
}

// ChangeOwners implements store.Store.
func (db *DB) ChangeOwners(ctx context.Context, pluginID string, op store.OwnerOp, identity string) ([]string, error) {
	var owners []string
	err := db.write(ctx, func(t writeTx) (err error) {
		owners, err = store.ChangeOwners(t, pluginID, op, identity)
		return err
	})
	return owners, err
}

// AddOwner implements store.OwnerTx.
func (t writeTx) AddOwner(pluginID, identity string) error {
	_, err := t.stmt(t.q.insertOwner).ExecContext(t.ctx, pluginID, identity)
	return err
}

// RemoveOwner implements store.OwnerTx.
func (t writeTx) RemoveOwner(pluginID, identity string) error {
	_, err := t.stmt(t.q.deleteOwner).ExecContext(t.ctx, pluginID, identity)
	return err
}

// ClearOwners implements store.OwnerTx.
func (t writeTx) ClearOwners(pluginID string) error {
	_, err := t.stmt(t.q.deleteOwners).ExecContext(t.ctx, pluginID)
	return err
}

// Owners implements store.OwnerTx.
func (t writeTx) Owners(pluginID string) ([]string, error) {
	return scanOwners(t.stmt(t.q.ownersW).QueryContext(t.ctx, pluginID))
}
