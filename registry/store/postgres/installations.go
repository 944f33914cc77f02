package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

const installationColumns = `reporter, id, plugin_id, release_id, digest, status, host, reported_at`

// PutInstallation implements store.Store. The plugin's lock makes the
// quota exact; a report that moves from one plugin to another is counted
// against the new one, under the new one's lock.
func (db *DB) PutInstallation(ctx context.Context, in distribution.Installation, maxPerPlugin int) error {
	return db.write(ctx, in.PluginID, store.ChangeCatalog, func(t writeTx) error {
		found, err := t.exists(`SELECT 1 FROM plugins WHERE id = $1`, in.PluginID)
		if err != nil {
			return err
		}
		if !found {
			return store.ErrNotFound
		}
		// A report replacing one of the same plugin adds no row.
		var was string
		err = t.tx.QueryRow(ctx, `SELECT plugin_id FROM installations WHERE reporter = $1 AND id = $2`, in.Reporter, in.ID).Scan(&was)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if was != in.PluginID {
			if err := t.checkQuota(`SELECT COUNT(*) FROM installations WHERE plugin_id = $1`, "installations", maxPerPlugin, in.PluginID); err != nil {
				return err
			}
		}
		_, err = t.tx.Exec(ctx, `INSERT INTO installations (`+installationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (reporter, id) DO UPDATE SET plugin_id = excluded.plugin_id,
				release_id = excluded.release_id, digest = excluded.digest, status = excluded.status,
				host = excluded.host, reported_at = excluded.reported_at`,
			in.Reporter, in.ID, in.PluginID, in.ReleaseID, in.ArtifactDigest, in.Status, in.Host, in.ReportedAt.UnixNano())
		return err
	})
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
		rows, err = db.pool.Query(ctx, `SELECT `+installationColumns+` FROM installations
			WHERE plugin_id = $1 AND (reporter, id) > ($2, $3)
			ORDER BY plugin_id, reporter, id LIMIT $4`, q.PluginID, after.Reporter, after.ID, q.Limit)
	} else {
		rows, err = db.pool.Query(ctx, `SELECT `+installationColumns+` FROM installations
			WHERE (plugin_id, reporter, id) > ($1, $2, $3)
			ORDER BY plugin_id, reporter, id LIMIT $4`, after.PluginID, after.Reporter, after.ID, q.Limit)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []distribution.Installation{}
	for rows.Next() {
		var in distribution.Installation
		var reported int64
		if err := rows.Scan(&in.Reporter, &in.ID, &in.PluginID, &in.ReleaseID, &in.ArtifactDigest,
			&in.Status, &in.Host, &reported); err != nil {
			return nil, err
		}
		in.ReportedAt = time.Unix(0, reported).UTC()
		out = append(out, in)
	}
	return out, rows.Err()
}
