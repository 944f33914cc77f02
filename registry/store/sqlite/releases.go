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

// writeTx is a write transaction with the writer's statements bound to it.
type writeTx struct {
	ctx context.Context
	tx  *sql.Tx
	q   *queries
}

func (t writeTx) stmt(s *sql.Stmt) *sql.Stmt { return t.tx.StmtContext(t.ctx, s) }

// writeTx serves the write logic the stores share.
var (
	_ store.ReleaseTx      = writeTx{}
	_ store.InstallationTx = writeTx{}
	_ store.OwnerTx        = writeTx{}
)

// write runs f in a write transaction.
func (db *DB) write(ctx context.Context, f func(writeTx) error) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return f(writeTx{ctx, tx, &db.q}) })
}

// Release implements store.ReleaseTx.
func (t writeTx) Release(id string) (distribution.Release, error) {
	return store.ScanRelease(t.stmt(t.q.releaseW).QueryRowContext(t.ctx, id))
}

// Authorize implements store.ReleaseTx.
func (t writeTx) Authorize(by store.Actor, pluginID string) (bool, error) {
	found, err := exists(t.ctx, t.stmt(t.q.pluginExists), pluginID)
	if err != nil || !found || by.Admin {
		return found, err
	}
	owner, err := exists(t.ctx, t.stmt(t.q.isOwner), pluginID, by.Identity)
	if err != nil {
		return true, err
	}
	if !owner {
		return true, store.ErrNotOwner
	}
	return true, nil
}

// checkQuota fails with a *QuotaError when counting with s finds max or
// more rows; max <= 0 means no quota.
func (t writeTx) checkQuota(s *sql.Stmt, quota string, max int, args ...any) error {
	return store.CheckQuota(quota, max, func() (int, error) { return count(t.ctx, t.stmt(s), args...) })
}

// SetChannel implements store.ReleaseTx: the quota counts only when the
// channel is new.
func (t writeTx) SetChannel(pluginID, channel, releaseID string, max int) error {
	known, err := exists(t.ctx, t.stmt(t.q.channelExists), pluginID, channel)
	if err != nil {
		return err
	}
	if !known {
		if err := t.checkQuota(t.q.countChannels, "channels", max, pluginID); err != nil {
			return err
		}
	}
	_, err = t.stmt(t.q.upsertChannel).ExecContext(t.ctx, pluginID, channel, releaseID, time.Now().UnixNano())
	return err
}

// Publish implements store.Store.
func (db *DB) Publish(ctx context.Context, nr store.NewRelease) (distribution.Release, bool, error) {
	r := nr.Release
	created := false
	var stored distribution.Release
	err := db.write(ctx, func(t writeTx) error {
		found, err := t.Authorize(nr.By, r.PluginID)
		if err != nil {
			return err
		}
		old, err := t.Release(r.ID)
		if created, err = store.JudgePublish(old, err, r.ArtifactDigest); err != nil {
			return err
		}
		if created {
			if err := t.checkQuota(t.q.countReleases, "releases", nr.MaxReleases, r.PluginID); err != nil {
				return err
			}
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
		if err := t.SetChannel(r.PluginID, nr.Channel, r.ID, nr.MaxChannels); err != nil {
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
