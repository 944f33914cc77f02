package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

const releaseColumns = `r.id, r.plugin_id, r.version, r.description, r.digest, r.size, r.yanked, r.published_at`

type scanner interface{ Scan(...any) error }

func scanRelease(s scanner) (distribution.Release, error) {
	var rel distribution.Release
	var published int64
	err := s.Scan(&rel.ID, &rel.PluginID, &rel.Version, &rel.Description,
		&rel.ArtifactDigest, &rel.Size, &rel.Yanked, &published)
	if errors.Is(err, sql.ErrNoRows) {
		return rel, store.ErrNotFound
	}
	rel.PublishedAt = time.Unix(0, published).UTC()
	return rel, err
}

// queryer is what *sql.DB and *sql.Tx share, so lookups run in either.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func release(ctx context.Context, q queryer, id string) (distribution.Release, error) {
	return scanRelease(q.QueryRowContext(ctx, `SELECT `+releaseColumns+` FROM releases r WHERE r.id = ?`, id))
}

// Release implements store.Store.
func (db *DB) Release(ctx context.Context, id string) (distribution.Release, error) {
	return release(ctx, db.r, id)
}

// Channel implements store.Store.
func (db *DB) Channel(ctx context.Context, pluginID, channel string) (distribution.Release, error) {
	return scanRelease(db.r.QueryRowContext(ctx, `SELECT `+releaseColumns+`
		FROM channels c JOIN releases r ON r.id = c.release_id
		WHERE c.plugin_id = ? AND c.name = ? AND r.yanked = 0`, pluginID, channel))
}

// HasArtifact implements store.Store.
func (db *DB) HasArtifact(ctx context.Context, digest string) (bool, error) {
	var one int
	err := db.r.QueryRowContext(ctx, `SELECT 1 FROM releases WHERE digest = ? LIMIT 1`, digest).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Publish implements store.Store.
func (db *DB) Publish(ctx context.Context, nr store.NewRelease) (distribution.Release, bool, error) {
	r := nr.Release
	created := false
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		old, err := release(ctx, tx, r.ID)
		switch {
		case err == nil && old.ArtifactDigest != r.ArtifactDigest:
			return store.ErrConflict
		case err == nil && old.Yanked:
			return store.ErrYanked
		case errors.Is(err, store.ErrNotFound):
			created = true
		case err != nil:
			return err
		}
		now := time.Now().UnixNano()
		if created {
			// The plugin's name and description follow its latest release.
			if _, err := tx.ExecContext(ctx, `INSERT INTO plugins (id, name, description, updated_at)
				VALUES (?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET name = excluded.name,
					description = excluded.description, updated_at = excluded.updated_at`,
				r.PluginID, nr.Name, r.Description, now); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO releases
				(id, plugin_id, version, description, digest, size, yanked, published_at)
				VALUES (?, ?, ?, ?, ?, ?, 0, ?)`,
				r.ID, r.PluginID, r.Version, r.Description, r.ArtifactDigest, r.Size, r.PublishedAt.UnixNano()); err != nil {
				return err
			}
		}
		return setChannel(ctx, tx, r.PluginID, nr.Channel, r.ID, now)
	})
	if err != nil {
		return distribution.Release{}, false, err
	}
	rel, err := db.Release(ctx, r.ID)
	return rel, created, err
}

func setChannel(ctx context.Context, tx *sql.Tx, pluginID, channel, releaseID string, now int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO channels (plugin_id, name, release_id, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (plugin_id, name) DO UPDATE SET release_id = excluded.release_id,
			updated_at = excluded.updated_at`, pluginID, channel, releaseID, now)
	return err
}

// SetChannel implements store.Store.
func (db *DB) SetChannel(ctx context.Context, pluginID, channel, releaseID string) (distribution.Release, error) {
	var rel distribution.Release
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		rel, err = release(ctx, tx, releaseID)
		switch {
		case err != nil:
			return err
		case rel.PluginID != pluginID:
			return store.ErrNotFound
		case rel.Yanked:
			return store.ErrYanked
		}
		return setChannel(ctx, tx, pluginID, channel, releaseID, time.Now().UnixNano())
	})
	return rel, err
}

// SetYanked implements store.Store.
func (db *DB) SetYanked(ctx context.Context, releaseID string, yanked bool) (distribution.Release, error) {
	var rel distribution.Release
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE releases SET yanked = ? WHERE id = ?`, yanked, releaseID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		rel, err = release(ctx, tx, releaseID)
		return err
	})
	return rel, err
}
