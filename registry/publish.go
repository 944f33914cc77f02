package registry

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/blobs"
	"github.com/plugkit/plugkit/registry/store"
)

// publish serves POST /publish?channel=C. The body is the archive.
//
// The body is received first, into a spool file, under an upload slot and
// a minimum rate (see receive): a slow client holds a file and an upload
// slot, never a publish slot, and when every upload slot is taken the
// answer is an immediate 503. Only then does the publish wait for one of
// the few slots that unpack and load archives in memory. A queue slot,
// held from the start to the end, bounds the publishes in flight, and so
// the spool files on disk.
//
// The order after that makes a crash at any point harmless: the archive is
// checked and loaded in memory, its blob is written (temp file, fsync,
// rename), and only then does one transaction create the release and point
// the channel at it. A crash before the commit leaves at most an
// unreferenced blob, which is never served and which the collector
// removes (CollectGarbage).
func (s *Server) publish(w http.ResponseWriter, r *http.Request) error {
	by, err := s.requirePublish(r)
	if err != nil {
		return err
	}
	q, err := parseQuery(r.URL.RawQuery, "channel")
	if err != nil {
		return err
	}
	channel, ok := q.lookup("channel")
	if !ok {
		channel = distribution.DefaultChannel
	}
	if err := distribution.CheckChannel(channel); err != nil {
		return badRequest(distribution.CodeBadRequest, err.Error())
	}
	if r.ContentLength > s.maxArchive {
		return s.tooLarge()
	}

	release, ok := tryTake(s.queued)
	if !ok {
		return busy(w, "publish queue")
	}
	defer release()
	releaseUpload, ok := tryTake(s.uploading)
	if !ok {
		return busy(w, "upload")
	}
	spool, err := s.receive(w, r)
	releaseUpload()
	if err != nil {
		return err
	}
	defer os.Remove(spool)

	stored, created, err := s.commit(r, by, channel, spool)
	if err != nil {
		return err
	}
	s.log.Info("published", "release", stored.ID, "digest", stored.ArtifactDigest,
		"channel", channel, "created", created, "by", by.Identity)
	status, result := http.StatusOK, "existing"
	if created {
		status, result = http.StatusCreated, "created"
	}
	s.metrics.publishes.WithLabelValues(result).Inc()
	writeJSON(w, status, distribution.PublishResult{Release: stored, Channel: channel, Created: created})
	return nil
}

// commit checks the spooled archive, writes its blob and records the
// release.
//
// The archive is read, unpacked and checked, and its blob written, under
// one of the few publish slots, since each holds the archive and its files
// in memory. The slot is given back before the release is recorded: that
// holds nothing but the release's fields, and waits mostly on the store's
// commit (a flush to disk), which the next publishes' checks can overlap,
// and which concurrent publishes can share (see postgres.DB.Publish).
//
// The collector cannot run between the blob's write and the release's
// record in this process; across processes its grace period and the blob
// store's touch-on-Put protect the blob.
func (s *Server) commit(r *http.Request, by store.Actor, channel, spool string) (distribution.Release, bool, error) {
	select {
	case s.publishing <- struct{}{}:
	case <-r.Context().Done():
		return distribution.Release{}, false, r.Context().Err()
	}
	slot := true
	releaseSlot := func() {
		if slot {
			slot = false
			<-s.publishing
		}
	}
	defer releaseSlot()
	nr, body, err := s.load(by, channel, spool)
	if err != nil {
		return distribution.Release{}, false, err
	}
	s.gcLock.RLock()
	defer s.gcLock.RUnlock()
	if err := s.putBlob(r, nr, body); err != nil {
		return distribution.Release{}, false, err
	}
	releaseSlot()
	stored, created, err := s.store.Publish(r.Context(), nr)
	s.resolved.reset() // even on error: the outcome of a failed commit is unknown
	if err != nil {
		return stored, created, storeError(err)
	}
	s.published.add(stored.ArtifactDigest)
	return stored, created, nil
}

// load reads and checks the spooled archive, and returns the release to
// record and the archive.
func (s *Server) load(by store.Actor, channel, spool string) (store.NewRelease, []byte, error) {
	body, err := os.ReadFile(spool)
	if err != nil {
		return store.NewRelease{}, nil, err
	}
	rel, name, err := s.check(body)
	if err != nil {
		return store.NewRelease{}, nil, err
	}
	return store.NewRelease{
		Release: rel, Name: name, Channel: channel, By: by,
		MaxReleases: s.cfg.MaxReleasesPerPlugin, MaxChannels: s.cfg.MaxChannelsPerPlugin,
	}, body, nil
}

// putBlob writes the blob of nr's release unless the store would refuse
// nr: not the owner, another digest, yanked, or beyond a quota.
//
// The store's refusals are looked for (store.Store.CheckPublish) before
// the blob becomes visible, so that a refused publish leaves no blob
// behind, but while its bytes are written (blobs.PutIf): on PostgreSQL
// the look is a round trip to the database, as long as writing and
// syncing a small blob. Where both fail, the refusal is the answer, as
// when they ran one after the other. The commit checks again, atomically.
func (s *Server) putBlob(r *http.Request, nr store.NewRelease, body []byte) error {
	verdict := make(chan error, 1)
	go func() { verdict <- storeError(s.store.CheckPublish(r.Context(), nr)) }()
	refused := sync.OnceValue(func() error { return <-verdict })
	err := blobs.PutIf(r.Context(), s.blobs, nr.Release.ArtifactDigest, body, refused)
	if err != nil {
		if rerr := refused(); rerr != nil {
			return rerr
		}
	}
	return err
}

func (s *Server) tooLarge() *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, code: distribution.CodeTooLarge,
		msg: fmt.Sprintf("the archive exceeds %d bytes", s.maxArchive)}
}

// check unpacks and loads an archive exactly as a client will, and returns
// the release it makes and the plugin's name.
func (s *Server) check(body []byte) (distribution.Release, string, error) {
	var rel distribution.Release
	if len(body) == 0 {
		return rel, "", badRequest(distribution.CodeInvalidArchive, "the body must be the plugin archive")
	}
	snap, err := archive.Unpack(body, archive.UnpackOptions{Limits: s.cfg.Limits})
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
		Description:    boundText(pkg.Description, s.cfg.MaxDescriptionBytes),
		ArtifactDigest: digest,
		Size:           int64(len(body)),
		PublishedAt:    time.Now().UTC(),
	}
	return rel, pkg.Name, nil
}

// boundText is free text as the registry stores it: line breaks and tabs
// become spaces, other control characters are dropped, and the result is
// cut at a character boundary to at most limit bytes, ending with "…" when
// cut. Every stored byte then encodes to at most two bytes of JSON, which
// is what bounds a catalog entry.
func boundText(s string, limit int) string {
	const ellipsis = "…"
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= limit {
		return s
	}
	cut := limit - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:max(cut, 0)], " ") + ellipsis
}
