package registry

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// publish serves POST /publish?channel=C. The body is the archive.
//
// The order makes a crash at any point harmless: the archive is checked
// and loaded in memory, its blob is written (temp file, fsync, rename), and
// only then does one transaction create the release and point the channel
// at it. A crash before the commit leaves at most an unreferenced blob,
// which is never served.
func (s *Server) publish(w http.ResponseWriter, r *http.Request) error {
	if err := s.requirePublish(r); err != nil {
		return err
	}
	q, err := parseQuery(r.URL.RawQuery, "channel")
	if err != nil {
		return err
	}
	channel, ok := q["channel"]
	if !ok {
		channel = distribution.DefaultChannel
	}
	if err := distribution.CheckChannel(channel); err != nil {
		return badRequest(distribution.CodeBadRequest, err.Error())
	}
	tooLarge := &apiError{status: http.StatusRequestEntityTooLarge, code: distribution.CodeTooLarge,
		msg: fmt.Sprintf("the archive exceeds %d bytes", s.maxArchive)}
	if r.ContentLength > s.maxArchive {
		return tooLarge
	}

	select {
	case s.publishing <- struct{}{}:
		defer func() { <-s.publishing }()
	case <-r.Context().Done():
		return r.Context().Err()
	}

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxArchive))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge
	}
	if err != nil {
		return badRequest(distribution.CodeBadRequest, "unreadable body")
	}
	rel, name, err := s.check(body)
	if err != nil {
		return err
	}
	if old, err := s.store.Release(r.Context(), rel.ID); err == nil && old.ArtifactDigest != rel.ArtifactDigest {
		return storeError(store.ErrConflict) // refuse before writing a blob nobody will use
	}
	if err := s.blobs.Put(r.Context(), rel.ArtifactDigest, body); err != nil {
		return err
	}
	stored, created, err := s.store.Publish(r.Context(), store.NewRelease{Release: rel, Name: name, Channel: channel})
	s.resolved.reset() // even on error: the outcome of a failed commit is unknown
	if err != nil {
		return storeError(err)
	}
	s.log.Info("published", "release", stored.ID, "digest", stored.ArtifactDigest,
		"channel", channel, "created", created)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, distribution.PublishResult{Release: stored, Channel: channel, Created: created})
	return nil
}

// check unpacks and loads an archive exactly as a client will, and returns
// the release it makes and the plugin's name.
func (s *Server) check(body []byte) (distribution.Release, string, error) {
	var rel distribution.Release
	if len(body) == 0 {
		return rel, "", badRequest(distribution.CodeInvalidArchive, "the body must be the plugin archive")
	}
	snap, err := archive.Unpack(body, archive.UnpackOptions{Limits: s.limits})
	if errors.Is(err, archive.ErrLimit) {
		return rel, "", &apiError{status: http.StatusRequestEntityTooLarge, code: distribution.CodeTooLarge, msg: err.Error()}
	}
	if err != nil {
		return rel, "", badRequest(distribution.CodeInvalidArchive, err.Error())
	}
	pkg, err := agentplugin.Load(snap, agentplugin.Options{})
	var rejected *agentplugin.RejectedError
	if errors.As(err, &rejected) {
		return rel, "", &apiError{status: http.StatusUnprocessableEntity, code: distribution.CodePluginRejected,
			msg: rejected.Error(), diags: rejected.Diagnostics}
	}
	if err != nil {
		return rel, "", &apiError{status: http.StatusUnprocessableEntity, code: distribution.CodePluginRejected, msg: err.Error()}
	}
	for _, check := range []error{distribution.CheckPluginID(pkg.Name), distribution.CheckVersion(pkg.Version)} {
		if check != nil {
			return rel, "", &apiError{status: http.StatusUnprocessableEntity, code: distribution.CodePluginRejected, msg: check.Error()}
		}
	}
	digest := archive.Digest(body)
	rel = distribution.Release{
		ID:             distribution.ReleaseID(pkg.Name, pkg.Version, digest),
		PluginID:       pkg.Name,
		Version:        pkg.Version,
		Description:    pkg.Description,
		ArtifactDigest: digest,
		Size:           int64(len(body)),
		PublishedAt:    time.Now().UTC(),
	}
	return rel, pkg.Name, nil
}
