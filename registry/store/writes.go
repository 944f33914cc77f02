package store

import (
	"fmt"

	"github.com/plugkit/plugkit/distribution"
)

// The write logic that both stores share, inside a backend's write
// transaction: each backend implements the small transaction interfaces
// below with its own SQL, and the decisions are made here once.

// ReleaseTx is the part of a write transaction that changes releases and
// channels.
type ReleaseTx interface {
	// Authorize checks that by may write to an existing plugin (an
	// admin, or one of its owners; ErrNotOwner otherwise) and reports
	// whether the plugin exists: writing to one that does not is for the
	// caller to judge.
	Authorize(by Actor, pluginID string) (found bool, err error)
	// Release reads a release; ErrNotFound when there is none.
	Release(id string) (distribution.Release, error)
	// SetChannel points a channel at a release, within the quota max.
	SetChannel(pluginID, channel, releaseID string, max int) error
	// SetYanked sets the yanked flag of an existing release.
	SetYanked(releaseID string, yanked bool) error
}

// ChannelFacts reads what a channel's quota is decided on.
type ChannelFacts interface {
	// ChannelExists reports whether the plugin has the channel.
	ChannelExists(pluginID, channel string) (bool, error)
	// CountChannels counts the plugin's channels.
	CountChannels(pluginID string) (int, error)
}

// CheckChannelQuota fails with a *QuotaError when the channel is new to
// the plugin and the plugin has max channels or more; max <= 0 means no
// quota, and nothing is read.
func CheckChannelQuota(f ChannelFacts, pluginID, channel string, max int) error {
	if max <= 0 {
		return nil
	}
	known, err := f.ChannelExists(pluginID, channel)
	if err != nil || known {
		return err
	}
	return CheckQuota("channels", max, func() (int, error) { return f.CountChannels(pluginID) })
}

// PublishFacts reads what a publish is decided on. Read from one snapshot
// (a read transaction, one statement, or the publish's own write
// transaction), they make a decision that held at that snapshot.
type PublishFacts interface {
	ChannelFacts
	// Authorize is ReleaseTx.Authorize.
	Authorize(by Actor, pluginID string) (found bool, err error)
	// Release reads a release; ErrNotFound when there is none.
	Release(id string) (distribution.Release, error)
	// CountReleases counts the plugin's releases.
	CountReleases(pluginID string) (int, error)
}

// DecidePublish decides the publish of nr from f, for Store.Publish and
// Store.CheckPublish alike, so that the look before a publish refuses
// exactly what the publish would: ErrNotOwner first, then JudgePublish's
// verdict, then the quota of releases for a new release and that of
// channels for a new channel. found reports whether the plugin exists
// (a new one is claimed by its first publisher), created whether the
// release is new.
func DecidePublish(f PublishFacts, nr NewRelease) (found, created bool, err error) {
	r := nr.Release
	if found, err = f.Authorize(nr.By, r.PluginID); err != nil {
		return found, false, err
	}
	old, err := f.Release(r.ID)
	if created, err = JudgePublish(old, err, r.ArtifactDigest); err != nil {
		return found, false, err
	}
	if !found {
		// A plugin that does not exist has no releases and no channels
		// (their rows reference it), and a quota is at least one.
		return false, created, nil
	}
	if created {
		err = CheckQuota("releases", nr.MaxReleases, func() (int, error) { return f.CountReleases(r.PluginID) })
		if err != nil {
			return found, false, err
		}
	}
	if err := CheckChannelQuota(f, r.PluginID, nr.Channel, nr.MaxChannels); err != nil {
		return found, false, err
	}
	return found, created, nil
}

// ChangeChannel is Store.SetChannel inside t: the release must belong to
// the plugin and not be yanked.
func ChangeChannel(t ReleaseTx, c ChannelChange) (distribution.Release, error) {
	found, err := t.Authorize(c.By, c.PluginID)
	if err != nil {
		return distribution.Release{}, err
	}
	if !found {
		return distribution.Release{}, ErrNotFound
	}
	rel, err := t.Release(c.ReleaseID)
	switch {
	case err != nil:
		return rel, err
	case rel.PluginID != c.PluginID:
		return rel, ErrNotFound
	case rel.Yanked:
		return rel, ErrYanked
	}
	return rel, t.SetChannel(c.PluginID, c.Channel, c.ReleaseID, c.MaxChannels)
}

// ChangeYanked is Store.SetYanked inside t.
func ChangeYanked(t ReleaseTx, by Actor, releaseID string, yanked bool) (distribution.Release, error) {
	rel, err := t.Release(releaseID)
	if err != nil {
		return rel, err
	}
	if _, err := t.Authorize(by, rel.PluginID); err != nil {
		return rel, err
	}
	if err := t.SetYanked(releaseID, yanked); err != nil {
		return rel, err
	}
	rel.Yanked = yanked
	return rel, nil
}

// InstallationTx is the part of a write transaction that keeps
// installation reports.
type InstallationTx interface {
	PluginExists(id string) (bool, error)
	// InstallationPlugin returns the plugin of the report reporter/id,
	// "" when there is none.
	InstallationPlugin(reporter, id string) (string, error)
	CountInstallations(pluginID string) (int, error)
	// UpsertInstallation adds the report or replaces the one with its
	// reporter and ID.
	UpsertInstallation(in distribution.Installation) error
}

// PutInstallation is Store.PutInstallation inside t: the plugin must
// exist, and a report that adds a row to a plugin (a new one, or one
// moved from another plugin) counts against that plugin's quota.
func PutInstallation(t InstallationTx, in distribution.Installation, maxPerPlugin int) error {
	found, err := t.PluginExists(in.PluginID)
	if err != nil {
		return err
	}
	if !found {
		return ErrNotFound
	}
	was, err := t.InstallationPlugin(in.Reporter, in.ID)
	if err != nil {
		return err
	}
	if was != in.PluginID {
		if err := CheckQuota("installations", maxPerPlugin, func() (int, error) { return t.CountInstallations(in.PluginID) }); err != nil {
			return err
		}
	}
	return t.UpsertInstallation(in)
}

// OwnerTx is the part of a write transaction that changes owners.
type OwnerTx interface {
	PluginExists(id string) (bool, error)
	AddOwner(pluginID, identity string) error
	RemoveOwner(pluginID, identity string) error
	// ClearOwners removes every owner of the plugin.
	ClearOwners(pluginID string) error
	Owners(pluginID string) ([]string, error)
}

// ChangeOwners is Store.ChangeOwners inside t.
func ChangeOwners(t OwnerTx, pluginID string, op OwnerOp, identity string) ([]string, error) {
	found, err := t.PluginExists(pluginID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNotFound
	}
	switch op {
	case Transfer:
		if err := t.ClearOwners(pluginID); err != nil {
			return nil, err
		}
		err = t.AddOwner(pluginID, identity)
	case Grant:
		err = t.AddOwner(pluginID, identity)
	case Revoke:
		err = t.RemoveOwner(pluginID, identity)
	default:
		err = fmt.Errorf("store: unknown owner operation %q", op)
	}
	if err != nil {
		return nil, err
	}
	return t.Owners(pluginID)
}
