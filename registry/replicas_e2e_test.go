package registry

// End-to-end tests of several plugkit serve processes on one storage:
// PostgreSQL and an S3 bucket (versitygw), both real and on 127.0.0.1.
// The same scenarios run on the embedded default, where "both replicas"
// are one process on SQLite and a directory.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/internal/testservice"
)

// crossDeadline bounds how long a cross-replica change may take to show.
const crossDeadline = 5 * time.Second

// replicaTokens are the environment tokens of the replica tests.
var replicaTokens = []string{"PLUGKIT_PUBLISH_TOKENS=alice=a-secret,bob=b-secret", "PLUGKIT_ADMIN_TOKENS=root=root-secret"}

// replicaSet is two servers on one storage; on the embedded default a and
// b are the same process.
type replicaSet struct {
	a, b *serverProc
	// storage are the storage flags, and env the environment, for
	// plugkit serve token; pg is nil on the embedded default.
	storage, env []string
	pg           *testservice.Postgres
	s3           *testservice.S3
	bucket       string
}

// startReplicas starts two replicas on PostgreSQL and S3 with no data
// directory; b answers downloads with a redirect to the bucket.
func startReplicas(t *testing.T) *replicaSet {
	t.Helper()
	pg := testservice.StartPostgres(t)
	s3 := testservice.StartS3(t)
	r := &replicaSet{pg: pg, s3: s3, bucket: s3.NewBucket(t)}
	r.storage = []string{"--database", pg.NewDatabase(t)}
	r.env = append(s3.Env(), "PGPASSWORD="+pg.Password)
	env := append(append([]string{}, r.env...), replicaTokens...)
	blobs := []string{"--blobs", "s3://" + r.bucket + "/registry"}
	r.a = startServeEnv(t, "", env, append(append(r.storage, blobs...), "--access-log")...)
	r.b = startServeEnv(t, "", env, append(append(r.storage, blobs...), "--blobs-redirect", "--access-log")...)
	// No data directory: not even the default one in the working directory.
	if _, err := os.Stat("plugkit-data"); !os.IsNotExist(err) {
		t.Fatalf("a replica with --database and --blobs created a data directory: %v", err)
	}
	return r
}

// startEmbedded starts one server on the embedded default.
func startEmbedded(t *testing.T) *replicaSet {
	t.Helper()
	data := t.TempDir()
	srv := startServeEnv(t, data, replicaTokens)
	return &replicaSet{a: srv, b: srv, storage: []string{"--data", data}}
}

