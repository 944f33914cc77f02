package install

import (
	"context"
	"net/http"
	"os"

	"github.com/plugkit/plugkit/distribution"
)

// ReportSent is Change.Report when the registry took the report; a
// report that failed is "failed: " and why.
const ReportSent = "reported"

const reportFailed = "failed: "

// reportAll reports each installation from a Backplane registry to that
// registry (POST /installations), after the commit: the installation is
// done by then, so a failed report is recorded in its change
// (Report, ReportErr), never returned, and never undoes anything.
//
// A plugin the operation left as it was is reported too, as "installed"
// at its release: running the same install or update again, with a
// token, is how a report that failed is sent. Reports are idempotent:
// each names the home and the plugin, and the registry keeps the latest.
func (h *Home) reportAll(ctx context.Context, changes []*Change, fetched []*fetched) {
	for i, c := range changes {
		f := fetched[i]
		if f == nil || c.New == nil || c.New.Source.Kind != KindRegistry || f.release == nil {
			continue
		}
		status := "installed"
		if c.Action == ActionUpdate {
			status = "updated"
		}
		var cl distribution.Client
		if h.opts.Source.Client != nil {
			cl = *h.opts.Source.Client
		}
		cl.BaseURL = c.New.Source.Registry
		host, _ := os.Hostname()
		in := distribution.Installation{
			ID:             "plugkit-" + sha256Hex([]byte(h.dir + "\x00" + c.Name))[:32],
			PluginID:       f.release.PluginID,
			ReleaseID:      f.release.ID,
			ArtifactDigest: c.New.Identity,
			Status:         status,
			Host:           host,
		}
		c.Report, c.ReportErr = ReportSent, cl.Request(ctx, http.MethodPost, "/installations", in, nil)
		if c.ReportErr != nil {
			c.Report = reportFailed + c.ReportErr.Error()
		}
	}
}
