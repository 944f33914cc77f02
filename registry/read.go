package registry

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// catalog serves GET /catalog.
func (s *Server) catalog(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireRead(r); err != nil {
		return err
	}
	if err := noQuery(r); err != nil {
		return err
	}
	plugins, err := s.store.Catalog(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, distribution.Catalog{Plugins: plugins})
	return nil
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
	q.PluginID, q.ReleaseID, q.Channel = p["plugin_id"], p["release_id"], p["channel"]
	if _, ok := p["plugin_id"]; ok {
		if err := distribution.CheckPluginID(q.PluginID); err != nil {
			return q, badRequest(distribution.CodeBadRequest, err.Error())
		}
	}
	_, hasRelease := p["release_id"]
	_, hasChannel := p["channel"]
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
	if b, ok := s.resolved.get(q); ok {
		writeJSONBytes(w, http.StatusOK, b)
		return nil
	}
	var rel distribution.Release
	if q.ReleaseID != "" {
		rel, err = s.store.Release(r.Context(), q.ReleaseID)
		if err == nil && q.PluginID != "" && rel.PluginID != q.PluginID {
			err = store.ErrNotFound
		}
	} else {
		rel, err = s.store.Channel(r.Context(), q.PluginID, q.Channel)
	}
	if errors.Is(err, store.ErrNotFound) {
		return notFound("no such release")
	}
	if err != nil {
		return err
	}
	b, err := json.Marshal(rel)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	s.resolved.put(q, b)
	writeJSONBytes(w, http.StatusOK, b)
	return nil
}
