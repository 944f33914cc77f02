package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// releaseColumns are the columns store.ScanRelease reads, from releases as r.
const releaseColumns = `r.id, r.plugin_id, r.version, r.description, r.digest, r.size, r.yanked, r.published_at`

const releaseByID = `SELECT ` + releaseColumns + ` FROM releases r WHERE r.id = $1`

// Release implements store.Store.
func (db *DB) Release(ctx context.Context, id string) (distribution.Release, error) {
	return store.ScanRelease(db.pool.QueryRow(ctx, releaseByID, id))
}

// Channel implements store.Store.
func (db *DB) Channel(ctx context.Context, pluginID, channel string) (distribution.Release, error) {
	return store.ScanRelease(db.pool.QueryRow(ctx, `SELECT `+releaseColumns+`
		FROM channels c JOIN releases r ON r.id = c.release_id
		WHERE c.plugin_id = $1 AND c.name = $2 AND NOT r.yanked`, pluginID, channel))
}

// HasArtifact implements store.Store.
func (db *DB) HasArtifact(ctx context.Context, digest string) (bool, error) {
	return exists(ctx, db.pool, `SELECT 1 FROM releases WHERE digest = $1 LIMIT 1`, digest)
}

// Release implements store.ReleaseTx.
func (t writeTx) Release(id string) (distribution.Release, error) {
	return store.ScanRelease(t.tx.QueryRow(t.ctx, releaseByID, id))
}

// Authorize implements store.ReleaseTx in one query.
func (t writeTx) Authorize(by store.Actor, pluginID string) (bool, error) {
	var found, owner bool
	err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM plugins WHERE id = $1),
		EXISTS (SELECT 1 FROM owners WHERE plugin_id = $1 AND identity = $2)`, pluginID, by.Identity).Scan(&found, &owner)
	switch {
	case err != nil:
		return false, err
	case found && !owner && !by.Admin:
		return true, store.ErrNotOwner
	}
	return found, nil
}

// checkChannel fails with a *QuotaError when the channel is new and the
// plugin has its quota of channels already; it reads both facts in one
// query.
func (t writeTx) checkChannel(pluginID, channel string, max int) error {
	if max <= 0 {
		return nil
	}
	var f publishFacts
	if err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM channels WHERE plugin_id = $1 AND name = $2),
		(SELECT COUNT(*) FROM channels WHERE plugin_id = $1)`, pluginID, channel).Scan(&f.channelKnown, &f.channels); err != nil {
		return err
	}
	return store.CheckChannelQuota(f, pluginID, channel, max)
}

// SetChannel implements store.ReleaseTx.
func (t writeTx) SetChannel(pluginID, channel, releaseID string, max int) error {
	if err := t.checkChannel(pluginID, channel, max); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx, upsertChannel, pluginID, channel, releaseID, time.Now().UnixNano())
	return err
}

const upsertChannel = `INSERT INTO channels (plugin_id, name, release_id, updated_at) VALUES ($1, $2, $3, $4)
	` + onChannelConflict

// onChannelConflict makes an insert into channels repoint an existing
// channel.
const onChannelConflict = `ON CONFLICT (plugin_id, name) DO UPDATE SET release_id = excluded.release_id, updated_at = excluded.updated_at`

// SetYanked implements store.ReleaseTx.
func (t writeTx) SetYanked(releaseID string, yanked bool) error {
	_, err := t.tx.Exec(t.ctx, `UPDATE releases SET yanked = $1 WHERE id = $2`, yanked, releaseID)
	return err
}

// SetChannel implements store.Store.
func (db *DB) SetChannel(ctx context.Context, c store.ChannelChange) (distribution.Release, error) {
	var rel distribution.Release
	err := db.write(ctx, c.PluginID, store.ChangeCatalog, func(t writeTx) (err error) {
		rel, err = store.ChangeChannel(t, c)
		return err
	})
	return rel, err
}

// SetYanked implements store.Store. The release's plugin is known only
// after reading it, so the lock is taken on the plugin named by the
// release ID and the release is read under it.
func (db *DB) SetYanked(ctx context.Context, by store.Actor, releaseID string, yanked bool) (distribution.Release, error) {
	var rel distribution.Release
	err := db.write(ctx, pluginOfRelease(releaseID), store.ChangeCatalog, func(t writeTx) (err error) {
		rel, err = store.ChangeYanked(t, by, releaseID, yanked)
		return err
	})
	return rel, err
}

// pluginOfRelease is the plugin ID part of a release ID, "PLUGIN@…": plugin
// IDs hold no '@'.
func pluginOfRelease(releaseID string) string {
	plugin, _, _ := strings.Cut(releaseID, "@")
	return plugin
}
