package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/snapshot"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// sampleLock is a lock with every kind of source and server.
func sampleLock() *Lock {
	l := &Lock{Version: LockVersion}
	l.Set(Entry{Name: "notes", Version: "2.0.0", Source: Source{Kind: KindRegistry, Registry: "https://plugins.example.com", Plugin: "notes", Channel: "stable"},
		Identity: digestA, ArchiveDigest: digestA, InstalledAt: "2026-01-02T03:04:05Z", Skills: []string{"a", "b"},
		Servers: []Server{
			{Name: "api", Transport: "streamable-http", URL: "https://api.example.com/mcp", Headers: map[string]string{"X-B": digestB, "X-A": digestA}},
			{Name: "db", Transport: "stdio", Command: "./bin/db", Args: []string{"--x", ""}, Cwd: "${PLUGIN_DATA}", Env: map[string]string{"Z": digestA, "A": digestB}},
		}})
	l.Set(Entry{Name: "kv", Version: "", Source: Source{Kind: KindDirectory, Path: "/src/kv"},
		Identity: digestB, ArchiveDigest: digestB, InstalledAt: "2026-01-02T03:04:05Z"})
	l.Set(Entry{Name: "oci.tool", Version: "1", Source: Source{Kind: KindOCI, Reference: "oci://127.0.0.1:5000/p/tool:1.0"},
		Identity: digestA, ArchiveDigest: digestB, InstalledAt: "2026-01-02T03:04:05Z", Trust: &Trust{Rule: "team", Signer: "key:abc"}})
	return l
}

