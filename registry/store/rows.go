package store

import (
	"database/sql"
	"errors"
	"time"

	"github.com/plugkit/plugkit/distribution"
)

// Row is one result row of either driver the stores use: database/sql's
// rows and pgx's both scan this way.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result set of either driver. The caller closes it.
type Rows interface {
	Row
	Next() bool
	Err() error
}

// CollectRows reads every row of rows with scan, into a slice that is
// never nil.
func CollectRows[T any](rows Rows, scan func(Row) (T, error)) ([]T, error) {
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// notFound turns the drivers' empty result into ErrNotFound: pgx's
// ErrNoRows matches database/sql's.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// UnixTime is a stored time: nanoseconds since the epoch, read back in
// UTC.
func UnixTime(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// ScanRelease reads a release from a row of the columns id, plugin_id,
// version, description, digest, size, yanked, published_at, after as many
// columns as before has destinations. No row is ErrNotFound.
func ScanRelease(row Row, before ...any) (distribution.Release, error) {
	var rel distribution.Release
	var published int64
	err := row.Scan(append(before, &rel.ID, &rel.PluginID, &rel.Version, &rel.Description,
		&rel.ArtifactDigest, &rel.Size, &rel.Yanked, &published)...)
	if err != nil {
		return distribution.Release{}, notFound(err)
	}
	rel.PublishedAt = UnixTime(published)
	return rel, nil
}

// ScanToken reads a token from a row of the columns id, name, role,
// created_at, revoked_at. No row is ErrNotFound.
func ScanToken(row Row) (Token, error) {
	var t Token
	var created int64
	var revoked sql.NullInt64
	if err := row.Scan(&t.ID, &t.Name, &t.Role, &created, &revoked); err != nil {
		return Token{}, notFound(err)
	}
	t.CreatedAt = UnixTime(created)
	if revoked.Valid {
		r := UnixTime(revoked.Int64)
		t.RevokedAt = &r
	}
	return t, nil
}

// InstallationColumns are the columns ScanInstallation reads.
const InstallationColumns = `reporter, id, plugin_id, release_id, digest, status, host, reported_at`

// ScanInstallation reads an installation report from a row of
// InstallationColumns.
func ScanInstallation(row Row) (distribution.Installation, error) {
	var in distribution.Installation
	var reported int64
	if err := row.Scan(&in.Reporter, &in.ID, &in.PluginID, &in.ReleaseID, &in.ArtifactDigest,
		&in.Status, &in.Host, &reported); err != nil {
		return distribution.Installation{}, err
	}
	in.ReportedAt = UnixTime(reported)
	return in, nil
}

// CheckQuota fails with a *QuotaError when count finds max or more rows;
// max <= 0 means no quota, and count is not called.
func CheckQuota(quota string, max int, count func() (int, error)) error {
	if max <= 0 {
		return nil
	}
	n, err := count()
	if err != nil {
		return err
	}
	if n >= max {
		return &QuotaError{Quota: quota, Max: max}
	}
	return nil
}

// ScanString reads a row of one text column.
func ScanString(row Row) (s string, err error) { return s, row.Scan(&s) }

// Exists reads a row of SELECT 1: whether there was one.
func Exists(row Row) (bool, error) {
	var one int
	err := notFound(row.Scan(&one))
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
