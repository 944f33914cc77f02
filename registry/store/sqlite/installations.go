package sqlite

import (
	"context"
	"time"

	"github.com/plugkit/plugkit/distribution"
)

// PutInstallation implements store.Store.
func (db *DB) PutInstallation(ctx context.Context, in distribution.Installation) error {
	_, err := db.w.ExecContext(ctx, `INSERT INTO installations
		(id, plugin_id, release_id, digest, status, host, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET plugin_id = excluded.plugin_id,
			release_id = excluded.release_id, digest = excluded.digest, status = excluded.status,
			host = excluded.host, reported_at = excluded.reported_at`,
		in.ID, in.PluginID, in.ReleaseID, in.ArtifactDigest, in.Status, in.Host, in.ReportedAt.UnixNano())
	return err
}

// Installations implements store.Store.
func (db *DB) Installations(ctx context.Context, pluginID string) ([]distribution.Installation, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, plugin_id, release_id, digest, status, host, reported_at
		FROM installations WHERE ? = '' OR plugin_id = ? ORDER BY id`, pluginID, pluginID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []distribution.Installation{}
	for rows.Next() {
		var in distribution.Installation
		var reported int64
		if err := rows.Scan(&in.ID, &in.PluginID, &in.ReleaseID, &in.ArtifactDigest,
			&in.Status, &in.Host, &reported); err != nil {
			return nil, err
		}
		in.ReportedAt = time.Unix(0, reported).UTC()
		out = append(out, in)
	}
	return out, rows.Err()
}
