package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
// The decision is store.DecidePublish's; Publish decides again in Go
// from the facts this returns and refuses to report an outcome the SQL
// did not reach, so the two cannot drift apart unnoticed (the conformance
// suite covers every outcome).
//
// Parameters: $1 plugin ID, $2 identity, $3 channel, $4 release ID, $5 the
// actor is an admin, $6 max releases, $7 max channels (<= 0: none), $8
// plugin name, $9 description, $10 now, $11 version, $12 digest, $13 size,
// $14 published at, $15 and $16 the notification's channel and payload:
// only a write notifies, delivered at commit. The foreign keys of the new rows on the plugin and the
// release are checked at the end of the statement, when both exist.
const publishSQL = `WITH ` + factsCTE + `,
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
	SELECT (SELECT COUNT(*) FROM notified) = 1, ` + factsSelect

// factsCTE is the query "facts" of the facts a publish is decided on
// (store.PublishFacts) but the stored release, in one row. Parameters: $1
// plugin ID, $2 identity, $3 channel.
const factsCTE = `facts AS (
		SELECT EXISTS (SELECT 1 FROM plugins WHERE id = $1) AS found,
			EXISTS (SELECT 1 FROM owners WHERE plugin_id = $1 AND identity = $2) AS owner,
			(SELECT COUNT(*) FROM releases WHERE plugin_id = $1) AS releases,
			EXISTS (SELECT 1 FROM channels WHERE plugin_id = $1 AND name = $3) AS channel_known,
			(SELECT COUNT(*) FROM channels WHERE plugin_id = $1) AS channels)`

// factsSelect returns the row of publishFacts.scan: the facts, and the
// release $4 if there is one, in store.ScanRelease's columns.
const factsSelect = `f.found, f.owner, f.releases, f.channel_known, f.channels,
		COALESCE(r.id, ''), COALESCE(r.plugin_id, ''), COALESCE(r.version, ''), COALESCE(r.description, ''),
		COALESCE(r.digest, ''), COALESCE(r.size, 0), COALESCE(r.yanked, false), COALESCE(r.published_at, 0)
	FROM facts f LEFT JOIN releases r ON r.id = $4`

// checkPublishSQL reads the facts of a publish, in one statement and so
// one snapshot, for CheckPublish: $1 to $4 as for publishSQL.
const checkPublishSQL = `WITH ` + factsCTE + ` SELECT ` + factsSelect

// publishFacts are the facts publishSQL and checkPublishSQL read, for
// store.DecidePublish.
type publishFacts struct {
	found, owner, channelKnown bool
	releases, channels         int
	old                        distribution.Release // ID "" when there is none
}

var _ store.PublishFacts = publishFacts{}

// scan reads f from a row of factsSelect's columns, after as many
// columns as before has destinations.
func (f *publishFacts) scan(row pgx.Row, before ...any) error {
	var err error
	f.old, err = store.ScanRelease(row, append(before, &f.found, &f.owner, &f.releases, &f.channelKnown, &f.channels)...)
	return err
}

// Authorize implements store.PublishFacts.
func (f publishFacts) Authorize(by store.Actor, _ string) (bool, error) {
	if f.found && !f.owner && !by.Admin {
		return true, store.ErrNotOwner
	}
	return f.found, nil
}

// Release implements store.PublishFacts: the release read is the only
// one there is.
func (f publishFacts) Release(string) (distribution.Release, error) {
	if f.old.ID == "" { // release IDs are never empty
		return f.old, store.ErrNotFound
	}
	return f.old, nil
}

// CountReleases implements store.PublishFacts.
func (f publishFacts) CountReleases(string) (int, error) { return f.releases, nil }

// ChannelExists implements store.ChannelFacts.
func (f publishFacts) ChannelExists(string, string) (bool, error) { return f.channelKnown, nil }

// CountChannels implements store.ChannelFacts.
func (f publishFacts) CountChannels(string) (int, error) { return f.channels, nil }

// CheckPublish implements store.Store in one round trip: it replaces the
// two lookups (owners, then the release) that the server made before
// each publish.
func (db *DB) CheckPublish(ctx context.Context, nr store.NewRelease) error {
	r := nr.Release
	var f publishFacts
	if err := f.scan(db.pool.QueryRow(ctx, checkPublishSQL, r.PluginID, nr.By.Identity, nr.Channel, r.ID)); err != nil {
		return err
	}
	_, _, err := store.DecidePublish(f, nr)
	return err
}

// Publish implements store.Store. Publishes that arrive while others are
// being written are written together, as one group (see publishQueue):
// one round trip, one commit and one notification for the group.
func (db *DB) Publish(ctx context.Context, nr store.NewRelease) (distribution.Release, bool, error) {
	if err := ctx.Err(); err != nil {
		return distribution.Release{}, false, err
	}
	p := &pendingPublish{ctx: ctx, nr: nr, now: time.Now().UnixNano(), signal: make(chan struct{})}
	db.publishes.run(db, p)
	if p.err != nil {
		return distribution.Release{}, false, p.err
	}
	return p.judge()
}

// maxPublishGroup bounds the publishes written in one transaction.
const maxPublishGroup = 32

