package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// PutInstallation implements store.Store.
func (db *DB) PutInstallation(ctx context.Context, in distribution.Installation, maxPerPlugin int) error {
	return db.write(ctx, func(t writeTx) error { return store.PutInstallation(t, in, maxPerPlugin) })
}

// InstallationPlugin implements store.InstallationTx.
func (t writeTx) InstallationPlugin(reporter, id string) (string, error) {
	var plugin string
	err := t.stmt(t.q.installationPlugin).QueryRowContext(t.ctx, reporter, id).Scan(&plugin)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return plugin, err
}

// CountInstallations implements store.InstallationTx.
func (t writeTx) CountInstallations(pluginID string) (int, error) {
	return count(t.ctx, t.stmt(t.q.countInstallations), pluginID)
}

// UpsertInstallation implements store.InstallationTx.
func (t writeTx) UpsertInstallation(in distribution.Installation) error {
	_, err := t.stmt(t.q.upsertInstallation).ExecContext(t.ctx, in.Reporter, in.ID, in.PluginID, in.ReleaseID,
		in.ArtifactDigest, in.Status, in.Host, in.ReportedAt.UnixNano())
	return err
}

// Installations implements store.Store.
func (db *DB) Installations(ctx context.Context, q store.InstallationQuery) ([]distribution.Installation, error) {
	after := q.After
	if after == nil {
		after = &store.InstallationKey{}
	}
	var args []any
	stmt := db.q.installationsAll
	if q.PluginID != "" {
		stmt = db.q.installationsOf
		args = []any{q.PluginID, after.Reporter, after.ID, q.Limit}
	} else {
		args = []any{after.PluginID, after.Reporter, after.ID, q.Limit}
	}
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.CollectRows(rows, store.ScanInstallation)
}
