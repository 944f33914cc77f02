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
