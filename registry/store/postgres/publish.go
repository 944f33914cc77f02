package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// publishSQL reads what the decision of a publish needs and, in the same
// statement, makes the writes of the decision it reaches: one round trip,
// since a publish is the write that comes in bursts and each round trip
// costs both processes a wake-up. It runs after the statement that takes
// the plugin's lock, so its snapshot holds every write committed before
// the lock was granted.
//
// The decision is store.JudgePublish's with the ownership and quota checks
// of the embedded store; Publish decides again in Go from the facts this
// returns and refuses to report an outcome the SQL did not reach, so the
// two cannot drift apart unnoticed (the conformance suite covers every
// outcome).
//
// Parameters: $1 plugin ID, $2 identity, $3 channel, $4 release ID, $5 the
// actor is an admin, $6 max releases, $7 max channels (<= 0: none), $8
// plugin name, $9 description, $10 now, $11 version, $12 digest, $13 size,
// $14 published at, $15 and $16 the notification's channel and payload:
// only a write notifies, delivered at commit. The foreign keys of the new rows on the plugin and the
// release are checked at the end of the statement, when both exist.
const publishSQL = `WITH facts AS (
		SELECT EXISTS (SELECT 1 FROM plugins WHERE id = $1) AS found,
			EXISTS (SELECT 1 FROM owners WHERE plugin_id = $1 AND identity = $2) AS owner,
			(SELECT COUNT(*) FROM releases WHERE plugin_id = $1) AS releases,
			EXISTS (SELECT 1 FROM channels WHERE plugin_id = $1 AND name = $3) AS channel_known,
			(SELECT COUNT(*) FROM channels WHERE plugin_id = $1) AS channels),
	verdict AS (
		SELECT old.id IS NULL AS created,
			(NOT f.found OR f.owner OR $5::boolean)
			AND (old.id IS NULL OR (old.digest = $12::text AND NOT old.yanked))
			AND (old.id IS NOT NULL OR $6::bigint <= 0 OR f.releases < $6::bigint)
			AND (f.channel_known OR $7::bigint <= 0 OR f.channels < $7::bigint) AS accepted
		FROM facts f LEFT JOIN releases old ON old.id = $4),
	new_plugin AS (
		INSERT INTO plugins (id, name, description, updated_at)
		SELECT $1, $8::text, $9::text, $10::bigint FROM verdict WHERE accepted AND created
		ON CONFLICT (id) DO UPDATE SET name = excluded.name,
			description = excluded.description, updated_at = excluded.updated_at),
	new_owner AS (
		INSERT INTO owners (plugin_id, identity)
		SELECT $1, $2 FROM verdict, facts WHERE accepted AND created AND NOT found AND $2 <> ''
		ON CONFLICT DO NOTHING),
	new_release AS (
		INSERT INTO releases (id, plugin_id, version, description, digest, size, yanked, published_at)
		SELECT $4, $1, $11::text, $9::text, $12::text, $13::bigint, false, $14::bigint
		FROM verdict WHERE accepted AND created),
	channel AS (
		INSERT INTO channels (plugin_id, name, release_id, updated_at)
		SELECT $1, $3, $4, $10::bigint FROM verdict WHERE accepted
		` + onChannelConflict + `),
	notified AS (SELECT pg_notify($15, $16) FROM verdict WHERE accepted)
	SELECT (SELECT COUNT(*) FROM notified) = 1, f.found, f.owner, f.releases, f.channel_known, f.channels,
		COALESCE(r.id, ''), COALESCE(r.plugin_id, ''), COALESCE(r.version, ''), COALESCE(r.description, ''),
		COALESCE(r.digest, ''), COALESCE(r.size, 0), COALESCE(r.yanked, false), COALESCE(r.published_at, 0)
	FROM facts f LEFT JOIN releases r ON r.id = $4`

// Publish implements store.Store: two statements sent at once, which run
// in one implicit transaction (committed at the batch's end, rolled back
// whole on any error): the plugin's lock, then publishSQL.
func (db *DB) Publish(ctx context.Context, nr store.NewRelease) (distribution.Release, bool, error) {
	r := nr.Release
	now := time.Now().UnixNano()
	var b pgx.Batch
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, lockKey("plugin", r.PluginID))
	b.Queue(publishSQL, r.PluginID, nr.By.Identity, nr.Channel, r.ID, nr.By.Admin, nr.MaxReleases, nr.MaxChannels,
		nr.Name, r.Description, now, r.Version, r.ArtifactDigest, r.Size, r.PublishedAt.UnixNano(),
		changesChannel, string(store.ChangeCatalog))
	var written, found, owner, channelKnown bool
	var releases, channels int
	var old distribution.Release
	err := func() error {
		br := db.pool.SendBatch(ctx, &b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		var err error
		old, err = store.ScanRelease(br.QueryRow(), &written, &found, &owner, &releases, &channelKnown, &channels)
		if err != nil {
			return err
		}
		return br.Close()
	}()
	if err != nil {
		return distribution.Release{}, false, err
	}

	lookupErr := error(nil)
	if old.ID == "" { // release IDs are never empty
		lookupErr = store.ErrNotFound
	}
	created, err := store.JudgePublish(old, lookupErr, r.ArtifactDigest)
	switch {
	case found && !owner && !nr.By.Admin:
		err = store.ErrNotOwner
	case err != nil:
	case created && nr.MaxReleases > 0 && releases >= nr.MaxReleases:
		err = &store.QuotaError{Quota: "releases", Max: nr.MaxReleases}
	case !channelKnown && nr.MaxChannels > 0 && channels >= nr.MaxChannels:
		err = &store.QuotaError{Quota: "channels", Max: nr.MaxChannels}
	}
	if written != (err == nil) {
		return distribution.Release{}, false, fmt.Errorf("postgres: publish of %s: the database wrote %v, the check says %v", r.ID, written, err)
	}
	if err != nil {
		return distribution.Release{}, false, err
	}
	if !created {
		return old, false, nil
	}
	stored := r
	stored.Yanked = false
	stored.PublishedAt = store.UnixTime(r.PublishedAt.UnixNano())
	return stored, true, nil
}
