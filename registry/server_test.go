package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
)

func TestPublishResolveDownload(t *testing.T) {
	ctx := context.Background()
	ts := newTestServer(t, Config{}, false)
	pub := client(ts.URL, publishToken)
	anon := client(ts.URL, "")

	a1 := pluginArchive(t, "demo", "1.0.0", map[string]string{"bin/tool": "#!/bin/sh\n"})
	res, err := pub.Publish(ctx, a1, "")
	if err != nil || !res.Created || res.Channel != "stable" || res.Release.ID != "demo@1.0.0" {
		t.Fatalf("publish: %+v %v", res, err)
	}
	again, err := pub.Publish(ctx, a1, "")
	if err != nil || again.Created {
		t.Fatalf("republish of the same bytes must be idempotent: %+v %v", again, err)
	}
	var se *distribution.StatusError
	if _, err := pub.Publish(ctx, pluginArchive(t, "demo", "1.0.0", map[string]string{"x": "y"}), ""); !errors.As(err, &se) || se.Status != 409 || se.Code != distribution.CodeVersionConflict {
		t.Fatalf("same version, other bytes: %v", err)
	}
	a2 := pluginArchive(t, "demo", "2.0.0", nil)
	if _, err := pub.Publish(ctx, a2, "beta"); err != nil {
		t.Fatal(err)
	}

	rel, err := anon.Resolve(ctx, distribution.ResolveQuery{PluginID: "demo"})
	if err != nil || rel.ArtifactDigest != archive.Digest(a1) {
		t.Fatalf("resolve stable: %+v %v", rel, err)
	}
	rel, err = anon.Resolve(ctx, distribution.ResolveQuery{PluginID: "demo", Channel: "beta"})
	if err != nil || rel.Version != "2.0.0" {
		t.Fatalf("resolve beta: %+v %v", rel, err)
	}
	rel, err = anon.Resolve(ctx, distribution.ResolveQuery{ReleaseID: "demo@1.0.0"})
	if err != nil || rel.Version != "1.0.0" {
		t.Fatalf("resolve by release: %+v %v", rel, err)
	}
	art, err := anon.Download(ctx, rel.ArtifactDigest)
	if err != nil {
		t.Fatal(err)
	}
	if art.Package.Name != "demo" || !bytes.Equal(art.Bytes, a1) || string(art.Snapshot.Files["bin/tool"]) != "#!/bin/sh\n" {
		t.Fatalf("download: %+v", art)
	}

	cat, err := anon.Catalog(ctx)
	if err != nil || len(cat.Plugins) != 1 || cat.Plugins[0].Channels["beta"] != "demo@2.0.0" || len(cat.Plugins[0].Releases) != 2 {
		t.Fatalf("catalog: %+v %v", cat, err)
	}

	// Yank: hidden from the channel, still resolvable by ID and downloadable.
	if _, err := pub.Yank(ctx, "demo@2.0.0", true); err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Resolve(ctx, distribution.ResolveQuery{PluginID: "demo", Channel: "beta"}); !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("yanked channel: %v", err)
	}
	if _, err := anon.Download(ctx, archive.Digest(a2)); err != nil {
		t.Fatalf("a yanked artifact must stay downloadable: %v", err)
	}
	if _, err := pub.SetChannel(ctx, distribution.ChannelUpdate{PluginID: "demo", Channel: "beta", ReleaseID: "demo@2.0.0"}); !errors.As(err, &se) || se.Code != distribution.CodeReleaseYanked {
		t.Fatalf("channel to a yanked release: %v", err)
	}
	if _, err := pub.SetChannel(ctx, distribution.ChannelUpdate{PluginID: "demo", Channel: "beta", ReleaseID: "demo@1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if rel, err := anon.Resolve(ctx, distribution.ResolveQuery{PluginID: "demo", Channel: "beta"}); err != nil || rel.Version != "1.0.0" {
		t.Fatalf("moved channel: %+v %v", rel, err)
	}

	// A versionless plugin is a release per artifact.
	v0 := pluginArchive(t, "bare", "", nil)
	res, err = pub.Publish(ctx, v0, "")
	if err != nil || res.Release.ID != "bare@"+archive.Digest(v0) {
		t.Fatalf("versionless: %+v %v", res, err)
	}
}

