package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/plugkit/plugkit/registry/store"
)

// releaseColumns are the columns store.ScanRelease reads, from releases as r.
const releaseColumns = `r.id, r.plugin_id, r.version, r.description, r.digest, r.size, r.yanked, r.published_at`

// queries are the prepared statements. Those on the reader pool answer
// the handlers' reads; those on the writer pool run inside write
// transactions, through tx.Stmt, which reuses the writer connection's
// preparation.
type queries struct {
	catalogPlugins, catalogPlugin                     *sql.Stmt
	catalogReleases, catalogChannels                  *sql.Stmt
	owners                                            *sql.Stmt
	installationsAll, installationsOf                 *sql.Stmt
	ownersW                                           *sql.Stmt
	upsertPlugin, insertRelease, upsertChannel        *sql.Stmt
	setYanked, insertOwner, deleteOwner, deleteOwners *sql.Stmt
	installationPlugin, countInstallations            *sql.Stmt
	upsertInstallation                                *sql.Stmt
	// factsR and factsW read what a publish is decided on: on the
	// reader pool for CheckPublish, on the writer for Publish.
	factsR, factsW facts
}

// facts are the statements of store.PublishFacts, prepared on one pool.
type facts struct {
	release, pluginExists, isOwner              *sql.Stmt
	countReleases, channelExists, countChannels *sql.Stmt
}

// statements lists the statements of f, on the writer pool or not.
func (f *facts) statements(writer bool) []statement {
	return []statement{
		{&f.release, writer, `SELECT ` + releaseColumns + ` FROM releases r WHERE r.id = ?`},
		{&f.pluginExists, writer, `SELECT 1 FROM plugins WHERE id = ?`},
		{&f.isOwner, writer, `SELECT 1 FROM owners WHERE plugin_id = ? AND identity = ?`},
		{&f.countReleases, writer, `SELECT COUNT(*) FROM releases WHERE plugin_id = ?`},
		{&f.channelExists, writer, `SELECT 1 FROM channels WHERE plugin_id = ? AND name = ?`},
		{&f.countChannels, writer, `SELECT COUNT(*) FROM channels WHERE plugin_id = ?`},
	}
}

// statement is one prepared statement's field, pool and SQL.
type statement struct {
	stmt   **sql.Stmt
	writer bool
	text   string
}

// ownersSQL runs on both pools.
const ownersSQL = `SELECT identity FROM owners WHERE plugin_id = ? ORDER BY identity`

// statements lists every statement of q.
func (q *queries) statements() []statement {
	const r, w = false, true
	list := []statement{
		{&q.catalogPlugins, r, `SELECT id, name, description FROM plugins WHERE id > ? ORDER BY id LIMIT ?`},
		{&q.catalogPlugin, r, `SELECT id, name, description FROM plugins WHERE id = ?`},
		// Releases and channels of a page: every plugin ID from the
		// page's first to its last, so that one range scan serves it.
		{&q.catalogReleases, r, `SELECT ` + releaseColumns + ` FROM releases r
			WHERE r.plugin_id >= ? AND r.plugin_id <= ?
			ORDER BY r.plugin_id, r.published_at DESC, r.id`},
		{&q.catalogChannels, r, `SELECT c.plugin_id, c.name, c.release_id
			FROM channels c JOIN releases r ON r.id = c.release_id
			WHERE c.plugin_id >= ? AND c.plugin_id <= ? AND r.yanked = 0`},
		{&q.owners, r, ownersSQL},
		{&q.installationsAll, r, `SELECT ` + store.InstallationColumns + ` FROM installations
			WHERE (plugin_id, reporter, id) > (?, ?, ?)
			ORDER BY plugin_id, reporter, id LIMIT ?`},
		{&q.installationsOf, r, `SELECT ` + store.InstallationColumns + ` FROM installations
			WHERE plugin_id = ? AND (reporter, id) > (?, ?)
			ORDER BY plugin_id, reporter, id LIMIT ?`},

		{&q.ownersW, w, ownersSQL},
		// The plugin's name and description follow its latest release.
		{&q.upsertPlugin, w, `INSERT INTO plugins (id, name, description, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name,
				description = excluded.description, updated_at = excluded.updated_at`},
		{&q.insertRelease, w, `INSERT INTO releases
			(id, plugin_id, version, description, digest, size, yanked, published_at)
			VALUES (?, ?, ?, ?, ?, ?, 0, ?)`},
		{&q.upsertChannel, w, `INSERT INTO channels (plugin_id, name, release_id, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (plugin_id, name) DO UPDATE SET release_id = excluded.release_id,
				updated_at = excluded.updated_at`},
		{&q.setYanked, w, `UPDATE releases SET yanked = ? WHERE id = ?`},
		{&q.insertOwner, w, `INSERT INTO owners (plugin_id, identity) VALUES (?, ?) ON CONFLICT DO NOTHING`},
		{&q.deleteOwner, w, `DELETE FROM owners WHERE plugin_id = ? AND identity = ?`},
		{&q.deleteOwners, w, `DELETE FROM owners WHERE plugin_id = ?`},
		{&q.installationPlugin, w, `SELECT plugin_id FROM installations WHERE reporter = ? AND id = ?`},
		{&q.countInstallations, w, `SELECT COUNT(*) FROM installations WHERE plugin_id = ?`},
		{&q.upsertInstallation, w, `INSERT INTO installations
			(reporter, id, plugin_id, release_id, digest, status, host, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (reporter, id) DO UPDATE SET plugin_id = excluded.plugin_id,
				release_id = excluded.release_id, digest = excluded.digest, status = excluded.status,
				host = excluded.host, reported_at = excluded.reported_at`},
	}
	return append(append(list, q.factsR.statements(r)...), q.factsW.statements(w)...)
}

// prepare prepares every statement on its pool.
func (q *queries) prepare(r, w *sql.DB) error {
	for _, s := range q.statements() {
		db := r
		if s.writer {
			db = w
		}
		var err error
		if *s.stmt, err = db.Prepare(s.text); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(strings.Fields(s.text), " "), err)
		}
	}
	return nil
}

func (q *queries) close() error {
	var errs []error
	for _, s := range q.statements() {
		if *s.stmt != nil {
			errs = append(errs, (*s.stmt).Close())
		}
	}
	return errors.Join(errs...)
}

// exists runs a SELECT 1 statement.
func exists(ctx context.Context, s *sql.Stmt, args ...any) (bool, error) {
	return store.Exists(s.QueryRowContext(ctx, args...))
}

// count runs a SELECT COUNT(*) statement.
func count(ctx context.Context, s *sql.Stmt, args ...any) (int, error) {
	var n int
	err := s.QueryRowContext(ctx, args...).Scan(&n)
	return n, err
}
