package registry

// End-to-end tests against a real `plugkit serve` process on 127.0.0.1,
// driven by the distribution client and by the plugkit binary's client
// verbs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/internal/testbin"
	"github.com/plugkit/plugkit/internal/testservice"
)

// TestMain removes the plugkit binary the tests built once they are done.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// plugkitBin is the plugkit binary, built once for all the tests.
func plugkitBin(t testing.TB) string {
	return testbin.Plugkit(t)
}

// serverProc is a running `plugkit serve`.
type serverProc struct {
	*testservice.Process
	url string
}

// log is everything the server has written so far (stdout and stderr).
func (p *serverProc) log() string {
	b, err := os.ReadFile(p.Log.Name())
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// startServe starts plugkit serve on a free loopback port over data, with
// the test tokens in the environment, and waits for its address.
func startServe(t *testing.T, data string, args ...string) *serverProc {
	t.Helper()
	return startServeEnv(t, data, []string{"PLUGKIT_PUBLISH_TOKENS=" + publishToken}, args...)
}

// startServeEnv is startServe with the token variables of env instead.
// An empty data gives no --data (a replica with its storage elsewhere).
func startServeEnv(t *testing.T, data string, env []string, args ...string) *serverProc {
	t.Helper()
	if data != "" {
		args = append([]string{"--data", data}, args...)
	}
	cmd := exec.Command(plugkitBin(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "PLUGKIT_PUBLISH_TOKENS=", "PLUGKIT_READ_TOKENS=", "PLUGKIT_ADMIN_TOKENS=")
	cmd.Env = append(cmd.Env, env...)
	p, url := testservice.StartServe(t, cmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", p.LogText())
		}
	})
	return &serverProc{Process: p, url: url}
}

