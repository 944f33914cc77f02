package registry

import (
	"fmt"
	"net/http"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
)

// installationStatuses are the values Installation.Status may take.
var installationStatuses = map[string]bool{"installed": true, "updated": true, "removed": true, "failed": true}

// installations serves GET /installations[?plugin_id=P] and POST
// /installations. Both need read access: reporting is what an installed
// client does with its reader token.
func (s *Server) installations(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireRead(r); err != nil {
		return err
	}
	if r.Method == http.MethodPost {
		return s.reportInstallation(w, r)
	}
	q, err := parseQuery(r.URL.RawQuery, "plugin_id")
	if err != nil {
		return err
	}
	plugin, ok := q["plugin_id"]
	if ok {
		if err := distribution.CheckPluginID(plugin); err != nil {
			return badRequest(distribution.CodeBadRequest, err.Error())
		}
	}
	list, err := s.store.Installations(r.Context(), plugin)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, distribution.Installations{Installations: list})
	return nil
}

func (s *Server) reportInstallation(w http.ResponseWriter, r *http.Request) error {
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
	in.ReportedAt = time.Now().UTC()
	if err := s.store.PutInstallation(r.Context(), in); err != nil {
		return err
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
