package testservice

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// ReferrersProxy is a reverse proxy in front of a registry that lists the
// referrers of a manifest otherwise than the registry does, as other
// registries do: go-containerregistry's lists a referrer's config media
// type as its artifactType, others list none. Clients read through it;
// writes go to the registry itself, since a client updating the tag
// schema index through it would write back what it rewrote.
type ReferrersProxy struct {
	// Host is "127.0.0.1:PORT", the registry part of a reference through
	// the proxy.
	Host string

	upstream string
	rewrite  func(ocispec.Descriptor) ocispec.Descriptor
	api      bool
	proxy    *httputil.ReverseProxy
	listed   sync.Map // digest of every referrer the proxy listed
	gets     atomic.Int64
	listings atomic.Int64
}

// StartReferrersProxy starts a proxy in front of upstream (HOST:PORT, plain
// HTTP) that answers the OCI referrers API (GET /v2/NAME/referrers/DIGEST)
// with every descriptor passed through rewrite: the upstream's own answer
// where it has the API, else what its referrers tag schema lists
// (distribution 2.8 has no API), so that clients through the proxy use the
// API. Every other request is passed on. The proxy stops when the test
// ends.
func StartReferrersProxy(t testing.TB, upstream string, rewrite func(ocispec.Descriptor) ocispec.Descriptor) *ReferrersProxy {
	t.Helper()
	return startReferrersProxy(t, upstream, rewrite, true)
}

// StartTagSchemaProxy is StartReferrersProxy for clients of a registry
// without the referrers API: it passes the API's 404 on and rewrites the
// referrers tag schema index (GET or HEAD /v2/NAME/manifests/ALG-HEX)
// instead.
func StartTagSchemaProxy(t testing.TB, upstream string, rewrite func(ocispec.Descriptor) ocispec.Descriptor) *ReferrersProxy {
	t.Helper()
	return startReferrersProxy(t, upstream, rewrite, false)
}

func startReferrersProxy(t testing.TB, upstream string, rewrite func(ocispec.Descriptor) ocispec.Descriptor, api bool) *ReferrersProxy {
	t.Helper()
	p := &ReferrersProxy{upstream: upstream, rewrite: rewrite, api: api,
		proxy: httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: upstream})}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(srv.Close)
	p.Host = strings.TrimPrefix(srv.URL, "http://")
	return p
}

// ReferrerGets counts the GETs of manifests the proxy had listed as
// referrers: how many referrers a client read.
func (p *ReferrersProxy) ReferrerGets() int64 { return p.gets.Load() }

// Listings counts the rewritten listings the proxy served: a test that
// expects a client to have listed through the referrers API (or the tag
// schema) sees here that it did.
func (p *ReferrersProxy) Listings() int64 { return p.listings.Load() }

// tagSchemaTag matches the tag of a referrers tag schema index.
var tagSchemaTag = regexp.MustCompile(`^[a-z0-9]+-[a-zA-Z0-9=_-]+$`)

func (p *ReferrersProxy) serve(w http.ResponseWriter, r *http.Request) {
	name, kind, ref, ok := splitV2Path(r.URL.Path)
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case ok && read && kind == "referrers" && p.api:
		p.serveReferrers(w, r, name, ref)
		return
	case ok && read && kind == "manifests" && !p.api && tagSchemaTag.MatchString(ref):
		idx, found, err := p.getIndex(r, "/v2/"+name+"/manifests/"+ref)
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadGateway)
		case !found:
			http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`, http.StatusNotFound)
		default:
			p.writeIndex(w, r, idx)
		}
		return
	case ok && r.Method == http.MethodGet && kind == "manifests":
		if _, listed := p.listed.Load(digest.Digest(ref)); listed {
			p.gets.Add(1)
		}
	}
	p.proxy.ServeHTTP(w, r)
}

// serveReferrers answers the referrers API for subject, from the
// upstream's API or its tag schema.
func (p *ReferrersProxy) serveReferrers(w http.ResponseWriter, r *http.Request, name, subject string) {
	idx, found, err := p.getIndex(r, "/v2/"+name+"/referrers/"+subject)
	if err == nil && !found {
		d, perr := digest.Parse(subject)
		if perr != nil {
			http.Error(w, perr.Error(), http.StatusBadRequest)
			return
		}
		idx, _, err = p.getIndex(r, "/v2/"+name+"/manifests/"+d.Algorithm().String()+"-"+d.Encoded())
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	p.writeIndex(w, r, idx)
}

// getIndex GETs an image index from the upstream with the client's
// credentials; found is false when the upstream answers 404.
func (p *ReferrersProxy) getIndex(r *http.Request, path string) (idx ocispec.Index, found bool, err error) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://"+p.upstream+path, nil)
	if err != nil {
		return idx, false, err
	}
	req.Header.Set("Accept", ocispec.MediaTypeImageIndex)
	if a := r.Header.Get("Authorization"); a != "" {
		req.Header.Set("Authorization", a)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return idx, false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return idx, false, nil
	default:
		return idx, false, fmt.Errorf("upstream GET %s: %s", path, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return idx, false, err
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return idx, false, fmt.Errorf("upstream GET %s: %w", path, err)
	}
	return idx, true, nil
}

// writeIndex answers with idx, every descriptor rewritten, as a registry
// serves an index: its digest and length in the headers.
func (p *ReferrersProxy) writeIndex(w http.ResponseWriter, r *http.Request, idx ocispec.Index) {
	idx.SchemaVersion, idx.MediaType = 2, ocispec.MediaTypeImageIndex
	if idx.Manifests == nil {
		idx.Manifests = []ocispec.Descriptor{}
	}
	p.listings.Add(1)
	for i, d := range idx.Manifests {
		p.listed.Store(d.Digest, true)
		idx.Manifests[i] = p.rewrite(d)
	}
	b, err := json.Marshal(idx)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ocispec.MediaTypeImageIndex)
	h.Set("Content-Length", fmt.Sprint(len(b)))
	h.Set("Docker-Content-Digest", digest.FromBytes(b).String())
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// splitV2Path splits /v2/NAME/KIND/REF, NAME having any number of
// components.
func splitV2Path(path string) (name, kind, ref string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok {
		return "", "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", "", "", false
	}
	rest, ref = rest[:i], rest[i+1:]
	j := strings.LastIndexByte(rest, '/')
	if j <= 0 {
		return "", "", "", false
	}
	return rest[:j], rest[j+1:], ref, true
}