// plugkit runs the binary's client verbs and returns stdout, stderr and the
// exit code.
func plugkit(t *testing.T, token string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(plugkitBin(t), args...)
	cmd.Env = append(os.Environ(), "PLUGKIT_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// writePlugin writes a small valid plugin directory.
func writePlugin(t *testing.T, name, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	files := map[string]string{
		"plugin.json":           fmt.Sprintf(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": %q, "version": %q, "description": "e2e"}`, name, version),
		"skills/hello/SKILL.md": "---\nname: hello\ndescription: Say hello.\n---\nSay hello.\n",
		"bin/run":               "#!/bin/sh\necho hi\n",
	}
	for p, b := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasPrefix(p, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(b), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestE2ECLI(t *testing.T) {
	srv := startServe(t, t.TempDir())
	reg := "--registry=" + srv.url
	src := writePlugin(t, "e2e-demo", "1.0.0")

	if _, stderr, code := plugkit(t, "", "publish", src, reg); code != 1 || !strings.Contains(stderr, "this registry needs a token") {
		t.Fatalf("anonymous publish: exit %d %s", code, stderr)
	}
	if _, stderr, code := plugkit(t, "wrong", "publish", src, reg); code != 1 || !strings.Contains(stderr, "does not accept this token") {
		t.Fatalf("wrong-token publish: exit %d %s", code, stderr)
	}
	out, stderr, code := plugkit(t, publishToken, "publish", src, reg, "--json")
	if code != 0 || !strings.Contains(out, `"created": true`) {
		t.Fatalf("publish: exit %d %s %s", code, out, stderr)
	}
	if out, _, code := plugkit(t, publishToken, "publish", src, reg); code != 0 || !strings.Contains(out, "already published") {
		t.Fatalf("republish: exit %d %s", code, out)
	}
	os.WriteFile(filepath.Join(src, "extra.txt"), []byte("changed"), 0o644)
	if _, stderr, code := plugkit(t, publishToken, "publish", src, reg, "--channel", "beta"); code != 1 || !strings.Contains(stderr, "e2e-demo@1.0.0 is already published with other bytes") {
		t.Fatalf("conflicting publish: exit %d %s", code, stderr)
	}
	os.WriteFile(filepath.Join(src, "plugin.json"), []byte(`{"name": "Bad Name"}`), 0o644)
	if _, stderr, code := plugkit(t, publishToken, "publish", src, reg); code != 1 || stderr == "" {
		t.Fatalf("rejected plugin: exit %d %s", code, stderr)
	}

	if out, _, code := plugkit(t, "", "catalog", reg); code != 0 || !strings.Contains(out, "e2e-demo\tstable=1.0.0") {
		t.Fatalf("catalog: exit %d %q", code, out)
	}
	if out, _, code := plugkit(t, "", "catalog", reg, "--json"); code != 0 || !strings.Contains(out, `"artifact_digest"`) {
		t.Fatalf("catalog --json: exit %d %q", code, out)
	}
	out, _, code = plugkit(t, "", "resolve", "e2e-demo", reg, "--json")
	if code != 0 || !strings.Contains(out, `"id": "e2e-demo@1.0.0"`) {
		t.Fatalf("resolve: exit %d %q", code, out)
	}
	if out, _, code := plugkit(t, "", "resolve", "e2e-demo", reg, "--release", "e2e-demo@1.0.0"); code != 0 || !strings.Contains(out, "version: 1.0.0") {
		t.Fatalf("resolve --release: exit %d %q", code, out)
	}
	if _, stderr, code := plugkit(t, "", "resolve", "e2e-demo", reg, "--channel", "beta"); code != 1 || !strings.Contains(stderr, "no release of e2e-demo on channel beta (channels: stable)") {
		t.Fatalf("resolve of an empty channel: exit %d %s", code, stderr)
	}

	dst := filepath.Join(t.TempDir(), "fetched")
	if out, stderr, code := plugkit(t, "", "fetch", "e2e-demo", dst, reg); code != 0 {
		t.Fatalf("fetch: exit %d %s %s", code, out, stderr)
	}
	if fi, err := os.Stat(filepath.Join(dst, "bin/run")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("fetched bin/run: %v %v", fi, err)
	}
	if _, _, code := plugkit(t, "", "fetch", "e2e-demo", dst, reg); code != 2 {
		t.Fatalf("fetch into a non-empty dir: exit %d, want 2", code)
	}
	rel, err := client(srv.url, "").Resolve(context.Background(), distribution.ResolveQuery{PluginID: "e2e-demo"})
	if err != nil {
		t.Fatal(err)
	}
	pinned := filepath.Join(t.TempDir(), "pinned")
	if out, _, code := plugkit(t, "", "fetch", rel.ArtifactDigest, pinned, reg, "--json"); code != 0 || !strings.Contains(out, `"files": 3`) {
		t.Fatalf("fetch by digest: exit %d %s", code, out)
	}
}

// TestE2EPrivateRegistry checks the auth matrix of a registry whose reads
// need a token.
func TestE2EPrivateRegistry(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "readers")
	os.WriteFile(tokens, []byte("# readers\n"+readToken+"\n"), 0o600)
	srv := startServe(t, t.TempDir(), "--read-token-file", tokens)
	reg := "--registry=" + srv.url
	src := writePlugin(t, "private", "1.0.0")
	if _, stderr, code := plugkit(t, readToken, "publish", src, reg); code != 1 || !strings.Contains(stderr, "needs a publisher token") {
		t.Fatalf("reader publish: exit %d %s", code, stderr)
	}
	if _, _, code := plugkit(t, publishToken, "publish", src, reg); code != 0 {
		t.Fatalf("publisher publish: exit %d", code)
	}
	for tok, want := range map[string]int{"": 1, "wrong": 1, readToken: 0, publishToken: 0} {
		if _, stderr, code := plugkit(t, tok, "catalog", reg); code != want {
			t.Errorf("catalog with token %q: exit %d, want %d (%s)", tok, code, want, stderr)
		}
	}
	if strings.Contains(srv.log(), readToken) || strings.Contains(srv.log(), publishToken) {
		t.Fatal("a token reached the server log")
	}
}

// TestE2ETamperedArtifact serves, under a digest, the bytes of another
// valid plugin: the client must refuse them by digest, before it unpacks
// or loads anything, and fetch must leave no directory.
func TestE2ETamperedArtifact(t *testing.T) {
	honest := pluginArchive(t, "honest", "1.0.0", nil)
	evil := pluginArchive(t, "evil", "6.6.6", nil)
	digest := archive.Digest(honest)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/plugin-protocol/v1/artifacts/"+digest {
			w.Write(evil)
			return
		}
		http.NotFound(w, r)
	}))
	defer ts.Close()
	_, err := client(ts.URL, "").Download(context.Background(), digest)
	if !errors.Is(err, distribution.ErrDigestMismatch) {
		t.Fatalf("Download of tampered bytes: %v, want ErrDigestMismatch", err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if _, stderr, code := plugkit(t, "", "fetch", digest, dst, "--registry", ts.URL); code != 1 || !strings.Contains(stderr, "digest mismatch") {
		t.Fatalf("fetch of tampered bytes: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("fetch left %s behind: %v", dst, err)
	}
}

func TestE2EConcurrentPublishes(t *testing.T) {
	srv := startServe(t, t.TempDir())
	checkConcurrentPublishes(t, client(srv.url, publishToken))
}

// TestE2EKillDuringPublish kills the server with SIGKILL while one publish
// is halfway through its body and others are in flight, restarts it on the
// same data, and checks that the state is consistent: every release the
// catalog shows resolves and downloads with a verified digest, every publish
// that was acknowledged survived, and the interrupted one left nothing that
// resolve can see.
func TestE2EKillDuringPublish(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	srv := startServe(t, data)
	c := client(srv.url, publishToken)
	if _, err := c.Publish(ctx, pluginArchive(t, "before", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}

	// A publish whose body stops halfway.
	big := pluginArchive(t, "interrupted", "1.0.0", map[string]string{"data": randomText(1 << 20)})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", srv.url+"/plugin-protocol/v1/publish", pr)
	req.Header.Set("Authorization", "Bearer "+publishToken)
	req.ContentLength = int64(len(big))
	halfway := make(chan struct{})
	go func() {
		pw.Write(big[:len(big)/2])
		close(halfway)
		time.Sleep(time.Minute) // never finishes: the server dies first
		pw.Close()
	}()
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-halfway

	// And a burst of small publishes, killed wherever they are.
	var mu sync.Mutex
	acked := map[string]string{}
	var wg sync.WaitGroup
	for i := range 12 {
		a := pluginArchive(t, fmt.Sprintf("burst%02d", i), "1.0.0", nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 3 * time.Millisecond)
			if res, err := c.Publish(ctx, a, ""); err == nil {
				mu.Lock()
				acked[res.Release.PluginID] = res.Release.ArtifactDigest
				mu.Unlock()
			}
		}()
	}
	time.Sleep(15 * time.Millisecond)
	srv.Cmd.Process.Signal(syscall.SIGKILL)
	srv.Wait()
	wg.Wait()
	pw.Close()

	srv = startServe(t, data)
	c = client(srv.url, publishToken)
	cat, err := c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range cat.Plugins {
		seen[p.ID] = true
		if p.ID == "interrupted" {
			t.Fatal("the interrupted publish is in the catalog")
		}
		rel, err := c.Resolve(ctx, distribution.ResolveQuery{PluginID: p.ID})
		if err != nil {
			t.Fatalf("%s is in the catalog but does not resolve: %v", p.ID, err)
		}
		if _, err := c.Download(ctx, rel.ArtifactDigest); err != nil {
			t.Fatalf("%s resolves but does not download: %v", p.ID, err)
		}
	}
	if !seen["before"] {
		t.Fatal("a release published before the crash is gone")
	}
	for id := range acked {
		if !seen[id] {
			t.Fatalf("acknowledged publish of %s is gone", id)
		}
	}
	var se *distribution.StatusError
	if _, err := c.Resolve(ctx, distribution.ResolveQuery{PluginID: "interrupted"}); !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("resolve of the interrupted plugin: %v", err)
	}
	if _, err := c.Download(ctx, archive.Digest(big)); !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("download of the interrupted artifact: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Join(data, "blobs", "tmp")); len(left) != 0 {
		t.Fatalf("temporary blobs survived the restart: %d", len(left))
	}
	if res, err := c.Publish(ctx, big, ""); err != nil || !res.Created {
		t.Fatalf("publish after restart: %+v %v", res, err)
	}
	t.Logf("acknowledged before the kill: %d of 12", len(acked))
}

// TestE2ELimits sends oversized and malformed requests to the process.
func TestE2ELimits(t *testing.T) {
	srv := startServe(t, t.TempDir())
	v1 := srv.url + "/plugin-protocol/v1"
	huge := bytes.NewReader(make([]byte, archive.DefaultMaxArchiveBytes+1))
	if st, code, _ := do(t, "POST", v1+"/publish", publishToken, "application/gzip", huge); st != 413 || code != distribution.CodeTooLarge {
		t.Fatalf("oversized publish: %d %s", st, code)
	}
	req, _ := http.NewRequest("GET", v1+"/catalog", nil)
	req.Header.Set("X-Padding", strings.Repeat("a", 64<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("oversized header: %d", resp.StatusCode)
	}
	for url, want := range map[string]int{
		v1 + "/resolve?plugin_id=x&bogus=1": 400,
		v1 + "/artifacts/md5:abc":           400,
		v1 + "/nothing":                     404,
	} {
		if st, _, _ := do(t, "GET", url, "", "", nil); st != want {
			t.Errorf("GET %s: %d, want %d", url, st, want)
		}
	}
}

// TestE2EOwnership runs against plugkit serve: named
// tokens from the environment, B refused on A's plugin, an admin granting
// it with plugkit owners.
func TestE2EOwnership(t *testing.T) {
	srv := startServeEnv(t, t.TempDir(), []string{
		"PLUGKIT_PUBLISH_TOKENS=alice=a-secret,bob=b-secret",
		"PLUGKIT_ADMIN_TOKENS=root=root-secret",
	})
	reg := "--registry=" + srv.url
	if _, stderr, code := plugkit(t, "a-secret", "publish", writePlugin(t, "alpha", "1.0.0"), reg); code != 0 {
		t.Fatal(stderr)
	}
	for _, args := range [][]string{
		{"publish", writePlugin(t, "alpha", "6.6.6")},
		{"channel", "set", "alpha", "stable", "1.0.0"},
		{"yank", "alpha@1.0.0"},
	} {
		if _, stderr, code := plugkit(t, "b-secret", append(args, reg)...); code != 1 || !strings.Contains(stderr, "alpha belongs to other publishers") {
			t.Errorf("bob: plugkit %s: exit %d %s", strings.Join(args, " "), code, stderr)
		}
	}
	if out, stderr, code := plugkit(t, "root-secret", "owners", "grant", "alpha", "bob", reg); code != 0 || out != "alpha: owners: alice, bob\n" {
		t.Fatalf("grant: exit %d %q %s", code, out, stderr)
	}
	if _, stderr, code := plugkit(t, "b-secret", "publish", writePlugin(t, "alpha", "1.1.0"), reg); code != 0 {
		t.Fatalf("bob after the grant: %s", stderr)
	}
	log := srv.log()
	if !strings.Contains(log, "identities=alice,bob") || strings.Contains(log, "a-secret") || strings.Contains(log, "root-secret") {
		t.Fatalf("server log: identities not logged, or a secret is:\n%s", log)
	}
}

// TestE2ESlowUploads runs against plugkit serve: uploads
// that drip hold neither a publish slot nor the server; beyond
// --max-uploads a publish gets 503 with Retry-After at once, and the
// drippers are cut off below the minimum rate.
func TestE2ESlowUploads(t *testing.T) {
	data := t.TempDir()
	srv := startServe(t, data, "--max-uploads", "2", "--max-publishes", "1",
		"--min-upload-rate", "1024", "--upload-grace", "2s")
	dripped := make(chan error, 2)
	for range 2 {
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /plugin-protocol/v1/publish HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 100000\r\n\r\n", publishToken)
		go func() {
			for {
				if _, err := conn.Write([]byte{0}); err != nil {
					dripped <- err
					return
				}
				resp, err := readStatus(conn)
				if err == nil {
					dripped <- fmt.Errorf("status %d", resp)
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
	}
	for range 500 {
		if entries, _ := os.ReadDir(filepath.Join(data, "uploads")); len(entries) == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	st, code, h := do(t, "POST", srv.url+"/plugin-protocol/v1/publish", publishToken, "application/gzip",
		bytes.NewReader(pluginArchive(t, "late", "1.0.0", nil)))
	if st != 503 || code != distribution.CodeBusy || h.Get("Retry-After") == "" {
		t.Fatalf("publish with the upload slots taken: %d %s %q", st, code, h.Get("Retry-After"))
	}
	for range 2 {
		select {
		case err := <-dripped:
			if !strings.Contains(err.Error(), "408") && !isClosed(err) {
				t.Fatalf("a dripping upload ended with %v, want 408 or a closed connection", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a dripping upload was never cut off")
		}
	}
	if _, err := client(srv.url, publishToken).Publish(context.Background(), pluginArchive(t, "after", "1.0.0", nil), ""); err != nil {
		t.Fatalf("publish after the drippers: %v", err)
	}
}

// readStatus reads an HTTP status line if one is waiting, within a short
// deadline.
func readStatus(conn net.Conn) (int, error) {
	conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	defer conn.SetReadDeadline(time.Time{})
	var proto string
	var status int
	if _, err := fmt.Fscan(conn, &proto, &status); err != nil {
		return 0, err
	}
	return status, nil
}

func isClosed(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)
}

// TestE2EGarbageCollection: plugkit serve gc removes what a publish killed
// between its blob and its commit left, while the server runs.
func TestE2EGarbageCollection(t *testing.T) {
	data := t.TempDir()
	srv := startServe(t, data)
	kept := pluginArchive(t, "kept", "1.0.0", nil)
	if _, err := client(srv.url, publishToken).Publish(context.Background(), kept, ""); err != nil {
		t.Fatal(err)
	}
	orphan := pluginArchive(t, "orphan", "1.0.0", nil)
	hex := archive.Digest(orphan)[7:]
	path := filepath.Join(data, "blobs", "sha256", hex[:2], hex)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, orphan, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(path, old, old)
	out, stderr, code := plugkit(t, "", "serve", "gc", "--data", data)
	if code != 0 || !strings.Contains(out, "removed "+archive.Digest(orphan)) {
		t.Fatalf("serve gc: exit %d %q %s", code, out, stderr)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the orphan is still there")
	}
	if _, err := client(srv.url, "").Download(context.Background(), archive.Digest(kept)); err != nil {
		t.Fatalf("the published artifact after gc: %v", err)
	}
}
