package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/plugkit/plugkit/registry/store"
)

func scanOwners(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	owners := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		owners = append(owners, id)
	}
	return owners, rows.Err()
}

// Owners implements store.Store.
func (db *DB) Owners(ctx context.Context, pluginID string) ([]string, error) {
	var owners []string
	// One transaction, so that "no owners" is never confused with "no
	// plugin" by a publish landing in between.
	err := db.read(ctx, func(tx *sql.Tx) error {
		found, err := exists(ctx, tx.StmtContext(ctx, db.q.pluginExistsR), pluginID)
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
	err := db.write(ctx, func(t writeTx) error {
		found, err := exists(ctx, t.stmt(t.q.pluginExists), pluginID)
		if err != nil {
			return err
		}
		if !found {
			return store.ErrNotFound
		}
		switch op {
		case store.Transfer:
			if _, err := t.stmt(t.q.deleteOwners).ExecContext(ctx, pluginID); err != nil {
				return err
			}
			fallthrough
		case store.Grant:
			_, err = t.stmt(t.q.insertOwner).ExecContext(ctx, pluginID, identity)
		case store.Revoke:
			_, err = t.stmt(t.q.deleteOwner).ExecContext(ctx, pluginID, identity)
		default:
			err = fmt.Errorf("sqlite: unknown owner operation %q", op)
		}
		if err != nil {
			return err
		}
		owners, err = scanOwners(t.stmt(t.q.ownersW).QueryContext(ctx, pluginID))
		return err
	})
	return owners, err
}