// publishQueue groups concurrent publishes. A publish's share of the
// database work is mostly per transaction, not per row: the round trip
// that wakes both processes, the commit's WAL flush, and the notification,
// which wakes every replica and its PostgreSQL backend. The flush is not
// shared between publishes otherwise, since notifying commits are
// serialised by PostgreSQL through their flush. So the publishes that
// arrive while a group is being written wait for it and then go together,
// as one transaction of their statements: PostgreSQL delivers a
// transaction's identical notifications once, at its commit. A publish
// that finds no group running goes alone at once, so grouping adds no
// wait of its own.
//
// One group is written at a time; its leader is one of the waiting
// publishes, which hands the lead to the oldest waiting one when its group
// is done, so that no caller writes the groups of others for long.
type publishQueue struct {
	mu      sync.Mutex
	waiting []*pendingPublish
	leading bool // a group is being written, or its leader is being woken
}

// pendingPublish is one publish in publishQueue.
type pendingPublish struct {
	ctx context.Context
	nr  store.NewRelease
	now int64
	// signal is closed when the publish is written (its results are set)
	// or, with lead set, when it is to write the next group.
	signal chan struct{}
	lead   bool

	// The results: err, or whether publishSQL wrote and the facts it
	// returned.
	err     error
	written bool
	facts   publishFacts
}

// run writes p, in a group, and returns when its results are set.
func (q *publishQueue) run(db *DB, p *pendingPublish) {
	q.mu.Lock()
	q.waiting = append(q.waiting, p)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead {
		select {
		case <-p.signal:
		case <-p.ctx.Done():
			if q.leave(p) {
				p.err = p.ctx.Err()
				return
			}
			<-p.signal // it is being written, or is to lead
		}
		if !p.lead {
			return
		}
	}
	// Lead: p is the oldest waiting, so its group holds it.
	q.mu.Lock()
	n := min(len(q.waiting), maxPublishGroup)
	group := q.waiting[:n:n]
	q.waiting = q.waiting[n:]
	q.mu.Unlock()

	db.publishGroup(group)

	q.mu.Lock()
	if len(q.waiting) > 0 {
		next := q.waiting[0]
		next.lead = true
		close(next.signal)
	} else {
		q.leading = false
		q.waiting = nil // let the old backing array go
	}
	q.mu.Unlock()
	for _, m := range group {
		if m != p {
			close(m.signal)
		}
	}
}

// leave takes p out of the queue, unless it is being written or is to
// lead the next group, and reports whether it did.
func (q *publishQueue) leave(p *pendingPublish) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.waiting, p)
	if i < 0 || p.lead {
		return false
	}
	q.waiting = slices.Delete(q.waiting, i, i+1)
	return true
}

// publishGroup writes group and sets each member's results. A publish
// whose context has ended before it is sent is left out with its error.
// The group is written with a context that ends when every member's has:
// a member whose client has gone may then still be written, as one whose
// commit was under way.
func (db *DB) publishGroup(group []*pendingPublish) {
	live := group[:0:0]
	for _, p := range group {
		if p.err = p.ctx.Err(); p.err == nil {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(live[0].ctx))
	defer cancel()
	var waiting atomic.Int32
	waiting.Store(int32(len(live)))
	for _, p := range live {
		stop := context.AfterFunc(p.ctx, func() {
			if waiting.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}

	err := db.publishBatch(ctx, live)
	var pgErr *pgconn.PgError
	if len(live) > 1 && errors.As(err, &pgErr) {
		// The server refused a statement and rolled the group back:
		// nothing of it is written. Alone, each publish gets its own
		// outcome, and only the faulty one its error.
		for _, p := range live {
			p.err = db.publishBatch(ctx, []*pendingPublish{p})
		}
		return
	}
	for _, p := range live {
		p.err = err
	}
}

// publishBatch writes publishes in one implicit transaction (one batch,
// committed at its end, rolled back whole on any error): the locks of
// their plugins in ascending order of key, so that two groups cannot
// deadlock, then publishSQL for each in order. Each statement sees the
// writes of those before it, so the group has the outcomes of the same
// publishes made one after the other.
func (db *DB) publishBatch(ctx context.Context, ps []*pendingPublish) error {
	keys := make([]int64, len(ps))
	for i, p := range ps {
		keys[i] = lockKey("plugin", p.nr.Release.PluginID)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var b pgx.Batch
	for _, k := range keys {
		b.Queue(`SELECT pg_advisory_xact_lock($1)`, k)
	}
	for _, p := range ps {
		nr, r := p.nr, p.nr.Release
		b.Queue(publishSQL, r.PluginID, nr.By.Identity, nr.Channel, r.ID, nr.By.Admin, nr.MaxReleases, nr.MaxChannels,
			nr.Name, r.Description, p.now, r.Version, r.ArtifactDigest, r.Size, r.PublishedAt.UnixNano(),
			changesChannel, string(store.ChangeCatalog))
	}
	br := db.pool.SendBatch(ctx, &b)
	defer br.Close()
	for range keys {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	for _, p := range ps {
		if err := p.facts.scan(br.QueryRow(), &p.written); err != nil {
			return err
		}
	}
	return br.Close()
}

// judge decides a written publish again, in Go, from the facts publishSQL
// returned, and reports its outcome.
func (p *pendingPublish) judge() (distribution.Release, bool, error) {
	r := p.nr.Release
	_, created, err := store.DecidePublish(p.facts, p.nr)
	if p.written != (err == nil) {
		return distribution.Release{}, false, fmt.Errorf("postgres: publish of %s: the database wrote %v, the check says %v", r.ID, p.written, err)
	}
	if err != nil {
		return distribution.Release{}, false, err
	}
	if !created {
		return p.facts.old, false, nil
	}
	stored := r
	stored.Yanked = false
	stored.PublishedAt = store.UnixTime(r.PublishedAt.UnixNano())
	return stored, true, nil
}
