package registry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/snapshot"

	"github.com/plugkit/plugkit/registry/storage"
)

// Tokens of the test registries.
const (
	publishToken = "publisher-secret"
	readToken    = "reader-secret"
)

// pluginArchive packs a minimal valid plugin; extra files are added as is.
func pluginArchive(t testing.TB, name, version string, extra map[string]string) []byte {
	t.Helper()
	manifest := fmt.Sprintf(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": %q, "description": "the %s plugin"`, name, name)
	if version != "" {
		manifest += fmt.Sprintf(`, "version": %q`, version)
	}
	files := map[string]string{"plugin.json": manifest + "}"}
	for p, b := range extra {
		files[p] = b
	}
	return packFiles(t, files)
}

// newTestServer starts an in-process registry on 127.0.0.1 with fresh
// storage and, unless cfg names its own, both test tokens. When private,
// reading needs a token.
func newTestServer(t testing.TB, cfg Config, private bool) *httptest.Server {
	ts, _ := newTestServerWith(t, cfg, private)
	return ts
}

// newTestServerWith is newTestServer that also returns the Server.
func newTestServerWith(t testing.TB, cfg Config, private bool) (*httptest.Server, *Server) {
	t.Helper()
	db, b, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg.Store, cfg.Blobs = db, b
	if cfg.PublishTokens == nil {
		cfg.PublishTokens = []string{publishToken}
	}
	if cfg.ReadTokens == nil {
		cfg.ReadTokens = []string{readToken}
	}
	cfg.AnonymousRead = !private
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return newServerFor(t, s), s
}

func client(url, token string) *distribution.Client {
	// No retries: these tests look at each answer of the server, a 503
	// busy included.
	return &distribution.Client{BaseURL: url, Token: token, HTTPClient: &http.Client{}}
}

// do sends a raw request and returns its status and error code.
func do(t testing.TB, method, url, token, ctype string, body io.Reader) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	code := ""
	if i := strings.Index(string(b), `"code":"`); i >= 0 {
		code = string(b[i+8:])
		code = code[:strings.IndexByte(code, '"')]
	}
	return resp.StatusCode, code, resp.Header
}

// packFiles packs the given files as they are.
func packFiles(t testing.TB, files map[string]string) []byte {
	t.Helper()
	m := map[string][]byte{}
	for p, b := range files {
		m[p] = []byte(b)
	}
	s, err := snapshot.FromFiles(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := archive.Pack(s, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func limitsOf(maxArchive int64) archive.Limits { return archive.Limits{MaxArchiveBytes: maxArchive} }

// newServerFor serves s on 127.0.0.1.
func newServerFor(t testing.TB, s *Server) *httptest.Server {
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}
