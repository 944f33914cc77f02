package registry

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/blobs"
)

// parseArtifactPath returns the digest of a path below the prefix,
// "/artifacts/sha256:…", accepting only archive.ParseDigest's strict form.
func parseArtifactPath(rest string) (string, error) {
	d, ok := strings.CutPrefix(rest, "/artifacts/")
	if !ok {
		return "", notFound("no such endpoint")
	}
	digest, err := archive.ParseDigest(d)
	if err != nil {
		return "", badRequest(distribution.CodeInvalidDigest, "the digest must be sha256: and 64 lowercase hex digits")
	}
	return digest, nil
}

// artifact serves GET and HEAD /artifacts/{digest}. An artifact never
// changes, so it is cached for a year as immutable, its ETag is its digest,
// and http.ServeContent answers conditional and Range requests.
func (s *Server) artifact(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireRead(r); err != nil {
		return err
	}
	digest, err := parseArtifactPath(strings.TrimPrefix(r.URL.Path, distribution.Prefix))
	if err != nil {
		return err
	}
	if err := noQuery(r); err != nil {
		return err
	}
	if err := s.checkPublished(r, digest); err != nil {
		return err
	}
	if ps, ok := s.blobs.(blobs.Presigner); ok && s.cfg.BlobsRedirect {
		// The client fetches the bytes from the blob store itself and
		// checks them against the digest, as always.
		u, err := ps.Presign(r.Context(), digest)
		if err != nil {
			return err
		}
		w.Header().Set("Cache-Control", "no-store") // the URL expires
		http.Redirect(w, r, u, http.StatusTemporaryRedirect)
		return nil
	}
	f, _, err := s.blobs.Open(r.Context(), digest)
	if errors.Is(err, blobs.ErrNotFound) {
		return notFound("no such artifact")
	}
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("ETag", `"`+digest+`"`)
	h.Set("Content-Type", "application/gzip")
	h.Set("X-Content-Type-Options", "nosniff")
	// Shared caches may keep artifacts only when anyone may read them.
	if s.auth.anonymous {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "private, max-age=31536000, immutable")
	}
	http.ServeContent(w, r, "", time.Time{}, f)
	return nil
}

// checkPublished serves only artifacts a release refers to: a blob left by
// a publish that crashed before its commit stays invisible.
func (s *Server) checkPublished(r *http.Request, digest string) error {
	if s.published.has(digest) {
		return nil
	}
	ok, err := s.store.HasArtifact(r.Context(), digest)
	if err != nil {
		return err
	}
	if !ok {
		return notFound("no artifact " + digest)
	}
	s.published.add(digest)
	return nil
}
