package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// Publish implements store.Store in two round trips, since a publish is
// the write that comes in bursts: the first opens the transaction, takes
// the plugin's lock, queues the notification and reads everything the
// decision needs (owner, existing release, counts); the second writes and
// commits. Any refusal rolls back.
func (db *DB) Publish(ctx context.Context, nr store.NewRelease) (distribution.Release, bool, error) {
	r := nr.Release
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return distribution.Release{}, false, err
	}
	defer conn.Release()
	rollback := func(err error) (distribution.Release, bool, error) {
		// A failed connection is discarded by the pool on release anyway.
		conn.Exec(context.WithoutCancel(ctx), `ROLLBACK`)
		return distribution.Release{}, false, err
	}

	var b pgx.Batch
	b.Queue(`BEGIN`)
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, lockKey("plugin", r.PluginID))
	b.Queue(`SELECT pg_notify($1, $2)`, changesChannel, string(store.ChangeCatalog))
	b.Queue(`SELECT EXISTS (SELECT 1 FROM plugins WHERE id = $1),
		EXISTS (SELECT 1 FROM owners WHERE plugin_id = $1 AND identity = $2),
		(SELECT COUNT(*) FROM releases WHERE plugin_id = $1),
		EXISTS (SELECT 1 FROM channels WHERE plugin_id = $1 AND name = $3),
		(SELECT COUNT(*) FROM channels WHERE plugin_id = $1)`, r.PluginID, nr.By.Identity, nr.Channel)
	b.Queue(releaseByID, r.ID)
	br := conn.SendBatch(ctx, &b)
	var found, owner, channelKnown bool
	var releases, channels int
	var old distribution.Release
	var lookupErr error
	err = func() error {
		defer br.Close()
		for range 3 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if err := br.QueryRow().Scan(&found, &owner, &releases, &channelKnown, &channels); err != nil {
			return err
		}
		old, lookupErr = store.ScanRelease(br.QueryRow())
		if lookupErr != nil && !errors.Is(lookupErr, store.ErrNotFound) {
			return lookupErr
		}
		return br.Close()
	}()
	if err != nil {
		return rollback(err)
	}

	if found && !owner && !nr.By.Admin {
		return rollback(store.ErrNotOwner)
	}
	created, err := store.JudgePublish(old, lookupErr, r.ArtifactDigest)
	switch {
	case err != nil:
		return rollback(err)
	case created && nr.MaxReleases > 0 && releases >= nr.MaxReleases:
		return rollback(&store.QuotaError{Quota: "releases", Max: nr.MaxReleases})
	case !channelKnown && nr.MaxChannels > 0 && channels >= nr.MaxChannels:
		return rollback(&store.QuotaError{Quota: "channels", Max: nr.MaxChannels})
	}

	now := time.Now().UnixNano()
	b = pgx.Batch{}
	stored := old
	if created {
		// The plugin's name and description follow its latest release.
		b.Queue(`INSERT INTO plugins (id, name, description, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name,
				description = excluded.description, updated_at = excluded.updated_at`,
			r.PluginID, nr.Name, r.Description, now)
		if !found && nr.By.Identity != "" {
			b.Queue(`INSERT INTO owners (plugin_id, identity) VALUES ($1, $2) ON CONFLICT DO NOTHING`, r.PluginID, nr.By.Identity)
		}
		b.Queue(`INSERT INTO releases (id, plugin_id, version, description, digest, size, yanked, published_at)
			VALUES ($1, $2, $3, $4, $5, $6, false, $7)`,
			r.ID, r.PluginID, r.Version, r.Description, r.ArtifactDigest, r.Size, r.PublishedAt.UnixNano())
		stored = r
		stored.Yanked = false
		stored.PublishedAt = time.Unix(0, r.PublishedAt.UnixNano()).UTC()
	}
	b.Queue(upsertChannel, r.PluginID, nr.Channel, r.ID, now)
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return rollback(err)
	}
	return stored, created, nil
}
