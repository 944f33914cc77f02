package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

const installationColumns = `reporter, id, plugin_id, release_id, digest, status, host, reported_at`

// PutInstallation implements store.Store.
func (db *DB) PutInstallation(ctx context.Context, in distribution.Installation, maxPerPlugin int) error {
	return db.write(ctx, func(t writeTx) error {
		found, err := exists(ctx, t.stmt(t.q.pluginExists), in.PluginID)
		if err != nil {
			return err
		}
		if !found {
			return store.ErrNotFound
		}
		// A report replacing one of the same plugin adds no row.
		var was string
		err = t.stmt(t.q.installationPlugin).QueryRowContext(ctx, in.Reporter, in.ID).Scan(&was)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if was != in.PluginID {
			if err := t.checkQuota(t.q.countInstallations, "installations", maxPerPlugin, in.PluginID); err != nil {
				return err
			}
		}
		_, err = t.stmt(t.q.upsertInstallation).ExecContext(ctx, in.Reporter, in.ID, in.PluginID, in.ReleaseID,
			in.ArtifactDigest, in.Status, in.Host, in.ReportedAt.UnixNano())
		return err
	})
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
