package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// PutInstallation implements store.Store. The plugin's lock makes the
// quota exact; a report that moves from one plugin to another is counted
// against the new one, under the new one's lock.
func (db *DB) PutInstallation(ctx context.Context, in distribution.Installation, maxPerPlugin int) error {
	return db.write(ctx, in.PluginID, store.ChangeCatalog, func(t writeTx) error {
		return store.PutInstallation(t, in, maxPerPlugin)
	})
}

// PluginExists implements store.InstallationTx and store.OwnerTx.
func (t writeTx) PluginExists(id string) (bool, error) {
	return t.exists(`SELECT 1 FROM plugins WHERE id = $1`, id)
}

// InstallationPlugin implements store.InstallationTx.
func (t writeTx) InstallationPlugin(reporter, id string) (string, error) {
	var plugin string
	err := t.tx.QueryRow(t.ctx, `SELECT plugin_id FROM installations WHERE reporter = $1 AND id = $2`, reporter, id).Scan(&plugin)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return plugin, err
}

// CountInstallations implements store.InstallationTx.
func (t writeTx) CountInstallations(pluginID string) (n int, err error) {
	return n, t.tx.QueryRow(t.ctx, `SELECT COUNT(*) FROM installations WHERE plugin_id = $1`, pluginID).Scan(&n)
}

// UpsertInstallation implements store.InstallationTx.
func (t writeTx) UpsertInstallation(in distribution.Installation) error {
	_, err := t.tx.Exec(t.ctx, `INSERT INTO installations (`+store.InstallationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (reporter, id) DO UPDATE SET plugin_id = excluded.plugin_id,
			release_id = excluded.release_id, digest = excluded.digest, status = excluded.status,
			host = excluded.host, reported_at = excluded.reported_at`,
		in.Reporter, in.ID, in.PluginID, in.ReleaseID, in.ArtifactDigest, in.Status, in.Host, in.ReportedAt.UnixNano())
	return err
}

// Installations implements store.Store.
func (db *DB) Installations(ctx context.Context, q store.InstallationQuery) ([]distribution.Installation, error) {
	after := q.After
	if after == nil {
		after = &store.InstallationKey{}
	}
	var rows pgx.Rows
	var err error
	if q.PluginID != "" {
		rows, err = db.pool.Query(ctx, `SELECT `+store.InstallationColumns+` FROM installations
			WHERE plugin_id = $1 AND (reporter, id) > ($2, $3)
			ORDER BY plugin_id, reporter, id LIMIT $4`, q.PluginID, after.Reporter, after.ID, q.Limit)
	} else {
		rows, err = db.pool.Query(ctx, `SELECT `+store.InstallationColumns+` FROM installations
			WHERE (plugin_id, reporter, id) > ($1, $2, $3)
			ORDER BY plugin_id, reporter, id LIMIT $4`, after.PluginID, after.Reporter, after.ID, q.Limit)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.CollectRows(rows, store.ScanInstallation)
}