// eventually polls check until it succeeds, for up to crossDeadline, and
// returns how long that took.
func eventually(t *testing.T, what string, check func() error) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		err := check()
		if err == nil {
			d := time.Since(start)
			t.Logf("%s: after %v", what, d.Round(time.Microsecond))
			return d
		}
		if time.Since(start) > crossDeadline {
			t.Fatalf("%s: not within %v: %v", what, crossDeadline, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// status is the HTTP status of a client call's outcome (200 for success).
func status(err error) int {
	s, _ := statusOf(err)
	return s
}

// replicaScenarios run on both setups.
var replicaScenarios = []struct {
	name string
	f    func(*testing.T, *replicaSet)
}{
	{"PublishOnAResolveAndFetchOnB", testPublishAFetchB},
	{"YankOnBRefusedOnA", testYankBRefusedA},
	{"ConcurrentConflictingPublishes", testConflictingPublishes},
	{"OwnershipAcrossReplicas", testOwnershipAcross},
	{"TokenRevokedRefusedEverywhere", testTokenRevoked},
}

func TestE2EReplicasPostgresS3(t *testing.T) {
	r := startReplicas(t)
	for _, sc := range replicaScenarios {
		t.Run(sc.name, func(t *testing.T) { sc.f(t, r) })
	}
}

func TestE2EReplicasEmbedded(t *testing.T) {
	r := startEmbedded(t)
	for _, sc := range replicaScenarios {
		t.Run(sc.name, func(t *testing.T) { sc.f(t, r) })
	}
}

func testPublishAFetchB(t *testing.T, r *replicaSet) {
	ctx := context.Background()
	a, b := client(r.a.url, "a-secret"), client(r.b.url, "a-secret")
	// B looks first, so that its cache holds the miss.
	if _, err := b.Resolve(ctx, distribution.ResolveQuery{PluginID: "fresh"}); status(err) != 404 {
		t.Fatalf("resolve before publish: %v", err)
	}
	art := pluginArchive(t, "fresh", "1.0.0", map[string]string{"data.txt": randomText(200 << 10)})
	res, err := a.Publish(ctx, art, "")
	if err != nil || !res.Created {
		t.Fatalf("publish on A: %+v %v", res, err)
	}
	eventually(t, "publish on A resolves on B", func() error {
		rel, err := b.Resolve(ctx, distribution.ResolveQuery{PluginID: "fresh"})
		if err == nil && rel.ArtifactDigest != archive.Digest(art) {
			return fmt.Errorf("B resolves %s", rel.ArtifactDigest)
		}
		return err
	})
	if _, err := b.Download(ctx, archive.Digest(art)); err != nil {
		t.Fatalf("fetch on B: %v", err)
	}
	if r.pg != nil {
		// B redirects to the bucket; A streams.
		req, _ := http.NewRequest("GET", r.b.url+distribution.Prefix+"/artifacts/"+archive.Digest(art), nil)
		req.Header.Set("Authorization", "Bearer a-secret")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != 307 || !strings.HasPrefix(loc, r.s3.URL+"/"+r.bucket+"/registry/sha256/") {
			t.Fatalf("B with --blobs-redirect: %d %q", resp.StatusCode, loc)
		}
		if got, err := a.Download(ctx, archive.Digest(art)); err != nil || got == nil {
			t.Fatalf("fetch on A (streamed from S3): %v", err)
		}
	}
}

func testYankBRefusedA(t *testing.T, r *replicaSet) {
	ctx := context.Background()
	a, b := client(r.a.url, "a-secret"), client(r.b.url, "a-secret")
	for _, v := range []string{"1.0.0", "2.0.0"} {
		if _, err := a.Publish(ctx, pluginArchive(t, "yanky", v, nil), ""); err != nil {
			t.Fatal(err)
		}
	}
	// A caches its answer, then B yanks.
	for range 3 {
		if rel, err := a.Resolve(ctx, distribution.ResolveQuery{PluginID: "yanky"}); err != nil || rel.Version != "2.0.0" {
			t.Fatalf("resolve on A: %+v %v", rel, err)
		}
	}
	if _, err := b.Yank(ctx, "yanky@2.0.0", true); err != nil {
		t.Fatal(err)
	}
	eventually(t, "yank on B refused on A", func() error {
		if _, err := a.Resolve(ctx, distribution.ResolveQuery{PluginID: "yanky"}); status(err) != 404 {
			return fmt.Errorf("A still resolves the yanked release (%v)", err)
		}
		return nil
	})
	if _, err := b.SetChannel(ctx, distribution.ChannelUpdate{PluginID: "yanky", Channel: "stable", ReleaseID: "yanky@1.0.0"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "channel moved on B seen on A", func() error {
		rel, err := a.Resolve(ctx, distribution.ResolveQuery{PluginID: "yanky"})
		if err == nil && rel.Version != "1.0.0" {
			return fmt.Errorf("A resolves %s", rel.Version)
		}
		return err
	})
}

// testConflictingPublishes sends 20 publishes of one release with 20
// different archives, split across both replicas: exactly one wins, every
// other one is a clean 409, and both replicas then agree on the winner.
func testConflictingPublishes(t *testing.T, r *replicaSet) {
	ctx := context.Background()
	var wg sync.WaitGroup
	codes := make([]int, 20)
	digests := make([]string, 20)
	start := make(chan struct{})
	for i := range codes {
		url := r.a.url
		if i%2 == 1 {
			url = r.b.url
		}
		art := pluginArchive(t, "contested", "1.0.0", map[string]string{"n.txt": fmt.Sprint(i)})
		digests[i] = archive.Digest(art)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := client(url, "a-secret").Publish(ctx, art, "")
			codes[i] = status(err)
			var se *distribution.StatusError
			if err != nil && (!errors.As(err, &se) || se.Code != distribution.CodeVersionConflict) {
				t.Errorf("publish %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, c := range codes {
		switch c {
		case 200:
			if winner >= 0 {
				t.Fatalf("two winners: %d and %d", winner, i)
			}
			winner = i
		case 409:
		default:
			t.Fatalf("publish %d: status %d", i, c)
		}
	}
	if winner < 0 {
		t.Fatalf("no winner: %v", codes)
	}
	for _, url := range []string{r.a.url, r.b.url} {
		eventually(t, "both replicas agree on the winner", func() error {
			rel, err := client(url, "").Resolve(ctx, distribution.ResolveQuery{PluginID: "contested"})
			if err == nil && rel.ArtifactDigest != digests[winner] {
				return fmt.Errorf("%s resolves %s, the winner is %s", url, rel.ArtifactDigest, digests[winner])
			}
			return err
		})
	}
	// And 20 distinct plugins, split across both, all land.
	var mu sync.Mutex
	created := 0
	for i := range 20 {
		url := r.a.url
		if i%2 == 1 {
			url = r.b.url
		}
		art := pluginArchive(t, fmt.Sprintf("many-%02d", i), "1.0.0", nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := client(url, "a-secret").Publish(ctx, art, "")
			if err != nil {
				t.Errorf("publish many-%02d: %v", i, err)
				return
			}
			mu.Lock()
			created += map[bool]int{true: 1}[res.Created]
			mu.Unlock()
		}()
	}
	wg.Wait()
	cat, err := client(r.b.url, "").Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range cat.Plugins {
		if strings.HasPrefix(p.ID, "many-") {
			n++
		}
	}
	if created != 20 || n != 20 {
		t.Fatalf("created %d, catalog on B lists %d of 20", created, n)
	}
}

// testOwnershipAcross: a plugin claimed on A is bob's to take nowhere.
func testOwnershipAcross(t *testing.T, r *replicaSet) {
	ctx := context.Background()
	if _, err := client(r.a.url, "a-secret").Publish(ctx, pluginArchive(t, "owned", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	bob := client(r.b.url, "b-secret")
	var se *distribution.StatusError
	if _, err := bob.Publish(ctx, pluginArchive(t, "owned", "6.6.6", nil), ""); !errors.As(err, &se) || se.Status != 403 {
		t.Fatalf("bob publishes alice's plugin on B: %v", err)
	}
	if _, err := bob.Yank(ctx, "owned@1.0.0", true); !errors.As(err, &se) || se.Status != 403 {
		t.Fatalf("bob yanks on B: %v", err)
	}
	if _, err := client(r.b.url, "root-secret").ChangeOwners(ctx, distribution.OwnerUpdate{PluginID: "owned", Action: "grant", Identity: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := client(r.a.url, "b-secret").Publish(ctx, pluginArchive(t, "owned", "1.1.0", nil), ""); err != nil {
		t.Fatalf("bob on A after the grant on B: %v", err)
	}
}

// testTokenRevoked: a database token added with plugkit serve token works
// on both replicas, owns what it publishes by its ID, and once revoked is
// refused on both.
func testTokenRevoked(t *testing.T, r *replicaSet) {
	ctx := context.Background()
	out := serveToken(t, r, "add", "--publisher", "--name", "ci", "--json")
	var tok struct{ ID, Name, Role, Token string }
	if err := json.Unmarshal([]byte(out), &tok); err != nil || tok.Role != "publisher" || !strings.HasPrefix(tok.Token, "plugkit_") {
		t.Fatalf("token add: %q %v", out, err)
	}
	if _, err := client(r.a.url, tok.Token).Publish(ctx, pluginArchive(t, "by-db-token", "1.0.0", nil), ""); err != nil {
		t.Fatalf("publish with the database token on A: %v", err)
	}
	if owners, err := client(r.b.url, tok.Token).Owners(ctx, "by-db-token"); err != nil || len(owners.Owners) != 1 || owners.Owners[0] != tok.ID {
		t.Fatalf("owners on B: %+v %v", owners, err)
	}
	if list := serveToken(t, r, "list"); !strings.Contains(list, tok.ID) || strings.Contains(list, tok.Token) {
		t.Fatalf("token list:\n%s", list)
	}
	serveToken(t, r, "revoke", tok.ID)
	revoked := time.Now()
	for _, url := range []string{r.a.url, r.b.url} {
		eventually(t, "revoked token refused on "+url, func() error {
			_, err := client(url, tok.Token).Publish(ctx, pluginArchive(t, "by-db-token", "2.0.0", nil), "")
			if status(err) != 401 {
				return fmt.Errorf("not refused: %v", err)
			}
			return nil
		})
	}
	// The bound: revocation takes effect on every replica within
	// a second (the notification takes milliseconds).
	if d := time.Since(revoked); d > time.Second {
		t.Errorf("the revoked token was refused everywhere only after %v", d)
	}
	for _, p := range []*serverProc{r.a, r.b} {
		if strings.Contains(p.log(), tok.Token) {
			t.Fatal("a database token reached the server log")
		}
	}
}

// serveToken runs plugkit serve token on the replicas' storage.
func serveToken(t *testing.T, r *replicaSet, args ...string) string {
	t.Helper()
	cmd := execPlugkit(t, append(append([]string{"serve", "token"}, args...), r.storage...), r.env)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("plugkit serve token %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	return string(out)
}

// execPlugkit is the plugkit binary with args and env added to the
// test's environment.
func execPlugkit(t testing.TB, args, env []string) *exec.Cmd {
	cmd := exec.Command(plugkitBin(t), args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// TestE2EReplicaKilledMidPublish: one replica dies (SIGKILL) halfway
// through receiving a publish; the other keeps serving reads and writes,
// and the interrupted publish is nowhere.
func TestE2EReplicaKilledMidPublish(t *testing.T) {
	r := startReplicas(t)
	ctx := context.Background()
	big := pluginArchive(t, "interrupted", "1.0.0", map[string]string{"data": randomText(1 << 20)})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", r.a.url+distribution.Prefix+"/publish", pr)
	req.Header.Set("Authorization", "Bearer a-secret")
	req.ContentLength = int64(len(big))
	go func() {
		pw.Write(big[:len(big)/2])
		time.Sleep(time.Minute)
		pw.Close()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(200 * time.Millisecond)
	r.a.Cmd.Process.Signal(syscall.SIGKILL)
	r.a.Wait()
	pw.CloseWithError(errors.New("gone"))
	<-done

	b := client(r.b.url, "a-secret")
	if _, err := b.Publish(ctx, pluginArchive(t, "after-kill", "1.0.0", nil), ""); err != nil {
		t.Fatalf("B publishes after A died: %v", err)
	}
	if _, err := b.Resolve(ctx, distribution.ResolveQuery{PluginID: "after-kill"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Resolve(ctx, distribution.ResolveQuery{PluginID: "interrupted"}); status(err) != 404 {
		t.Fatalf("the interrupted publish resolves on B: %v", err)
	}
	if _, err := b.Download(ctx, archive.Digest(big)); status(err) != 404 {
		t.Fatalf("the interrupted artifact downloads on B: %v", err)
	}
	if res, err := b.Publish(ctx, big, ""); err != nil || !res.Created {
		t.Fatalf("the interrupted publish again on B: %+v %v", res, err)
	}
}

// TestE2EPostgresRestartUnderLoad restarts PostgreSQL while both replicas
// serve resolves and publishes: while it is down /readyz says 503 and
// requests fail cleanly; once it is back both recover without a restart,
// every acknowledged publish is there, and a yank on one replica is seen
// on the other (the change feed reconnected, the caches were dropped).
func TestE2EPostgresRestartUnderLoad(t *testing.T) {
	r := startReplicas(t)
	ctx := context.Background()
	a, b := client(r.a.url, "a-secret"), client(r.b.url, "a-secret")
	if _, err := a.Publish(ctx, pluginArchive(t, "steady", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	var served, failedReqs int
	for w := range 4 {
		c := a
		if w%2 == 1 {
			c = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, rerr := c.Resolve(ctx, distribution.ResolveQuery{PluginID: "steady"})
				id := fmt.Sprintf("load-%d-%d", w, i)
				_, perr := c.Publish(ctx, pluginArchive(t, id, "1.0.0", nil), "")
				mu.Lock()
				if perr == nil {
					acked[id] = true
				}
				if rerr == nil {
					served++
				} else {
					failedReqs++
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	r.pg.Stop(t)
	eventually(t, "/readyz is 503 while PostgreSQL is down", func() error {
		return wantStatus(r.a.url+"/readyz", 503)
	})
	if err := wantStatus(r.a.url+"/healthz", 200); err != nil {
		t.Fatalf("/healthz while the database is down: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	r.pg.Start(t)
	for _, url := range []string{r.a.url, r.b.url} {
		eventually(t, "/readyz on "+url+" after the restart", func() error { return wantStatus(url+"/readyz", 200) })
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("under load: %d resolves served, %d failed (while down), %d publishes acknowledged", served, failedReqs, len(acked))

	for id := range acked {
		if _, err := b.Resolve(ctx, distribution.ResolveQuery{PluginID: id}); err != nil {
			t.Fatalf("acknowledged publish %s lost: %v", id, err)
		}
	}
	if _, err := b.Resolve(ctx, distribution.ResolveQuery{PluginID: "steady"}); err != nil {
		t.Fatal(err)
	}
	// The feed may still be reconnecting: the caches are bypassed until
	// it is, so the yank must show within the deadline either way.
	if _, err := a.Yank(ctx, "steady@1.0.0", true); err != nil {
		t.Fatal(err)
	}
	eventually(t, "yank on A after the restart refused on B", func() error {
		if _, err := b.Resolve(ctx, distribution.ResolveQuery{PluginID: "steady"}); status(err) != 404 {
			return fmt.Errorf("B still resolves it: %v", err)
		}
		return nil
	})
	eventually(t, "B's change feed is up again", func() error { return metricIs(r.b.url, "plugkit_change_feed_up", "1") })
}

func wantStatus(url string, want int) error {
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("GET %s: %d, want %d", url, resp.StatusCode, want)
	}
	return nil
}

// metricIs checks one sample of the server's /metrics.
func metricIs(base, name, value string) error {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			if v != value {
				return fmt.Errorf("%s = %s, want %s", name, v, value)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s in /metrics", name)
}
