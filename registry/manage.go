package registry

import (
	"errors"
	"net/http"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// setChannel serves PUT /channels: point a channel at a release.
func (s *Server) setChannel(w http.ResponseWriter, r *http.Request) error {
	if err := s.requirePublish(r); err != nil {
		return err
	}
	if err := noQuery(r); err != nil {
		return err
	}
	var u distribution.ChannelUpdate
	if err := decodeJSON(w, r, &u); err != nil {
		return err
	}
	for _, err := range []error{
		distribution.CheckPluginID(u.PluginID),
		distribution.CheckChannel(u.Channel),
		distribution.CheckReleaseID(u.ReleaseID),
	} {
		if err != nil {
			return badRequest(distribution.CodeBadRequest, err.Error())
		}
	}
	rel, err := s.store.SetChannel(r.Context(), u.PluginID, u.Channel, u.ReleaseID)
	s.resolved.reset()
	if err != nil {
		return storeError(err)
	}
	s.log.Info("channel moved", "plugin", u.PluginID, "channel", u.Channel, "release", rel.ID)
	writeJSON(w, http.StatusOK, rel)
	return nil
}

// yank serves POST /yank: mark a release yanked, or not.
func (s *Server) yank(w http.ResponseWriter, r *http.Request) error {
	if err := s.requirePublish(r); err != nil {
		return err
	}
	if err := noQuery(r); err != nil {
		return err
	}
	var u distribution.YankUpdate
	if err := decodeJSON(w, r, &u); err != nil {
		return err
	}
	if err := distribution.CheckReleaseID(u.ReleaseID); err != nil {
		return badRequest(distribution.CodeBadRequest, err.Error())
	}
	rel, err := s.store.SetYanked(r.Context(), u.ReleaseID, u.Yanked)
	s.resolved.reset()
	if err != nil {
		return storeError(err)
	}
	s.log.Info("yank", "release", rel.ID, "yanked", rel.Yanked)
	writeJSON(w, http.StatusOK, rel)
	return nil
}

// storeError maps the store's sentinel errors onto responses.
func storeError(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("no such plugin or release")
	case errors.Is(err, store.ErrYanked):
		return &apiError{status: http.StatusConflict, code: distribution.CodeReleaseYanked, msg: "the release is yanked"}
	case errors.Is(err, store.ErrConflict):
		return &apiError{status: http.StatusConflict, code: distribution.CodeVersionConflict, msg: "the release exists with another digest"}
	}
	return err
}
