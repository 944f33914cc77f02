package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// Release implements store.Store. Like Channel and HasArtifact, it is a
// lookup by key that finishes in microseconds, so it is not interrupted
// when ctx is cancelled.
func (db *DB) Release(ctx context.Context, id string) (distribution.Release, error) {
	return db.p.lookupRelease(pointRelease, id)
}

// Channel implements store.Store.
func (db *DB) Channel(ctx context.Context, pluginID, channel string) (distribution.Release, error) {
	return db.p.lookupRelease(pointChannel, pluginID, channel)
}

// HasArtifact implements store.Store.
func (db *DB) HasArtifact(ctx context.Context, digest string) (bool, error) {
	return db.p.exists(pointHasArtifact, digest)
}

// factsTx reads what a publish is decided on (store.PublishFacts) in one
// transaction, with the statements of its pool.
type factsTx struct {
	ctx context.Context
	tx  *sql.Tx
	f   *facts
}

func (t factsTx) stmt(s *sql.Stmt) *sql.Stmt { return t.tx.StmtContext(t.ctx, s) }

// writeTx is a write transaction with the writer's statements bound to it.
type writeTx struct {
	factsTx
	q *queries
}

// writeTx serves the write logic the stores share.
var (
	_ store.ReleaseTx      = writeTx{}
	_ store.InstallationTx = writeTx{}
	_ store.OwnerTx        = writeTx{}
	_ store.PublishFacts   = writeTx{}
)

// write runs f in a write transaction.
func (db *DB) write(ctx context.Context, f func(writeTx) error) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return f(writeTx{factsTx{ctx, tx, &db.q.factsW}, &db.q}) })
}

// Release implements store.PublishFacts and store.ReleaseTx.
func (t factsTx) Release(id string) (distribution.Release, error) {
	return store.ScanRelease(t.stmt(t.f.release).QueryRowContext(t.ctx, id))
}

// PluginExists implements store.InstallationTx and store.OwnerTx.
func (t factsTx) PluginExists(id string) (bool, error) {
	return exists(t.ctx, t.stmt(t.f.pluginExists), id)
}

// Authorize implements store.PublishFacts and store.ReleaseTx.
func (t factsTx) Authorize(by store.Actor, pluginID string) (bool, error) {
	found, err := t.PluginExists(pluginID)
	if err != nil || !found || by.Admin {
		return found, err
	}
	owner, err := exists(t.ctx, t.stmt(t.f.isOwner), pluginID, by.Identity)
	if err != nil {
		return true, err
	}
	if !owner {
		return true, store.ErrNotOwner
	}
	return true, nil
}

// CountReleases implements store.PublishFacts.
func (t factsTx) CountReleases(pluginID string) (int, error) {
	return count(t.ctx, t.stmt(t.f.countReleases), pluginID)
}

// ChannelExists implements store.ChannelFacts.
func (t factsTx) ChannelExists(pluginID, channel string) (bool, error) {
	return exists(t.ctx, t.stmt(t.f.channelExists), pluginID, channel)
}

// CountChannels implements store.ChannelFacts.
func (t factsTx) CountChannels(pluginID string) (int, error) {
	return count(t.ctx, t.stmt(t.f.countChannels), pluginID)
}

// SetChannel implements store.ReleaseTx.
func (t writeTx) SetChannel(pluginID, channel, releaseID string, max int) error {
	if err := store.CheckChannelQuota(t, pluginID, channel, max); err != nil {
		return err
	}
	return t.pointChannel(pluginID, channel, releaseID)
}

// pointChannel points a channel at a release, creating the channel if
// need be; the quota is the caller's.
func (t writeTx) pointChannel(pluginID, channel, releaseID string) error {
	_, err := t.stmt(t.q.upsertChannel).ExecContext(t.ctx, pluginID, channel, releaseID, time.Now().UnixNano())
	return err
}

// Publish implements store.Store.
func (db *DB) Publish(ctx context.Context, nr store.NewRelease) (distribution.Release, bool, error) {
	r := nr.Release
	created := false
	var stored distribution.Release
	err := db.write(ctx, func(t writeTx) error {
		found, c, err := store.DecidePublish(t, nr)
		if err != nil {
			return err
		}
		if created = c; created {
			if _, err := t.stmt(t.q.upsertPlugin).ExecContext(ctx, r.PluginID, nr.Name, r.Description, time.Now().UnixNano()); err != nil {
				return err
			}
			if !found && nr.By.Identity != "" {
				if _, err := t.stmt(t.q.insertOwner).ExecContext(ctx, r.PluginID, nr.By.Identity); err != nil {
					return err
				}
			}
			if _, err := t.stmt(t.q.insertRelease).ExecContext(ctx, r.ID, r.PluginID, r.Version, r.Description,
				r.ArtifactDigest, r.Size, r.PublishedAt.UnixNano()); err != nil {
				return err
			}
		}
		if err := t.pointChannel(r.PluginID, nr.Channel, r.ID); err != nil {
			return err
		}
		stored, err = t.Release(r.ID)
		return err
	})
	if err != nil {
		return distribution.Release{}, false, err
	}
	return stored, created, nil
}

// CheckPublish implements store.Store: the decision of Publish, made in
// a read transaction.
func (db *DB) CheckPublish(ctx context.Context, nr store.NewRelease) error {
	return db.read(ctx, func(tx *sql.Tx) error {
		_, _, err := store.DecidePublish(factsTx{ctx, tx, &db.q.factsR}, nr)
		return err
	})
}

// SetYanked implements store.ReleaseTx.
func (t writeTx) SetYanked(releaseID string, yanked bool) error {
	_, err := t.stmt(t.q.setYanked).ExecContext(t.ctx, yanked, releaseID)
	return err
}

// SetChannel implements store.Store.
func (db *DB) SetChannel(ctx context.Context, c store.ChannelChange) (distribution.Release, error) {
	var rel distribution.Release
	err := db.write(ctx, func(t writeTx) (err error) {
		rel, err = store.ChangeChannel(t, c)
		return err
	})
	return rel, err
}

// SetYanked implements store.Store.
func (db *DB) SetYanked(ctx context.Context, by store.Actor, releaseID string, yanked bool) (distribution.Release, error) {
	var rel distribution.Release
	err := db.write(ctx, func(t writeTx) (err error) {
		rel, err = store.ChangeYanked(t, by, releaseID, yanked)
		return err
	})
	return rel, err
}
