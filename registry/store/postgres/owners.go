package postgres

import (
	"context"
	"fmt"

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

// Owners implements store.Store.
func (db *DB) Owners(ctx context.Context, pluginID string) ([]string, error) {
	var owners []string
	// One snapshot, so that "no owners" is never confused with "no
	// plugin" by a publish landing in between.
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			found, err := exists(ctx, tx, `SELECT 1 FROM plugins WHERE id = $1`, pluginID)
			if err != nil {
				return err
			}
			if !found {
				return store.ErrNotFound
			}
			owners, err = scanOwners(tx.Query(ctx, ownersSQL, pluginID))
			return err
		})
	return owners, err
}

// ChangeOwners implements store.Store.
func (db *DB) ChangeOwners(ctx context.Context, pluginID string, op store.OwnerOp, identity string) ([]string, error) {
	var owners []string
	err := db.write(ctx, pluginID, store.ChangeCatalog, func(t writeTx) error {
		found, err := t.exists(`SELECT 1 FROM plugins WHERE id = $1`, pluginID)
		if err != nil {
			return err
		}
		if !found {
			return store.ErrNotFound
		}
		switch op {
		case store.Transfer:
			if _, err := t.tx.Exec(ctx, `DELETE FROM owners WHERE plugin_id = $1`, pluginID); err != nil {
				return err
			}
			fallthrough
		case store.Grant:
			_, err = t.tx.Exec(ctx, `INSERT INTO owners (plugin_id, identity) VALUES ($1, $2) ON CONFLICT DO NOTHING`, pluginID, identity)
		case store.Revoke:
			_, err = t.tx.Exec(ctx, `DELETE FROM owners WHERE plugin_id = $1 AND identity = $2`, pluginID, identity)
		default:
			err = fmt.Errorf("postgres: unknown owner operation %q", op)
		}
		if err != nil {
			return err
		}
		owners, err = scanOwners(t.tx.Query(ctx, ownersSQL, pluginID))
		return err
	})
	return owners, err
}
