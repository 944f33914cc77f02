package registry

import (
	"errors"
	"net/http"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// setChannel serves PUT /channels: point a channel at a release.
func (s *Server) setChannel(w http.ResponseWriter, r *http.Request) error {
	by, err := s.requirePublish(r)
	if err != nil {
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
	rel, err := s.store.SetChannel(r.Context(), store.ChannelChange{By: by, PluginID: u.PluginID, Channel: u.Channel,
		ReleaseID: u.ReleaseID, MaxChannels: s.cfg.MaxChannelsPerPlugin})
	s.resolved.reset()
	if err != nil {
		return storeError(err)
	}
	s.log.Info("channel moved", "plugin", u.PluginID, "channel", u.Channel, "release", rel.ID, "by", by.Identity)
	writeJSON(w, http.StatusOK, rel)
	return nil
}

// yank serves POST /yank: mark a release yanked, or not.
func (s *Server) yank(w http.ResponseWriter, r *http.Request) error {
	by, err := s.requirePublish(r)
	if err != nil {
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
	rel, err := s.store.SetYanked(r.Context(), by, u.ReleaseID, u.Yanked)
	s.resolved.reset()
	if err != nil {
		return storeError(err)
	}
	s.log.Info("yank", "release", rel.ID, "yanked", rel.Yanked, "by", by.Identity)
	writeJSON(w, http.StatusOK, rel)
	return nil
}

// owners serves GET /admin/owners?plugin_id=P (publishers and admins) and
// POST /admin/owners (admins): who may write to a plugin.
func (s *Server) owners(w http.ResponseWriter, r *http.Request) error {
	if r.Method == http.MethodPost {
		return s.changeOwners(w, r)
	}
	if _, err := s.auth.require(r, publisher, false); err != nil {
		return err
	}
	q, err := parseQuery(r.URL.RawQuery, "plugin_id")
	if err != nil {
		return err
	}
	plugin := q.get("plugin_id")
	if err := distribution.CheckPluginID(plugin); err != nil {
		return badRequest(distribution.CodeBadRequest, err.Error())
	}
	owners, err := s.store.Owners(r.Context(), plugin)
	if err != nil {
		return storeError(err)
	}
	writeJSON(w, http.StatusOK, distribution.Owners{PluginID: plugin, Owners: owners})
	return nil
}

func (s *Server) changeOwners(w http.ResponseWriter, r *http.Request) error {
	p, err := s.auth.require(r, admin, false)
	if err != nil {
		return err
	}
	if err := noQuery(r); err != nil {
		return err
	}
	var u distribution.OwnerUpdate
	if err := decodeJSON(w, r, &u); err != nil {
		return err
	}
	op := store.OwnerOp(u.Action)
	if op != store.Grant && op != store.Revoke && op != store.Transfer {
		return badRequest(distribution.CodeBadRequest, "action must be grant, revoke or transfer")
	}
	for _, err := range []error{distribution.CheckPluginID(u.PluginID), distribution.CheckIdentity(u.Identity)} {
		if err != nil {
			return badRequest(distribution.CodeBadRequest, err.Error())
		}
	}
	owners, err := s.store.ChangeOwners(r.Context(), u.PluginID, op, u.Identity)
	if err != nil {
		return storeError(err)
	}
	s.log.Info("owners changed", "plugin", u.PluginID, "action", u.Action, "identity", u.Identity,
		"owners", owners, "by", p.identity)
	writeJSON(w, http.StatusOK, distribution.Owners{PluginID: u.PluginID, Owners: owners})
	return nil
}

// storeError maps the store's sentinel errors onto responses.
func storeError(err error) error {
	var qe *store.QuotaError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("no such plugin or release")
	case errors.Is(err, store.ErrYanked):
		return &apiError{status: http.StatusConflict, code: distribution.CodeReleaseYanked, msg: "the release is yanked"}
	case errors.Is(err, store.ErrConflict):
		return &apiError{status: http.StatusConflict, code: distribution.CodeVersionConflict, msg: "the release exists with another digest"}
	case errors.Is(err, store.ErrNotOwner):
		return &apiError{status: http.StatusForbidden, code: distribution.CodeNotOwner,
			msg: "the plugin belongs to other publishers; an admin can grant access"}
	case errors.As(err, &qe):
		return &apiError{status: http.StatusConflict, code: distribution.CodeQuotaExceeded, msg: qe.Error()}
	}
	return err
}
