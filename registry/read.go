package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// Page sizes of the catalog and the installations listing: the default,
// and the most a client may ask for with limit.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
)

// parseLimit parses the limit query parameter.
func parseLimit(q query) (int, error) {
	v, ok := q.lookup("limit")
	if !ok {
		return DefaultPageLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxPageLimit || strconv.Itoa(n) != v {
		return 0, badRequest(distribution.CodeBadRequest, fmt.Sprintf("limit must be 1 to %d", MaxPageLimit))
	}
	return n, nil
}

// catalog serves GET /catalog[?cursor=C][&limit=N], one page of plugins
// sorted by ID, and GET /catalog?plugin_id=P, the entry of one plugin. The
// cursor of the next page is the ID of the last plugin on this one.
func (s *Server) catalog(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireRead(r); err != nil {
		return err
	}
	q, err := parseQuery(r.URL.RawQuery, "cursor", "limit", "plugin_id")
	if err != nil {
		return err
	}
	limit, err := parseLimit(q)
	if err != nil {
		return err
	}
	var sq store.CatalogQuery
	if id, ok := q.lookup("plugin_id"); ok {
		if _, paged := q.lookup("cursor"); paged {
			return badRequest(distribution.CodeBadRequest, "give plugin_id or cursor, not both")
		}
		if err := distribution.CheckPluginID(id); err != nil {
			return badRequest(distribution.CodeBadRequest, err.Error())
		}
		sq.PluginID = id
	} else {
		if c, ok := q.lookup("cursor"); ok {
			if distribution.CheckPluginID(c) != nil {
				return badRequest(distribution.CodeBadRequest, "malformed cursor")
			}
			sq.After = c
		}
		sq.Limit = limit + 1
	}
	plugins, err := s.store.Catalog(r.Context(), sq)
	if err != nil {
		return err
	}
	return writePage(w, "plugins", plugins, limit, s.cfg.CatalogPageBytes,
		func(p distribution.CatalogPlugin) string { return p.ID })
}

// plainRelease is a Release without its JSON methods. A release the server
// sends has no unknown members to keep, and encoding it directly costs a
// fifth of going through Release.MarshalJSON: resolve is the hot path.
type plainRelease distribution.Release

// encodeRelease is marshal(plainRelease(rel)), byte for byte
// (FuzzEncodeRelease), without reflection: a resolve that misses the cache
// spent an eighth of its time in encoding/json. Text that JSON would
// escape, and times out of UTC or of the years marshal accepts, take
// encoding/json's path.
func encodeRelease(rel distribution.Release) ([]byte, error) {
	texts := [...]string{rel.ID, rel.PluginID, rel.Version, rel.Description, rel.ArtifactDigest}
	n := 0
	for _, t := range texts {
		if !plainJSON(t) {
			return marshal(plainRelease(rel))
		}
		n += len(t)
	}
	if y := rel.PublishedAt.Year(); y < 0 || y > 9999 || rel.PublishedAt.Location() != time.UTC {
		return marshal(plainRelease(rel))
	}
	b := make([]byte, 0, n+192)
	for i, name := range [...]string{`{"id":"`, `","plugin_id":"`, `","version":"`, `","description":"`, `","artifact_digest":"`} {
		b = append(append(b, name...), texts[i]...)
	}
	b = strconv.AppendInt(append(b, `","size":`...), rel.Size, 10)
	b = strconv.AppendBool(append(b, `,"yanked":`...), rel.Yanked)
	b = rel.PublishedAt.AppendFormat(append(b, `,"published_at":"`...), time.RFC3339Nano)
	return append(b, "\"}\n"...), nil
}

// plainJSON reports whether s is printable ASCII without '"' or '\\', which
// encoding/json writes as it is.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// parseResolve checks the query of GET /resolve: release_id, or plugin_id
// with at most one of release_id and channel (channel defaults to
// "stable").
func parseResolve(raw string) (distribution.ResolveQuery, error) {
	var q distribution.ResolveQuery
	p, err := parseQuery(raw, "plugin_id", "release_id", "channel")
	if err != nil {
		return q, err
	}
	q.PluginID, q.ReleaseID, q.Channel = p.get("plugin_id"), p.get("release_id"), p.get("channel")
	if _, ok := p.lookup("plugin_id"); ok {
		if err := distribution.CheckPluginID(q.PluginID); err != nil {
			return q, badRequest(distribution.CodeBadRequest, err.Error())
		}
	}
	_, hasRelease := p.lookup("release_id")
	_, hasChannel := p.lookup("channel")
	switch {
	case hasRelease && hasChannel:
		return q, badRequest(distribution.CodeBadRequest, "give release_id or channel, not both")
	case hasRelease:
		if err := distribution.CheckReleaseID(q.ReleaseID); err != nil {
			return q, badRequest(distribution.CodeBadRequest, err.Error())
		}
		return q, nil
	case q.PluginID == "":
		return q, badRequest(distribution.CodeBadRequest, "plugin_id is required")
	case !hasChannel:
		q.Channel = distribution.DefaultChannel
	}
	if err := distribution.CheckChannel(q.Channel); err != nil {
		return q, badRequest(distribution.CodeBadRequest, err.Error())
	}
	return q, nil
}

// resolve serves GET /resolve.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireRead(r); err != nil {
		return err
	}
	q, err := parseResolve(r.URL.RawQuery)
	if err != nil {
		return err
	}
	b, how, err := s.resolved.load(r.Context(), q, func(ctx context.Context) ([]byte, error) {
		return s.readResolve(ctx, q)
	})
	s.metrics.resolveLookup(how)
	if err != nil {
		return err
	}
	writeJSONBytes(w, http.StatusOK, b)
	return nil
}

// readResolve reads the answer of q from the store and encodes it.
func (s *Server) readResolve(ctx context.Context, q distribution.ResolveQuery) ([]byte, error) {
	var rel distribution.Release
	var err error
	if q.ReleaseID != "" {
		rel, err = s.store.Release(ctx, q.ReleaseID)
		if err == nil && q.PluginID != "" && rel.PluginID != q.PluginID {
			err = store.ErrNotFound
		}
	} else {
		rel, err = s.store.Channel(ctx, q.PluginID, q.Channel)
	}
	if errors.Is(err, store.ErrNotFound) {
		if q.ReleaseID != "" {
			return nil, notFound("no release " + q.ReleaseID)
		}
		return nil, notFound("no release of " + q.PluginID + " on channel " + q.Channel)
	}
	if err != nil {
		return nil, err
	}
	return encodeRelease(rel)
}
