package postgres

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/plugkit/plugkit/registry/store"
)

const tokenColumns = `id, name, role, created_at, revoked_at`

// tokenLock is the advisory lock of token writes: they are rare.
const tokenLock = "tokens"

// AddToken implements store.Tokens.
func (db *DB) AddToken(ctx context.Context, t store.Token, sum [sha256.Size]byte) error {
	return db.write(ctx, tokenLock, store.ChangeTokens, func(w writeTx) error {
		_, err := w.tx.Exec(ctx, `INSERT INTO tokens (id, name, role, sum, created_at) VALUES ($1, $2, $3, $4, $5)`,
			t.ID, t.Name, t.Role, sum[:], t.CreatedAt.UnixNano())
		return err
	})
}

// ListTokens implements store.Tokens.
func (db *DB) ListTokens(ctx context.Context) ([]store.Token, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.CollectRows(rows, store.ScanToken)
}

// RevokeToken implements store.Tokens.
func (db *DB) RevokeToken(ctx context.Context, id string) (store.Token, error) {
	var t store.Token
	err := db.write(ctx, tokenLock, store.ChangeTokens, func(w writeTx) error {
		var err error
		t, err = store.ScanToken(w.tx.QueryRow(ctx, `UPDATE tokens SET revoked_at = COALESCE(revoked_at, $2)
			WHERE id = $1 RETURNING `+tokenColumns, id, time.Now().UnixNano()))
		return err
	})
	return t, err
}

// TokenBySum implements store.Tokens.
func (db *DB) TokenBySum(ctx context.Context, sum [sha256.Size]byte) (store.Token, error) {
	return store.ScanToken(db.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE sum = $1 AND revoked_at IS NULL`, sum[:]))
}