// TestLockFormat: fixed key order, entries and servers sorted, env and
// header names sorted, values only as digests, and byte-identical when
// read and written again.
func TestLockFormat(t *testing.T) {
	b := sampleLock().Encode()
	want := `{
  "lockfileVersion": 2,
  "plugins": [
    {
      "name": "kv",
      "version": "",
      "source": {
        "kind": "directory",
        "path": "/src/kv"
      },`
	if !strings.HasPrefix(string(b), want) {
		t.Fatalf("lock starts\n%s\nwant\n%s", b[:min(len(b), len(want))], want)
	}
	for _, order := range [][]string{
		{`"kv"`, `"notes"`, `"oci.tool"`},
		{`"name": "api"`, `"name": "db"`},
		{`"X-A"`, `"X-B"`},
		{`"A": `, `"Z": `},
		{`"name"`, `"version"`, `"source"`, `"identity"`, `"archiveDigest"`, `"installedAt"`, `"trust"`, `"skills"`, `"servers"`},
	} {
		s := string(b)
		if order[0] == `"name"` {
			s = s[strings.Index(s, `"oci.tool"`)-len(`"name": `):]
		}
		last := -1
		for _, k := range order {
			i := strings.Index(s, k)
			if i <= last {
				t.Errorf("%s out of order in\n%s", k, s)
			}
			last = i
		}
	}
	l, err := ParseLock(b, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if again := l.Encode(); !bytes.Equal(again, b) {
		t.Fatalf("rewritten without a change, the lock differs:\n%s\n%s", b, again)
	}
	if !bytes.HasSuffix(b, []byte("}\n")) {
		t.Error("no final newline")
	}
}

// TestLockRefusals: every malformed lock is refused with ErrLockInvalid,
// names that could leave the home first of all.
func TestLockRefusals(t *testing.T) {
	base := string(sampleLock().Encode())
	mutate := func(old, new string) string {
		if !strings.Contains(base, old) {
			t.Fatalf("sample lock has no %q", old)
		}
		return strings.Replace(base, old, new, 1)
	}
	for name, doc := range map[string]string{
		"empty":             ``,
		"not an object":     `[]`,
		"no version":        `{"plugins": []}`,
		"version 3":         `{"lockfileVersion": 3, "plugins": []}`,
		"version 0":         `{"lockfileVersion": 0, "plugins": []}`,
		"version 1.5":       `{"lockfileVersion": 1.5, "plugins": []}`,
		"plainHTTP in v1":   strings.Replace(mutate(`"reference": "oci://`, `"plainHTTP": true, "reference": "oci://`), `"lockfileVersion": 2`, `"lockfileVersion": 1`, 1),
		"plainHTTP not oci": mutate(`"path": "/src/kv"`, `"path": "/src/kv", "plainHTTP": true`),
		"plainHTTP string":  mutate(`"reference": "oci://`, `"plainHTTP": "yes", "reference": "oci://`),
		"unknown field":     `{"lockfileVersion": 1, "plugins": [], "extra": 1}`,
		"duplicate key":     `{"lockfileVersion": 1, "plugins": [], "plugins": []}`,
		"trailing data":     `{"lockfileVersion": 1, "plugins": []} {}`,
		"name traversal":    mutate(`"name": "kv"`, `"name": "../kv"`),
		"name with slash":   mutate(`"name": "kv"`, `"name": "a/b"`),
		"name dot":          mutate(`"name": "kv"`, `"name": "."`),
		"name uppercase":    mutate(`"name": "kv"`, `"name": "KV"`),
		"unsorted":          mutate(`"name": "kv"`, `"name": "zz"`),
		"duplicate name":    mutate(`"name": "kv"`, `"name": "notes"`),
		"bad digest":        mutate(`"identity": "sha256:b`, `"identity": "sha256:B`),
		"md5":               mutate(`"archiveDigest": "sha256:`, `"archiveDigest": "md5:`),
		"bad time":          mutate(`"installedAt": "2026-01-02T03:04:05Z"`, `"installedAt": "yesterday"`),
		"relative path":     mutate(`"path": "/src/kv"`, `"path": "src/kv"`),
		"unclean path":      mutate(`"path": "/src/kv"`, `"path": "/src/../kv"`),
		"unknown kind":      mutate(`"kind": "directory"`, `"kind": "ftp"`),
		"channel+release":   mutate(`"channel": "stable"`, `"channel": "stable", "release": "notes@2.0.0"`),
		"registry not http": mutate(`"registry": "https://plugins.example.com"`, `"registry": "file:///etc"`),
		"oci not oci":       mutate(`"reference": "oci://`, `"reference": "`),
		"env value kept":    mutate(`"Z": "sha256:a`, `"Z": "plain-secret`),
		"header value kept": mutate(`"X-A": "sha256:a`, `"X-A": "plain`),
		"unknown transport": mutate(`"transport": "stdio"`, `"transport": "ws"`),
		"stdio with url":    mutate(`"command": "./bin/db",`, `"command": "./bin/db", "url": "https://x",`),
		"unsorted skills":   mutate(`"a",`, `"c",`),
		"empty trust rule":  mutate(`"rule": "team"`, `"rule": ""`),
		"deep nesting":      `{"lockfileVersion": 1, "plugins": [], "x": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
		"invalid UTF-8":     "{\"lockfileVersion\": 1, \"plugins\": [], \"\xff\": 1}",
	} {
		_, err := ParseLock([]byte(doc), Limits{})
		if !errors.Is(err, ErrLockInvalid) {
			t.Errorf("%s: %v, want ErrLockInvalid", name, err)
		}
	}
	// Limits.
	_, err := ParseLock([]byte(base), Limits{MaxLockBytes: 100})
	if !errors.Is(err, ErrLockInvalid) || !strings.Contains(err.Error(), "MaxLockBytes") {
		t.Errorf("over MaxLockBytes: %v", err)
	}
	_, err = ParseLock([]byte(base), Limits{MaxPlugins: 2})
	if !errors.Is(err, ErrLockInvalid) || !strings.Contains(err.Error(), "MaxPlugins") {
		t.Errorf("over MaxPlugins: %v", err)
	}
}

// TestReadLockRefusesHostileLock: a home whose lock names a plugin "..",
// or whose lock or journal is too large, is not used: no writer starts,
// nothing is removed.
func TestReadLockRefusesHostileLock(t *testing.T) {
	dir := t.TempDir()
	h := openHome(t, dir)
	writeFile(t, filepath.Join(dir, "data", "victim", "keep"), "x")
	writeFile(t, h.LockPath(), strings.Replace(string(sampleLock().Encode()), `"name": "kv"`, `"name": "../data/victim"`, 1))
	if _, err := h.List(); !errors.Is(err, ErrLockInvalid) {
		t.Fatalf("list: %v", err)
	}
	_, err := h.Remove(t.Context(), []string{"kv"}, RemoveOptions{Purge: true})
	if !errors.Is(err, ErrLockInvalid) {
		t.Fatalf("remove: %v", err)
	}
	if readFile(t, filepath.Join(dir, "data", "victim", "keep")) != "x" {
		t.Fatal("victim touched")
	}
	h2, _ := Open(dir, Options{Limits: Limits{MaxLockBytes: 10}})
	if _, err := h2.List(); err == nil || !strings.Contains(err.Error(), "MaxLockBytes") {
		t.Fatalf("over the limit: %v", err)
	}
	// A journal is read within the same limit: no writer starts, and the
	// journal stays for a person to look at.
	writeFile(t, h.LockPath(), string(sampleLock().Encode()))
	writeFile(t, filepath.Join(dir, journalFile), strings.Repeat(" ", 1<<20))
	h3, _ := Open(dir, Options{Limits: Limits{MaxLockBytes: 64 << 10}})
	_, err = h3.Remove(t.Context(), []string{"kv"}, RemoveOptions{})
	if !errors.Is(err, snapshot.ErrLimit) || !strings.Contains(err.Error(), "MaxLockBytes") {
		t.Fatalf("journal over the limit: %v", err)
	}
	if l, err := h3.List(); err != nil || len(l) != 3 {
		t.Fatalf("after a refused writer: %v %v", l, err)
	}
}

// bigLock is a valid lock of about size bytes, in the shape given.
func bigLock(size int, shape string) []byte {
	entry := func(i int) Entry {
		e := Entry{Name: fmt.Sprintf("p%07d", i), Version: "1.0.0", Source: Source{Kind: KindDirectory, Path: "/src/p"},
			Identity: digestA, ArchiveDigest: digestA, InstalledAt: "2026-01-02T03:04:05Z"}
		switch shape {
		case "many servers":
			for j := 0; j < 50; j++ {
				e.Servers = append(e.Servers, Server{Name: fmt.Sprintf("s%03d", j), Transport: "stdio", Command: "x",
					Env: map[string]string{"A": digestA}})
			}
		case "long args":
			e.Servers = []Server{{Name: "s", Transport: "stdio", Command: "x", Args: []string{strings.Repeat("a", 60000)}}}
		}
		return e
	}
	one := len((&Lock{Version: LockVersion, Plugins: []Entry{entry(0)}}).Encode())
	l := &Lock{Version: LockVersion}
	for i := 0; i < max(size/one, 1); i++ {
		l.Plugins = append(l.Plugins, entry(i))
	}
	return l.Encode()
}

// TestParseLockCostIsLinear: reading a lock costs what its size costs,
// whatever its shape: from 1 MiB to 16 MiB (4 MiB under the race detector)
// CPU time and allocations grow like the size (hostile.Linear), the bytes
// allocated at most twice as fast, and one parse allocates at most twenty
// times the lock's size.
func TestParseLockCostIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 16 MiB locks")
	}
	largeSize := 16 << 20
	if raceEnabled {
		largeSize = 4 << 20
	}
	for _, shape := range []string{"many plugins", "many servers", "long args"} {
		small, large := bigLock(1<<20, shape), bigLock(largeSize, shape)
		parse := func(b []byte) func() {
			return func() {
				if _, err := ParseLock(b, Limits{MaxLockBytes: 64 << 20, MaxPlugins: 1 << 20}); err != nil {
					t.Fatal(err)
				}
			}
		}
		growth := float64(len(large)) / float64(len(small))
		s, l := hostile.Linear(t, shape, growth, parse(small), parse(large))
		if float64(l.Bytes) > 2*growth*float64(s.Bytes) || l.Bytes > uint64(len(large))*20 {
			t.Errorf("%s: %d B allocated for %d B, %d B for %d B: more than twice linear, or over twenty times the size", shape, s.Bytes, len(small), l.Bytes, len(large))
		}
	}
}

// TestLockWrittenDurably: the lock is replaced by rename, never written in
// place, so a reader holding the old file keeps reading it whole.
func TestLockWrittenDurably(t *testing.T) {
	dir := t.TempDir()
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, pathSource(kvV1().writeDir(t, filepath.Join(dir, "kv"))))
	f, err := os.Open(h.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := readFile(t, h.LockPath())
	mustInstall(t, h, pathSource(plugin{name: "notes", version: "1"}.writeDir(t, filepath.Join(dir, "notes"))))
	var got bytes.Buffer
	if _, err := got.ReadFrom(f); err != nil || got.String() != old {
		t.Fatalf("the open lock changed under its reader: %v", err)
	}
	var l Lock
	if err := json.Unmarshal([]byte(readFile(t, h.LockPath())), &l); err != nil || len(l.Plugins) != 2 {
		t.Fatalf("new lock: %v", err)
	}
}

// TestLockVersions: a lock of version 1 (written by plugkit before
// version 2 existed) is read, and written again as version 2; plainHTTP
// round-trips; a lock of a later version is refused with a message naming
// the version it needs.
func TestLockVersions(t *testing.T) {
	v2 := sampleLock()
	v2.Plugins[2].Source.PlainHTTP = true
	b := v2.Encode()
	if !bytes.Contains(b, []byte(`"plainHTTP": true`)) {
		t.Fatalf("plainHTTP not written:\n%s", b)
	}
	l, err := ParseLock(b, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Plugins[2].Source.PlainHTTP || l.Version != 2 {
		t.Fatalf("read back: version %d, %+v", l.Version, l.Plugins[2].Source)
	}
	if s := l.Plugins[2].Source.String(); !strings.HasSuffix(s, " (plain HTTP)") {
		t.Errorf("a plain-HTTP source shows as %q", s)
	}

	v1 := bytes.Replace(sampleLock().Encode(), []byte(`"lockfileVersion": 2`), []byte(`"lockfileVersion": 1`), 1)
	l, err = ParseLock(v1, Limits{})
	if err != nil {
		t.Fatalf("version 1: %v", err)
	}
	if l.Version != 1 || len(l.Plugins) != 3 {
		t.Fatalf("version 1 read as %d with %d plugins", l.Version, len(l.Plugins))
	}

	_, err = ParseLock([]byte(`{"lockfileVersion": 3, "plugins": []}`), Limits{})
	if !errors.Is(err, ErrLockInvalid) || !strings.Contains(err.Error(), "lockfileVersion 3 needs a newer plugkit") {
		t.Fatalf("version 3: %v", err)
	}
}
