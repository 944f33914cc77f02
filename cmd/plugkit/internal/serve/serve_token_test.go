package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/internal/testservice"
)

// TestServeToken runs token add, list and revoke on an embedded registry:
// the token is printed once, listed never, and revoked for good.
func TestServeToken(t *testing.T) {
	data := filepath.Join(t.TempDir(), "reg")
	code, out, stderr := runCLI(t, "serve", "token", "add", "--admin", "--name", "ops", "--data", data, "--json")
	if code != 0 {
		t.Fatalf("add: exit %d %s", code, stderr)
	}
	var tok tokenDoc
	if err := json.Unmarshal([]byte(out), &tok); err != nil || tok.Role != "admin" || tok.Name != "ops" ||
		!strings.HasPrefix(tok.ID, "token:") || !strings.HasPrefix(tok.Token, "plugkit_") {
		t.Fatalf("add --json: %q %v", out, err)
	}
	code, out, _ = runCLI(t, "serve", "token", "add", "--reader", "--data", data)
	if code != 0 || !strings.Contains(out, "role:  reader") || !strings.Contains(out, "token: plugkit_") {
		t.Fatalf("add (text): exit %d %q", code, out)
	}
	code, out, _ = runCLI(t, "serve", "token", "list", "--data", data)
	if code != 0 || !strings.Contains(out, tok.ID) || strings.Contains(out, "plugkit_") || strings.Count(out, "\n") != 3 {
		t.Fatalf("list: exit %d %q", code, out)
	}
	if code, out, _ = runCLI(t, "serve", "token", "revoke", tok.ID, "--data", data, "--json"); code != 0 || !strings.Contains(out, `"revoked_at"`) {
		t.Fatalf("revoke: exit %d %q", code, out)
	}
	code, out, _ = runCLI(t, "serve", "token", "list", "--data", data, "--json")
	var list struct{ Tokens []map[string]any }
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Tokens) != 2 || list.Tokens[0]["revoked_at"] == nil {
		t.Fatalf("list --json: exit %d %q %v", code, out, err)
	}
	if code, out, _ := runCLI(t, "serve", "token", "revoke", "token:00000000000000aa", "--data", data, "--json"); code != 1 || !strings.Contains(out, `"failed"`) {
		t.Fatalf("revoke unknown: exit %d %q", code, out)
	}
}

// TestServeUsageErrors: wrong storage or role flags exit 2 before
// touching anything, and a password on the command line is refused.
func TestServeUsageErrors(t *testing.T) {
	data := filepath.Join(t.TempDir(), "untouched")
	for _, args := range [][]string{
		{"serve", "token", "add", "--data", data},
		{"serve", "token", "add", "--reader", "--publisher", "--data", data},
		{"serve", "token", "add", "--reader", "--database", "postgres://u:hunter2@127.0.0.1/db"},
		{"serve", "token", "add", "--reader", "--database", "postgres://u@127.0.0.1/db?password=hunter2"},
		{"serve", "token", "add", "--reader", "--database", "mysql://u@127.0.0.1/db"},
		{"serve", "token"},
		{"serve", "--data", data, "--database", "postgres://u:hunter2@127.0.0.1/db"},
		{"serve", "--data", data, "--blobs-redirect"},
		{"serve", "--data", data, "--s3-endpoint", "http://127.0.0.1:1"},
		{"serve", "--data", data, "--log-format", "xml"},
		{"serve", "--data", data, "--shutdown-timeout", "0s"},
		{"serve", "migrate", "--database", "postgres://u:hunter2@127.0.0.1/db"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 || strings.Contains(stderr, "hunter2") {
			t.Errorf("plugkit %s: exit %d, want 2: %s", strings.Join(args, " "), code, stderr)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("a refused command created %s", data)
	}
}

// TestServeVerbsNeedARegistry: the verbs that read or maintain a registry
// refuse a --data that holds none, the default ./plugkit-data included,
// with exit 2 and the directory named, and create nothing; token add
// creates one, after which they work.
func TestServeVerbsNeedARegistry(t *testing.T) {
	t.Chdir(t.TempDir())
	data := filepath.Join(t.TempDir(), "typo")
	verbs := [][]string{
		{"serve", "token", "list"},
		{"serve", "token", "revoke", "token:00000000000000aa"},
		{"serve", "gc"},
		{"serve", "migrate"},
	}
	for _, args := range verbs {
		for _, dataArgs := range [][]string{nil, {"--data", data}} {
			argv := append(append([]string{}, args...), dataArgs...)
			want := "plugkit-data"
			if dataArgs != nil {
				want = data
			}
			code, _, stderr := runCLI(t, argv...)
			if code != 2 || !strings.Contains(stderr, "no registry in "+want) || !strings.Contains(stderr, "give the --data") {
				t.Errorf("plugkit %s: exit %d, want 2 naming %s: %s", strings.Join(argv, " "), code, want, stderr)
			}
		}
	}
	code, out, _ := runCLI(t, "serve", "token", "list", "--data", data, "--json")
	if code != 2 || !strings.Contains(out, `"code": "usage"`) {
		t.Errorf("token list --json: exit %d %s", code, out)
	}
	for _, dir := range []string{data, "plugkit-data"} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("a refused verb created %s: %v", dir, err)
		}
	}
	mustRun(t, "serve", "token", "add", "--publisher", "--data", data)
	if out := mustRun(t, "serve", "token", "list", "--data", data); strings.Count(out, "\n") != 2 {
		t.Errorf("token list after add: %q", out)
	}
	mustRun(t, "serve", "gc", "--data", data)
	mustRun(t, "serve", "migrate", "--data", data)
}

// TestServeMigrate runs migrate alone on both backends; on PostgreSQL the
// URL carries no password (PGPASSWORD does), and a second run applies
// nothing.
func TestServeMigrate(t *testing.T) {
	data := filepath.Join(t.TempDir(), "reg")
	mustRun(t, "serve", "token", "add", "--reader", "--data", data)
	if code, out, stderr := runCLI(t, "serve", "migrate", "--data", data, "--json"); code != 0 || !strings.Contains(out, `"migrations": []`) {
		t.Fatalf("sqlite: exit %d %q %s", code, out, stderr)
	}
	pg := testservice.StartPostgres(t)
	t.Setenv("PGPASSWORD", pg.Password)
	url := pg.NewDatabase(t)
	code, out, stderr := runCLI(t, "serve", "migrate", "--database", url)
	if code != 0 || !strings.Contains(out, "applied migration 1") {
		t.Fatalf("postgres: exit %d %q %s", code, out, stderr)
	}
	code, out, _ = runCLI(t, "serve", "migrate", "--database", url, "--json")
	if code != 0 || !strings.Contains(out, `"applied": false`) || strings.Contains(out, `"applied": true`) {
		t.Fatalf("second run: exit %d %q", code, out)
	}
	t.Setenv("PGPASSWORD", "wrong")
	if code, _, stderr := runCLI(t, "serve", "migrate", "--database", url); code != 1 || strings.Contains(stderr, pg.Password) {
		t.Fatalf("wrong password: exit %d %s", code, stderr)
	}
	// PLUGKIT_DATABASE_URL may hold the password.
	t.Setenv("PGPASSWORD", "")
	t.Setenv(databaseEnv, strings.Replace(url, pg.User+"@", pg.User+":"+pg.Password+"@", 1))
	if code, _, stderr := runCLI(t, "serve", "token", "add", "--publisher", "--json"); code != 0 {
		t.Fatalf("token add with %s: exit %d %s", databaseEnv, code, stderr)
	}
}
