package registry

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// installationStatuses are the values Installation.Status may take.
var installationStatuses = map[string]bool{"installed": true, "updated": true, "removed": true, "failed": true}

// installations serves GET /installations[?plugin_id=P][&cursor=C][&limit=N]
// and POST /installations. Both need a token unless AnonymousReports: the
// listing says which hosts run what, and reports add rows.
func (s *Server) installations(w http.ResponseWriter, r *http.Request) error {
	p, err := s.auth.require(r, reader, s.auth.reports)
	if err != nil {
		return err
	}
	if r.Method == http.MethodPost {
		return s.reportInstallation(w, r, p)
	}
	q, err := parseQuery(r.URL.RawQuery, "plugin_id", "cursor", "limit")
	if err != nil {
		return err
	}
	limit, err := parseLimit(q)
	if err != nil {
		return err
	}
	sq := store.InstallationQuery{Limit: limit + 1}
	if plugin, ok := q.lookup("plugin_id"); ok {
		if err := distribution.CheckPluginID(plugin); err != nil {
			return badRequest(distribution.CodeBadRequest, err.Error())
		}
		sq.PluginID = plugin
	}
	if c, ok := q.lookup("cursor"); ok {
		key, err := parseInstallationCursor(c)
		if err != nil || sq.PluginID != "" && key.PluginID != sq.PluginID {
			return badRequest(distribution.CodeBadRequest, "malformed cursor")
		}
		sq.After = &key
	}
	list, err := s.store.Installations(r.Context(), sq)
	if err != nil {
		return err
	}
	return writePage(w, "installations", list, limit, s.cfg.CatalogPageBytes, installationCursor)
}

// installationCursor is the cursor after in: its key, NUL-separated, in
// unpadded base64url. Clients treat it as opaque.
func installationCursor(in distribution.Installation) string {
	return base64.RawURLEncoding.EncodeToString([]byte(in.PluginID + "\x00" + in.Reporter + "\x00" + in.ID))
}

func parseInstallationCursor(c string) (store.InstallationKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	parts := strings.Split(string(b), "\x00")
	if err != nil || len(parts) != 3 || distribution.CheckPluginID(parts[0]) != nil {
		return store.InstallationKey{}, errors.New("malformed cursor")
	}
	return store.InstallationKey{PluginID: parts[0], Reporter: parts[1], ID: parts[2]}, nil
}

func (s *Server) reportInstallation(w http.ResponseWriter, r *http.Request, p principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	var in distribution.Installation
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := checkInstallation(in); err != nil {
		return badRequest(distribution.CodeBadRequest, err.Error())
	}
	in.Reporter = p.identity
	in.ReportedAt = time.Now().UTC()
	err := s.store.PutInstallation(r.Context(), in, s.cfg.MaxInstallationsPerPlugin)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("no plugin " + in.PluginID + " on this registry")
	}
	if err != nil {
		return storeError(err)
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}

func checkInstallation(in distribution.Installation) error {
	if err := checkText("id", in.ID, 1, 128); err != nil {
		return err
	}
	if err := checkText("host", in.Host, 0, 256); err != nil {
		return err
	}
	if in.Reporter != "" {
		return errors.New("reporter is set by the server")
	}
	if err := distribution.CheckPluginID(in.PluginID); err != nil {
		return err
	}
	if err := distribution.CheckReleaseID(in.ReleaseID); err != nil {
		return err
	}
	if _, err := archive.ParseDigest(in.ArtifactDigest); err != nil {
		return err
	}
	if !installationStatuses[in.Status] {
		return fmt.Errorf("status must be installed, updated, removed or failed")
	}
	return nil
}

// checkText bounds a free-text field and keeps control characters out of
// what operators will list and log.
func checkText(field, s string, min, max int) error {
	if len(s) < min || len(s) > max || !utf8.ValidString(s) {
		return fmt.Errorf("%s must be %d to %d bytes of UTF-8", field, min, max)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%s holds an unprintable character", field)
		}
	}
	return nil
}
