package distribution

import (
	"context"
	"fmt"
	"net/http"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// Artifact is a downloaded, verified, unpacked and loaded plugin.
type Artifact struct {
	// Bytes is the archive exactly as received.
	Bytes []byte
	// Digest is the digest that was asked for, which Bytes hash to.
	Digest string
	// Snapshot holds the archive's files and their modes.
	Snapshot *snapshot.Snapshot
	// Package is the loaded plugin.
	Package *agentplugin.Package
}

// Download fetches the artifact with digest and checks that its bytes hash
// to exactly that digest before anything unpacks or interprets them; a
// mismatch is ErrDigestMismatch. It then unpacks the archive in memory with
// c.Limits and loads it with c.LoadOptions; a rejected plugin is the
// loader's *agentplugin.RejectedError.
func (c *Client) Download(ctx context.Context, digest string) (*Artifact, error) {
	digest, err := archive.ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	limit := c.Limits.MaxArchiveBytes
	if limit <= 0 {
		limit = archive.DefaultMaxArchiveBytes
	}
	b, err := c.send(ctx, http.MethodGet, "/artifacts/"+digest, nil, nil, "", "application/gzip", limit)
	if err != nil {
		return nil, err
	}
	if got := archive.Digest(b); got != digest {
		return nil, fmt.Errorf("%w: asked for %s, received %s", ErrDigestMismatch, digest, got)
	}
	snap, err := archive.Unpack(b, archive.UnpackOptions{Limits: c.Limits})
	if err != nil {
		return nil, fmt.Errorf("distribution: artifact %s: %w", digest, err)
	}
	pkg, err := agentplugin.Load(snap, c.LoadOptions)
	if err != nil {
		return nil, fmt.Errorf("distribution: artifact %s: %w", digest, err)
	}
	return &Artifact{Bytes: b, Digest: digest, Snapshot: snap, Package: pkg}, nil
}

// Fetch resolves q, downloads the release's artifact, and checks that
// what came back is what was asked for (CheckRelease, then CheckArtifact):
// a registry cannot answer one plugin's query with another's release, or
// a release with an archive whose manifest says otherwise. A mismatch is
// ErrReleaseMismatch; the release is returned with it for the message.
func (c *Client) Fetch(ctx context.Context, q ResolveQuery) (*Release, *Artifact, error) {
	rel, err := c.Resolve(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	if err := CheckRelease(q, rel); err != nil {
		return rel, nil, err
	}
	art, err := c.Download(ctx, rel.ArtifactDigest)
	if err != nil {
		return rel, nil, err
	}
	if err := CheckArtifact(rel, art); err != nil {
		return rel, nil, err
	}
	return rel, art, nil
}

// CheckRelease checks a resolve answer against its query: the plugin and
// release asked for, a release ID that is what ReleaseID makes of its
// plugin, version and digest, a well-formed digest, and no yanked release
// by channel.
func CheckRelease(q ResolveQuery, rel *Release) error {
	mismatch := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrReleaseMismatch, fmt.Sprintf(format, args...))
	}
	if _, err := archive.ParseDigest(rel.ArtifactDigest); err != nil {
		return mismatch("malformed artifact digest")
	}
	switch {
	case q.PluginID != "" && rel.PluginID != q.PluginID:
		return mismatch("asked for plugin %q, got %q", q.PluginID, rel.PluginID)
	case q.ReleaseID != "" && rel.ID != q.ReleaseID:
		return mismatch("asked for release %q, got %q", q.ReleaseID, rel.ID)
	case q.ReleaseID == "" && rel.Yanked:
		return mismatch("the channel answered a yanked release %q", rel.ID)
	case CheckVersion(rel.Version) != nil || rel.ID != ReleaseID(rel.PluginID, rel.Version, rel.ArtifactDigest):
		return mismatch("release id %q is not that of plugin %q version %q", rel.ID, rel.PluginID, rel.Version)
	}
	return nil
}

// CheckArtifact checks that a downloaded artifact is the release's: its
// digest, and the manifest's name and version.
func CheckArtifact(rel *Release, art *Artifact) error {
	switch {
	case art.Digest != rel.ArtifactDigest:
		return fmt.Errorf("%w: release %q names artifact %s, got %s", ErrReleaseMismatch, rel.ID, rel.ArtifactDigest, art.Digest)
	case art.Package.Name != rel.PluginID:
		return fmt.Errorf("%w: release %q holds a plugin named %q", ErrReleaseMismatch, rel.ID, art.Package.Name)
	case art.Package.Version != rel.Version:
		return fmt.Errorf("%w: release %q holds version %q", ErrReleaseMismatch, rel.ID, art.Package.Version)
	}
	return nil
}