func TestInstallations(t *testing.T) {
	ctx := context.Background()
	ts := newTestServer(t, Config{}, true)
	if _, err := client(ts.URL, publishToken).Publish(ctx, pluginArchive(t, "demo", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	c := client(ts.URL, readToken)
	in := distribution.Installation{ID: "host-1/demo", PluginID: "demo", ReleaseID: "demo@1.0.0",
		ArtifactDigest: "sha256:" + strings.Repeat("a", 64), Status: "installed", Host: "host-1"}
	var got distribution.Installation
	if err := c.Request(ctx, http.MethodPost, "/installations", in, &got); err != nil || got.ReportedAt.IsZero() {
		t.Fatalf("report: %+v %v", got, err)
	}
	var list distribution.Installations
	if err := c.Request(ctx, http.MethodGet, "/installations", nil, &list); err != nil || len(list.Installations) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	in.Status = "exploded"
	var se *distribution.StatusError
	if err := c.Request(ctx, http.MethodPost, "/installations", in, nil); !errors.As(err, &se) || se.Status != 400 {
		t.Fatalf("bad status: %v", err)
	}
	for _, p := range []string{"installations", "//evil.example/x", "/../catalog", "/a/./b", "/catalog?x=1", "/x#y", "/%2e%2e/catalog", "/a\\b"} {
		if err := c.Request(ctx, http.MethodGet, p, nil, nil); !errors.Is(err, distribution.ErrInvalidPath) {
			t.Errorf("Request(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
}

// TestAuthMatrix checks every role against a read and a publish, on a
// registry with anonymous reads and on one that needs a read token.
func TestAuthMatrix(t *testing.T) {
	body := pluginArchive(t, "auth", "1.0.0", nil)
	for _, private := range []bool{false, true} {
		ts := newTestServer(t, Config{}, private)
		readWant := map[string]int{"": 200, readToken: 200, publishToken: 200, "wrong": 401}
		if private {
			readWant[""] = 401
		}
		publishWant := map[string]int{"": 401, readToken: 403, publishToken: 201, "wrong": 401}
		for _, tok := range []string{"", readToken, "wrong", publishToken} {
			if got, _, _ := do(t, "GET", ts.URL+"/plugin-protocol/v1/catalog", tok, "", nil); got != readWant[tok] {
				t.Errorf("private=%v token=%q catalog: %d, want %d", private, tok, got, readWant[tok])
			}
			got, _, h := do(t, "POST", ts.URL+"/plugin-protocol/v1/publish", tok, "application/gzip", bytes.NewReader(body))
			if got != publishWant[tok] {
				t.Errorf("private=%v token=%q publish: %d, want %d", private, tok, got, publishWant[tok])
			}
			if got == 401 && h.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		}
		if got, _, _ := do(t, "GET", ts.URL+"/plugin-protocol/v1/catalog", "", "", nil); private && got != 401 {
			t.Errorf("anonymous read of a private registry: %d", got)
		}
	}
}

// TestRejectedRequests sends malformed, unauthorized and oversized requests
// and checks each status and error code.
func TestRejectedRequests(t *testing.T) {
	ts := newTestServer(t, Config{Limits: archive.Limits{MaxArchiveBytes: 4096}}, false)
	ok := pluginArchive(t, "good", "1.0.0", nil)
	if st, _, _ := do(t, "POST", ts.URL+"/plugin-protocol/v1/publish", publishToken, "", bytes.NewReader(ok)); st != 201 {
		t.Fatalf("setup publish: %d", st)
	}
	v1 := ts.URL + "/plugin-protocol/v1"
	digest := archive.Digest(ok)
	rejected := pluginArchive(t, "Not A Name", "1.0.0", nil)
	big := pluginArchive(t, "big", "1.0.0", map[string]string{"blob": randomText(8192)})
	cases := []struct {
		method, url, token, ctype string
		body                      []byte
		status                    int
		code                      string
	}{
		{"GET", v1 + "/resolve", "", "", nil, 400, distribution.CodeBadRequest},
		{"GET", v1 + "/resolve?plugin_id=good&colour=red", "", "", nil, 400, distribution.CodeUnknownParameter},
		{"GET", v1 + "/resolve?plugin_id=good&plugin_id=good", "", "", nil, 400, distribution.CodeBadRequest},
		{"GET", v1 + "/resolve?plugin_id=good;channel=stable", "", "", nil, 400, distribution.CodeBadRequest},
		{"GET", v1 + "/resolve?plugin_id=%zz", "", "", nil, 400, distribution.CodeBadRequest},
		{"GET", v1 + "/resolve?plugin_id=Good", "", "", nil, 400, distribution.CodeBadRequest},
		{"GET", v1 + "/resolve?plugin_id=good&channel=stable&release_id=good@1.0.0", "", "", nil, 400, distribution.CodeBadRequest},
		{"GET", v1 + "/resolve?plugin_id=good&channel=nightly", "", "", nil, 404, distribution.CodeNotFound},
		{"GET", v1 + "/resolve?plugin_id=other&release_id=good@1.0.0", "", "", nil, 404, distribution.CodeNotFound},
		{"GET", v1 + "/catalog?page=2", "", "", nil, 400, distribution.CodeUnknownParameter},
		{"GET", v1 + "/artifacts/sha256:ABC", "", "", nil, 400, distribution.CodeInvalidDigest},
		{"GET", v1 + "/artifacts/" + strings.ToUpper(digest), "", "", nil, 400, distribution.CodeInvalidDigest},
		{"GET", v1 + "/artifacts/sha256:" + strings.Repeat("0", 64), "", "", nil, 404, distribution.CodeNotFound},
		{"GET", v1 + "/artifacts/" + digest + "?x=1", "", "", nil, 400, distribution.CodeUnknownParameter},
		{"GET", v1 + "/artifacts/%73ha256:" + digest[7:], "", "", nil, 400, distribution.CodeBadRequest},
		{"GET", v1 + "//catalog", "", "", nil, 400, distribution.CodeBadRequest},
		{"GET", v1 + "/nope", "", "", nil, 404, distribution.CodeNotFound},
		{"GET", ts.URL + "/catalog", "", "", nil, 404, distribution.CodeNotFound},
		{"DELETE", v1 + "/catalog", "", "", nil, 405, distribution.CodeMethodNotAllowed},
		{"GET", v1 + "/publish", publishToken, "", nil, 405, distribution.CodeMethodNotAllowed},
		{"POST", v1 + "/publish", "", "", ok, 401, distribution.CodeUnauthorized},
		{"POST", v1 + "/publish", "nope", "", ok, 401, distribution.CodeUnauthorized},
		{"POST", v1 + "/publish?channel=Bad!", publishToken, "", ok, 400, distribution.CodeBadRequest},
		{"POST", v1 + "/publish?tag=x", publishToken, "", ok, 400, distribution.CodeUnknownParameter},
		{"POST", v1 + "/publish", publishToken, "", []byte("not gzip"), 400, distribution.CodeInvalidArchive},
		{"POST", v1 + "/publish", publishToken, "", nil, 400, distribution.CodeInvalidArchive},
		{"POST", v1 + "/publish", publishToken, "", big, 413, distribution.CodeTooLarge},
		{"POST", v1 + "/publish", publishToken, "", rejected, 422, distribution.CodePluginRejected},
		{"POST", v1 + "/publish", publishToken, "", pluginArchive(t, "good", "1.0.0", map[string]string{"x": "1"}), 409, distribution.CodeVersionConflict},
		{"PUT", v1 + "/channels", publishToken, "text/plain", []byte(`{}`), 415, distribution.CodeUnsupportedMedia},
		{"PUT", v1 + "/channels", publishToken, "application/json", []byte(`{"plugin_id":"good","channel":"x","release_id":"good@1.0.0","extra":1}`), 400, distribution.CodeBadRequest},
		{"PUT", v1 + "/channels", publishToken, "application/json", []byte(`{"plugin_id":"good","channel":"x","release_id":"good@1.0.0"} {}`), 400, distribution.CodeBadRequest},
		{"PUT", v1 + "/channels", publishToken, "application/json", []byte(`{"plugin_id":"good","channel":"x","release_id":"good@9"}`), 404, distribution.CodeNotFound},
		{"PUT", v1 + "/channels", readToken, "application/json", []byte(`{}`), 403, distribution.CodeForbidden},
		{"POST", v1 + "/yank", publishToken, "application/json", []byte(`{"release_id":"` + strings.Repeat("a", 70000) + `"}`), 413, distribution.CodeTooLarge},
		{"POST", v1 + "/installations", "", "application/json", []byte(`{"id":"x"}`), 401, distribution.CodeUnauthorized},
		{"POST", v1 + "/installations", readToken, "application/json", []byte(`{"id":"x"}`), 400, distribution.CodeBadRequest},
	}
	for _, c := range cases {
		var body io.Reader
		if c.body != nil {
			body = bytes.NewReader(c.body)
		}
		st, code, _ := do(t, c.method, c.url, c.token, c.ctype, body)
		if st != c.status || code != c.code {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, strings.TrimPrefix(c.url, ts.URL), st, code, c.status, c.code)
		}
	}
	// The diagnostics of a rejected plugin reach the client.
	var se *distribution.StatusError
	_, err := client(ts.URL, publishToken).Publish(context.Background(), rejected, "")
	if !errors.As(err, &se) || se.Status != 422 || len(se.Diagnostics) == 0 {
		t.Fatalf("rejected publish: %v", err)
	}
}

func randomText(n int) string {
	var b strings.Builder
	x := uint32(2463534242)
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		fmt.Fprintf(&b, "%08x", x)
	}
	return b.String()
}

func TestArtifactHTTPSemantics(t *testing.T) {
	ts := newTestServer(t, Config{}, false)
	a := pluginArchive(t, "cache", "1.0.0", map[string]string{"data": randomText(4000)})
	if _, err := client(ts.URL, publishToken).Publish(context.Background(), a, ""); err != nil {
		t.Fatal(err)
	}
	url := ts.URL + "/plugin-protocol/v1/artifacts/" + archive.Digest(a)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	if !bytes.Equal(b, a) || etag != `"`+archive.Digest(a)+`"` || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("GET: etag %q cache %q", etag, resp.Header.Get("Cache-Control"))
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Range", "bytes=10-19")
	resp, _ = http.DefaultClient.Do(req)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 206 || !bytes.Equal(b, a[10:20]) {
		t.Fatalf("Range: %d %d bytes", resp.StatusCode, len(b))
	}
	req, _ = http.NewRequest("GET", url, nil)
	req.Header.Set("If-None-Match", etag)
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}
	resp, _ = http.Head(url)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(a)) {
		t.Fatalf("HEAD: %d %d", resp.StatusCode, resp.ContentLength)
	}
}

// TestConcurrentPublishes runs checkConcurrentPublishes in process.
func TestConcurrentPublishes(t *testing.T) {
	ts := newTestServer(t, Config{}, false)
	checkConcurrentPublishes(t, client(ts.URL, publishToken))
}

// checkConcurrentPublishes publishes 20 different plugins and 20 copies of
// one version at once: every plugin lands, the shared version is created
// exactly once, and the others are idempotent successes. Forty bodies at
// once exceed the default upload slots (16), so a publish answered 503
// busy is sent again after a pause, as a client honouring Retry-After
// would: admission is upload_test.go's subject, not this one's.
func checkConcurrentPublishes(t *testing.T, c *distribution.Client) {
	ctx := context.Background()
	publish := func(archive []byte) (*distribution.PublishResult, error) {
		for range 100 {
			res, err := c.Publish(ctx, archive, "")
			if st, code := statusOf(err); st != http.StatusServiceUnavailable || code != distribution.CodeBusy {
				return res, err
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil, errors.New("still busy after 100 tries")
	}
	same := pluginArchive(t, "shared", "1.0.0", nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[bool]int{}
	for i := range 20 {
		distinct := pluginArchive(t, fmt.Sprintf("p%02d", i), "1.0.0", nil)
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := publish(distinct); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			res, err := publish(same)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			statuses[res.Created]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	cat, err := c.Catalog(ctx)
	if err != nil || len(cat.Plugins) != 21 || statuses[true] != 1 || statuses[false] != 19 {
		t.Fatalf("plugins=%d created=%v err=%v", len(cat.Plugins), statuses, err)
	}
}

// TestReleaseIDSquatting: a manifest version of
// "sha256:<hex>" took the release ID reserved for the versionless archive
// with that digest, so the real one could never be published.
func TestReleaseIDSquatting(t *testing.T) {
	ctx := context.Background()
	ts := newTestServer(t, Config{}, false)
	c := client(ts.URL, publishToken)
	bare := pluginArchive(t, "kv", "", nil)
	squat := pluginArchive(t, "kv", archive.Digest(bare), nil)
	if st, code := statusOf(func() error { _, err := c.Publish(ctx, squat, ""); return err }()); st != 422 || code != distribution.CodePluginRejected {
		t.Fatalf("a version posing as a digest: %d %s", st, code)
	}
	res, err := c.Publish(ctx, bare, "")
	if err != nil || res.Release.ID != "kv@"+archive.Digest(bare) {
		t.Fatalf("the versionless release: %+v %v", res, err)
	}
	for _, v := range []string{"sha512:abcd", "1:2"} {
		if st, _ := statusOf(func() error { _, err := c.Publish(ctx, pluginArchive(t, "kv", v, nil), ""); return err }()); st != 422 {
			t.Errorf("version %q: %d, want 422", v, st)
		}
	}
}

// TestJSONHeadersStayPerResponse: the header values every JSON answer
// shares cannot be changed through one response's header: a value added
// to one answer is not in the next.
func TestJSONHeadersStayPerResponse(t *testing.T) {
	first := httptest.NewRecorder()
	writeJSONBytes(first, http.StatusOK, []byte("{}\n"))
	first.Header().Add("Cache-Control", "private")
	first.Header().Add("Content-Type", "text/plain")
	second := httptest.NewRecorder()
	writeJSONBytes(second, http.StatusOK, []byte("{}\n"))
	want := http.Header{
		"Content-Type":           {"application/json"},
		"Cache-Control":          {"no-store"},
		"X-Content-Type-Options": {"nosniff"},
	}
	if got := second.Result().Header; !reflect.DeepEqual(got, want) {
		t.Fatalf("second answer's header = %v, want %v", got, want)
	}
	if got := first.Header()["Cache-Control"]; !reflect.DeepEqual(got, []string{"no-store", "private"}) {
		t.Fatalf("first answer's Cache-Control = %q", got)
	}
}

// TestMethodNotAllowedListsMethods: every endpoint refuses a method it
// does not take with a 405 whose Allow header lists the ones it takes,
// and a path below the prefix that is no endpoint is a 404.
func TestMethodNotAllowedListsMethods(t *testing.T) {
	ts := newTestServer(t, Config{}, false)
	v1 := ts.URL + "/plugin-protocol/v1"
	for path, allow := range map[string]string{
		"/catalog":       "GET, HEAD",
		"/resolve":       "GET, HEAD",
		"/installations": "GET, HEAD, POST",
		"/publish":       "POST",
		"/channels":      "PUT",
		"/yank":          "POST",
		"/admin/owners":  "GET, HEAD, POST",
		"/artifacts/sha256:" + strings.Repeat("0", 64): "GET, HEAD",
	} {
		st, code, h := do(t, "PATCH", v1+path, "", "", nil)
		if st != http.StatusMethodNotAllowed || code != distribution.CodeMethodNotAllowed || h.Get("Allow") != allow {
			t.Errorf("PATCH %s: %d %s, Allow %q; want 405 with Allow %q", path, st, code, h.Get("Allow"), allow)
		}
	}
	for _, path := range []string{"/artifacts", "/resolve/", "/catalogs", ""} {
		if st, code, _ := do(t, "GET", v1+path, "", "", nil); st != http.StatusNotFound || code != distribution.CodeNotFound {
			t.Errorf("GET %s: %d %s, want 404 not_found", path, st, code)
		}
	}
}

// TestParseQueryAllowsAtMostMaxParams: an endpoint that would take more
// parameters than a parsed query holds fails at its first request, whatever
// the request, not only when a client sends them all.
func TestParseQueryAllowsAtMostMaxParams(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("parseQuery took more allowed keys than maxParams")
		}
	}()
	parseQuery("", "a", "b", "c", "d")
}
