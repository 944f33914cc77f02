package testservice

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
)

// pushManifest pushes m to repo and returns its descriptor.
func pushManifest(t *testing.T, repo *remote.Repository, m ocispec.Manifest) ocispec.Descriptor {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	d := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, b)
	if err := repo.Push(context.Background(), d, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestReferrersProxy: a referrer pushed to the registry, which keeps it
// in the tag schema, is listed rewritten through either proxy: through the
// referrers API, or through the tag schema with the digest of what is
// served; a read of it is counted.
func TestReferrersProxy(t *testing.T) {
	ctx := context.Background()
	reg := StartRegistry(t)
	open := func(host string) *remote.Repository {
		r, err := remote.NewRepository(host + "/plugins/proxied")
		if err != nil {
			t.Fatal(err)
		}
		r.PlainHTTP = true
		return r
	}
	upstream := open(reg.Host)
	empty := []byte("{}")
	cfg := content.NewDescriptorFromBytes(ocispec.MediaTypeEmptyJSON, empty)
	if err := upstream.Push(ctx, cfg, bytes.NewReader(empty)); err != nil {
		t.Fatal(err)
	}
	base := ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: cfg, Layers: []ocispec.Descriptor{}}
	subject := pushManifest(t, upstream, base)
	note := base
	note.ArtifactType, note.Subject = "application/vnd.example.note", &subject
	referrer := pushManifest(t, upstream, note)

	const rewritten = "application/vnd.example.rewritten"
	rewrite := func(d ocispec.Descriptor) ocispec.Descriptor {
		d.ArtifactType = rewritten
		return d
	}
	for _, c := range []struct {
		name      string
		start     func(testing.TB, string, func(ocispec.Descriptor) ocispec.Descriptor) *ReferrersProxy
		apiStatus int
	}{
		{"referrers API", StartReferrersProxy, http.StatusOK},
		{"tag schema", StartTagSchemaProxy, http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.start(t, reg.Host, rewrite)
			repo := open(p.Host)
			var got []ocispec.Descriptor
			err := repo.Referrers(ctx, subject, "", func(r []ocispec.Descriptor) error {
				got = append(got, r...)
				return nil
			})
			if err != nil || len(got) != 1 || got[0].Digest != referrer.Digest || got[0].ArtifactType != rewritten || p.Listings() == 0 {
				t.Fatalf("referrers %v %+v, %d listings", err, got, p.Listings())
			}
			resp, err := http.Get("http://" + p.Host + "/v2/plugins/proxied/referrers/" + subject.Digest.String())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.apiStatus {
				t.Errorf("referrers API: %s, want %d", resp.Status, c.apiStatus)
			}
			req, err := http.NewRequest(http.MethodGet, "http://"+p.Host+"/v2/plugins/proxied/manifests/sha256-"+subject.Digest.Encoded(), nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", ocispec.MediaTypeImageIndex)
			if resp, err = http.DefaultClient.Do(req); err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.Header.Get("Docker-Content-Digest") != digest.FromBytes(b).String() {
				t.Errorf("tag schema index: %v, digest header %q of %s", err, resp.Header.Get("Docker-Content-Digest"), b)
			}
			if rewrote := bytes.Contains(b, []byte(rewritten)); rewrote == (c.apiStatus == http.StatusOK) {
				t.Errorf("tag schema index rewritten: %v, in %s", rewrote, b)
			}
			if _, err := content.FetchAll(ctx, repo, referrer); err != nil || p.ReferrerGets() != 1 {
				t.Errorf("reading the referrer: %v, %d counted", err, p.ReferrerGets())
			}
		})
	}
}
