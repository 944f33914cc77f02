package distribution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

func packPlugin(t *testing.T, name, version string) []byte {
	t.Helper()
	m := fmt.Sprintf(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": %q`, name)
	if version != "" {
		m += fmt.Sprintf(`, "version": %q`, version)
	}
	s, err := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(m + "}")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := archive.Pack(s, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lyingRegistry answers every resolve with rel and serves body under its
// digest.
func lyingRegistry(t *testing.T, rel Release, body []byte) *Client {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case Prefix + "/resolve":
			json.NewEncoder(w).Encode(rel)
		case Prefix + "/artifacts/" + archive.Digest(body):
			w.Write(body)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return &Client{BaseURL: ts.URL}
}

func releaseOf(plugin, version string, body []byte) Release {
	d := archive.Digest(body)
	return Release{ID: ReleaseID(plugin, version, d), PluginID: plugin, Version: version,
		ArtifactDigest: d, Size: int64(len(body)), PublishedAt: time.Now()}
}

// TestFetchChecksWhatItGot: the
// registry must answer the plugin and release asked for, and the artifact
// must hold that plugin and version.
func TestFetchChecksWhatItGot(t *testing.T) {
	ctx := context.Background()
	good := packPlugin(t, "kv", "1.0.0")
	evil := packPlugin(t, "evil", "6.6.6")
	bare := packPlugin(t, "kv", "")

	rel, art, err := lyingRegistry(t, releaseOf("kv", "1.0.0", good), good).Fetch(ctx, ResolveQuery{PluginID: "kv"})
	if err != nil || rel.ID != "kv@1.0.0" || art.Package.Name != "kv" {
		t.Fatalf("honest fetch: %v", err)
	}
	if _, _, err := lyingRegistry(t, releaseOf("kv", "", bare), bare).Fetch(ctx, ResolveQuery{PluginID: "kv"}); err != nil {
		t.Fatalf("honest versionless fetch: %v", err)
	}

	squat := releaseOf("kv", "1.0.0", good)
	squat.ID = "kv@" + archive.Digest(bare) // a version posing as a digest release id

	wrongVersion := releaseOf("kv", "2.0.0", good) // the archive says 1.0.0

	for name, tc := range map[string]struct {
		rel  Release
		body []byte
		q    ResolveQuery
	}{
		"another plugin":        {releaseOf("evil", "6.6.6", evil), evil, ResolveQuery{PluginID: "kv"}},
		"another release":       {releaseOf("kv", "1.0.0", good), good, ResolveQuery{PluginID: "kv", ReleaseID: "kv@2.0.0"}},
		"manifest of another":   {Release{ID: "kv@6.6.6", PluginID: "kv", Version: "6.6.6", ArtifactDigest: archive.Digest(evil)}, evil, ResolveQuery{PluginID: "kv"}},
		"manifest version":      {wrongVersion, good, ResolveQuery{PluginID: "kv"}},
		"pinned version":        {wrongVersion, good, ResolveQuery{ReleaseID: "kv@2.0.0"}},
		"release id squat":      {squat, good, ResolveQuery{PluginID: "kv"}},
		"yanked on the channel": {func() Release { r := releaseOf("kv", "1.0.0", good); r.Yanked = true; return r }(), good, ResolveQuery{PluginID: "kv"}},
		"digest version":        {releaseOf("kv", "sha256:"+archive.Digest(bare)[7:], good), good, ResolveQuery{PluginID: "kv"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := lyingRegistry(t, tc.rel, tc.body).Fetch(ctx, tc.q)
			if !errors.Is(err, ErrReleaseMismatch) {
				t.Fatalf("got %v, want ErrReleaseMismatch", err)
			}
		})
	}
}
