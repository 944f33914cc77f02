// Package store is the registry's metadata storage: plugins, their
// immutable releases, channels and installation reports.
//
// Store is the one interface the HTTP handlers use, so that another database
// (PostgreSQL for a scaled-out registry) can follow without touching them.
// The embedded implementation is in store/sqlite. Artifact bytes are not
// here: they live in a blobs.Store, keyed by digest.
package store

import (
	"context"
	"errors"

	"github.com/plugkit/plugkit/distribution"
)

// Errors of every Store implementation, matched with errors.Is.
var (
	// ErrNotFound: no such plugin, release or channel.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the release ID exists with another artifact digest.
	// Releases are immutable.
	ErrConflict = errors.New("release exists with another digest")
	// ErrYanked: the operation needs a release that is not yanked.
	ErrYanked = errors.New("release is yanked")
)

// NewRelease is what Publish records. Release.ID must be
// distribution.ReleaseID of its plugin, version and digest.
type NewRelease struct {
	Release distribution.Release
	// Name is the plugin's manifest name.
	Name string
	// Channel is the channel to point at the release.
	Channel string
}

// Store holds the registry's metadata. Implementations are safe for
// concurrent use, and each method is atomic: a crash leaves either all of
// its writes or none.
type Store interface {
	// Publish records a release and points its channel at it, in one
	// transaction. If the release ID exists with the same digest nothing
	// is created (created is false) and the channel is still pointed at
	// it; with another digest the error is ErrConflict; if it exists and
	// is yanked, ErrYanked. The returned release is the stored one.
	Publish(ctx context.Context, r NewRelease) (rel distribution.Release, created bool, err error)

	// Catalog lists every plugin with its channels and releases.
	Catalog(ctx context.Context) ([]distribution.CatalogPlugin, error)
	// Release returns a release by ID, yanked or not.
	Release(ctx context.Context, id string) (distribution.Release, error)
	// Channel returns the release a plugin's channel points at; a yanked
	// release there is ErrNotFound, as if the channel were empty.
	Channel(ctx context.Context, pluginID, channel string) (distribution.Release, error)
	// HasArtifact reports whether a release references digest, so that
	// only published artifacts are served.
	HasArtifact(ctx context.Context, digest string) (bool, error)

	// SetChannel points a plugin's channel at one of its releases, which
	// must not be yanked.
	SetChannel(ctx context.Context, pluginID, channel, releaseID string) (distribution.Release, error)
	// SetYanked marks a release yanked or not.
	SetYanked(ctx context.Context, releaseID string, yanked bool) (distribution.Release, error)

	// PutInstallation records a report, replacing an earlier one with the
	// same ID. The caller sets ReportedAt.
	PutInstallation(ctx context.Context, in distribution.Installation) error
	// Installations lists reports, of one plugin when pluginID is not "".
	Installations(ctx context.Context, pluginID string) ([]distribution.Installation, error)

	// Close releases the store's resources.
	Close() error
}
