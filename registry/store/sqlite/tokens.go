package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"time"

	"github.com/plugkit/plugkit/registry/store"
)

const tokenColumns = `id, name, role, created_at, revoked_at`

// AddToken implements store.Tokens.
func (db *DB) AddToken(ctx context.Context, t store.Token, sum [sha256.Size]byte) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tokens (id, name, role, sum, created_at) VALUES (?, ?, ?, ?, ?)`,
			t.ID, t.Name, t.Role, sum[:], t.CreatedAt.UnixNano())
		return err
	})
}

// ListTokens implements store.Tokens.
func (db *DB) ListTokens(ctx context.Context) ([]store.Token, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.CollectRows(rows, store.ScanToken)
}

// RevokeToken implements store.Tokens.
func (db *DB) RevokeToken(ctx context.Context, id string) (t store.Token, err error) {
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		t, err = store.ScanToken(tx.QueryRowContext(ctx, `UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?)
			WHERE id = ? RETURNING `+tokenColumns, time.Now().UnixNano(), id))
		return err
	})
	return t, err
}

// TokenBySum implements store.Tokens.
func (db *DB) TokenBySum(ctx context.Context, sum [sha256.Size]byte) (store.Token, error) {
	return store.ScanToken(db.r.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE sum = ? AND revoked_at IS NULL`, sum[:]))
}
