// Package store is the registry's metadata storage: plugins, their owners,
// their immutable releases, channels and installation reports.
//
// Store is the one interface the HTTP handlers use, so that another database
// (PostgreSQL for a scaled-out registry) can follow without touching them.
// The embedded implementation is in store/sqlite; store/storetest is the
// conformance suite every implementation runs. Artifact bytes are not here:
// they live in a blobs.Store, keyed by digest.
//
// Authorization that must be atomic with a write lives here too: the first
// publish of a plugin claims it for the publishing identity, in the same
// transaction that creates it, so two publishers racing for a new name
// cannot both win. Per-plugin quotas are checked in the same transaction as
// the insert they bound, for the same reason.
package store

import (
	"context"
	"errors"
	"fmt"

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
	// ErrNotOwner: the actor is neither an owner of the plugin nor an
	// admin. A plugin without owners is admin-only.
	ErrNotOwner = errors.New("not an owner of the plugin")
	// ErrQuota is matched by every *QuotaError.
	ErrQuota = errors.New("quota exceeded")
)

// QuotaError reports a per-plugin quota that a write would exceed.
type QuotaError struct {
	// Quota names what is counted: "releases", "channels" or
	// "installations".
	Quota string
	// Max is the configured bound.
	Max int
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("a plugin may have at most %d %s", e.Max, e.Quota)
}

// Is makes errors.Is(err, ErrQuota) true.
func (e *QuotaError) Is(target error) bool { return target == ErrQuota }

// Actor is who makes a write: the identity of the request's token and
// whether that token is an admin token.
type Actor struct {
	// Identity is the token's identity (see docs/protocol.md). The first
	// publish of a plugin makes it the plugin's owner.
	Identity string
	// Admin may write to any plugin, owned or not.
	Admin bool
}

// NewRelease is what Publish records. Release.ID must be
// distribution.ReleaseID of its plugin, version and digest.
type NewRelease struct {
	Release distribution.Release
	// Name is the plugin's manifest name.
	Name string
	// Channel is the channel to point at the release.
	Channel string
	// By publishes: an owner, an admin, or anyone for a new plugin.
	By Actor
	// MaxReleases and MaxChannels bound the plugin's releases and
	// channels after this publish; zero means no bound.
	MaxReleases, MaxChannels int
}

// ChannelChange points a plugin's channel at one of its releases.
type ChannelChange struct {
	By        Actor
	PluginID  string
	Channel   string
	ReleaseID string
	// MaxChannels bounds the plugin's channels; zero means no bound.
	MaxChannels int
}

// OwnerOp is what ChangeOwners does with an identity.
type OwnerOp string

// The owner operations.
const (
	// Grant adds the identity to the plugin's owners.
	Grant OwnerOp = "grant"
	// Revoke removes it; removing the last owner leaves the plugin
	// admin-only.
	Revoke OwnerOp = "revoke"
	// Transfer makes it the only owner.
	Transfer OwnerOp = "transfer"
)

// CatalogQuery selects catalog entries: the one plugin PluginID when it is
// set, otherwise up to Limit plugins whose IDs sort after After.
type CatalogQuery struct {
	PluginID string
	After    string
	Limit    int
}

// InstallationKey identifies an installation report and orders the
// listing: by plugin, then reporter, then the client's ID.
type InstallationKey struct {
	PluginID, Reporter, ID string
}

// InstallationQuery selects installation reports: of PluginID when it is
// set, up to Limit of them, those after the key After when it is set.
type InstallationQuery struct {
	PluginID string
	After    *InstallationKey
	Limit    int
}

// Store holds the registry's metadata. Implementations are safe for
// concurrent use, and each method is atomic: a crash leaves either all of
// its writes or none.
type Store interface {
	// Publish records a release and points its channel at it, in one
	// transaction. A new plugin is created with r.By's identity as its
	// owner; an existing one needs an owner or an admin (ErrNotOwner). If
	// the release ID exists with the same digest nothing is created
	// (created is false) and the channel is still pointed at it; with
	// another digest the error is ErrConflict; if it exists and is yanked,
	// ErrYanked. A new release or channel beyond the quotas is a
	// *QuotaError. The returned release is the stored one.
	Publish(ctx context.Context, r NewRelease) (rel distribution.Release, created bool, err error)
	// CheckPublish returns the error Publish would return for r now, and
	// writes nothing: a look before the work a publish does ahead of its
	// commit (writing the artifact's blob), so that a refused publish can
	// be refused before that work shows. It is not a reservation: Publish
	// decides again, atomically, and a write in between may change its
	// answer.
	CheckPublish(ctx context.Context, r NewRelease) error

	// Catalog lists plugins sorted by ID with their channels (leaving out
	// those whose release is yanked) and releases (newest first). A
	// PluginID query for an unknown plugin is an empty list.
	Catalog(ctx context.Context, q CatalogQuery) ([]distribution.CatalogPlugin, error)
	// Release returns a release by ID, yanked or not.
	Release(ctx context.Context, id string) (distribution.Release, error)
	// Channel returns the release a plugin's channel points at; a yanked
	// release there is ErrNotFound, as if the channel were empty.
	Channel(ctx context.Context, pluginID, channel string) (distribution.Release, error)
	// HasArtifact reports whether a release references digest, so that
	// only published artifacts are served.
	HasArtifact(ctx context.Context, digest string) (bool, error)

	// SetChannel points a plugin's channel at one of its releases, which
	// must not be yanked. It needs an owner or an admin.
	SetChannel(ctx context.Context, c ChannelChange) (distribution.Release, error)
	// SetYanked marks a release yanked or not. It needs an owner of the
	// release's plugin or an admin.
	SetYanked(ctx context.Context, by Actor, releaseID string, yanked bool) (distribution.Release, error)

	// Owners returns a plugin's owner identities, sorted; ErrNotFound for
	// an unknown plugin.
	Owners(ctx context.Context, pluginID string) ([]string, error)
	// ChangeOwners applies op with identity to an existing plugin and
	// returns its owners afterwards. Callers authorize it (admins only).
	ChangeOwners(ctx context.Context, pluginID string, op OwnerOp, identity string) ([]string, error)

	// PutInstallation records a report, replacing the one with the same
	// reporter and ID. Its plugin must exist (ErrNotFound); a new report
	// beyond maxPerPlugin reports of its plugin is a *QuotaError (zero
	// means no bound). The caller sets Reporter and ReportedAt.
	PutInstallation(ctx context.Context, in distribution.Installation, maxPerPlugin int) error
	// Installations lists reports in InstallationKey order.
	Installations(ctx context.Context, q InstallationQuery) ([]distribution.Installation, error)

	// Close releases the store's resources.
	Close() error
}
