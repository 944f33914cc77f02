package install

import (
	"context"
	"net/http"
	"os"

	"github.com/plugkit/plugkit/distribution"
)

// reportAll reports each committed installation from a Backplane registry
// to that registry (POST /installations). The installation is done by
// then: a failed report is recorded in the change, not returned.
func (h *Home) reportAll(ctx context.Context, changes []*Change, fetched []*fetched) {
	for i, c := range changes {
		f := fetched[i]
		if c.Action == ActionNone || c.New.Source.Kind != KindRegistry || f.release == nil {
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
		c.Report = "reported"
		if err := cl.Request(ctx, http.MethodPost, "/installations", in, nil); err != nil {
			c.Report = err.Error()
		}
	}
}
