package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/distribution"

	"github.com/plugkit/plugkit/registry/storage"
)

// statusOf returns the status and code of a client error, or 200 and "".
func statusOf(err error) (int, string) {
	var se *distribution.StatusError
	if errors.As(err, &se) {
		return se.Status, se.Code
	}
	if err != nil {
		return -1, err.Error()
	}
	return 200, ""
}

// TestOwnership: with two publisher tokens, B could
// publish alpha@6.6.6, move stable to it and yank A's alpha@1.0.0. A
// plugin now belongs to the identity that first published it.
func TestOwnership(t *testing.T) {
	ctx := context.Background()
	ts, srv := newTestServerWith(t, Config{
		PublishTokens: []string{"alice=a-secret-1", "alice=a-secret-2", "bob=b-secret", "bare-secret"},
		AdminTokens:   []string{"root=admin-secret"},
	}, false)
	a1, a2 := client(ts.URL, "a-secret-1"), client(ts.URL, "a-secret-2")
	b, bare, root := client(ts.URL, "b-secret"), client(ts.URL, "bare-secret"), client(ts.URL, "admin-secret")

	if _, err := a1.Publish(ctx, pluginArchive(t, "alpha", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	// Bob: no new version, no republish to another channel, no channel
	// move, no yank.
	for name, err := range map[string]error{
		"publish": func() error { _, err := b.Publish(ctx, pluginArchive(t, "alpha", "6.6.6", nil), ""); return err }(),
		"republish": func() error {
			_, err := b.Publish(ctx, pluginArchive(t, "alpha", "1.0.0", nil), "evil")
			return err
		}(),
		"channel": func() error {
			_, err := b.SetChannel(ctx, distribution.ChannelUpdate{PluginID: "alpha", Channel: "stable", ReleaseID: "alpha@1.0.0"})
			return err
		}(),
		"yank": func() error { _, err := b.Yank(ctx, "alpha@1.0.0", true); return err }(),
	} {
		if st, code := statusOf(err); st != 403 || code != distribution.CodeNotOwner {
			t.Errorf("bob %s: %d %s, want 403 not_owner", name, st, code)
		}
	}
	rel, err := a1.Resolve(ctx, distribution.ResolveQuery{PluginID: "alpha"})
	if err != nil || rel.ID != "alpha@1.0.0" || rel.Yanked {
		t.Fatalf("alpha changed: %+v %v", rel, err)
	}
	// The refused publishes left no blob behind either.
	if rep, err := srv.CollectGarbage(ctx, GCOptions{Grace: time.Nanosecond, DryRun: true}); err != nil || len(rep.Orphans) != 0 {
		t.Fatalf("refused publishes left blobs: %+v %v", rep, err)
	}

	// The identity survives rotation: alice's second secret is alice.
	if _, err := a2.Publish(ctx, pluginArchive(t, "alpha", "1.1.0", nil), "beta"); err != nil {
		t.Fatalf("alice's rotated token: %v", err)
	}
	owners, err := b.Owners(ctx, "alpha")
	if err != nil || !slices.Equal(owners.Owners, []string{"alice"}) {
		t.Fatalf("owners: %+v %v", owners, err)
	}
	// A bare secret is identified by its hash.
	if _, err := bare.Publish(ctx, pluginArchive(t, "beta", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("bare-secret"))
	if o, _ := root.Owners(ctx, "beta"); o == nil || !slices.Equal(o.Owners, []string{"token:" + hex.EncodeToString(sum[:8])}) {
		t.Fatalf("owner of a bare token: %+v", o)
	}
	// Base64 padding is never a NAME=SECRET split.
	for entry, want := range map[string]string{
		"bare-secret":              "token:" + hex.EncodeToString(sum[:8]),
		"alice=x":                  "alice",
		"c2VjcmV0==":               "token:",
		"dGVzdDE=":                 "token:",
		"a b=c":                    "token:",
		"token:0123456789abcdef=x": "token:",
	} {
		if got := TokenIdentity(entry); !strings.HasPrefix(got, want) || want == "token:" && len(got) != 22 {
			t.Errorf("TokenIdentity(%q) = %q, want %q", entry, got, want)
		}
	}

	// Only an admin changes owners.
	grant := distribution.OwnerUpdate{PluginID: "alpha", Action: "grant", Identity: "bob"}
	if st, code := statusOf(func() error { _, err := a1.ChangeOwners(ctx, grant); return err }()); st != 403 || code != distribution.CodeForbidden {
		t.Fatalf("an owner granting: %d %s", st, code)
	}
	if o, err := root.ChangeOwners(ctx, grant); err != nil || !slices.Equal(o.Owners, []string{"alice", "bob"}) {
		t.Fatalf("grant: %+v %v", o, err)
	}
	if _, err := b.Yank(ctx, "alpha@1.1.0", true); err != nil {
		t.Fatalf("bob after the grant: %v", err)
	}
	if o, err := root.ChangeOwners(ctx, distribution.OwnerUpdate{PluginID: "alpha", Action: "transfer", Identity: "bob"}); err != nil || !slices.Equal(o.Owners, []string{"bob"}) {
		t.Fatalf("transfer: %+v %v", o, err)
	}
	if st, _ := statusOf(func() error { _, err := a1.Yank(ctx, "alpha@1.0.0", true); return err }()); st != 403 {
		t.Fatalf("alice after the transfer: %d", st)
	}
	// Revoking the last owner leaves the plugin to admins.
	if o, err := root.ChangeOwners(ctx, distribution.OwnerUpdate{PluginID: "alpha", Action: "revoke", Identity: "bob"}); err != nil || len(o.Owners) != 0 {
		t.Fatalf("revoke: %+v %v", o, err)
	}
	if st, _ := statusOf(func() error { _, err := b.Yank(ctx, "alpha@1.0.0", true); return err }()); st != 403 {
		t.Fatalf("bob on an ownerless plugin: %d", st)
	}
	if _, err := root.Yank(ctx, "alpha@1.0.0", true); err != nil {
		t.Fatalf("admin on an ownerless plugin: %v", err)
	}

	v1 := ts.URL + "/plugin-protocol/v1/admin/owners"
	for _, c := range []struct {
		method, url, token, body string
		status                   int
	}{
		{"GET", v1 + "?plugin_id=alpha", "", "", 401},
		{"GET", v1 + "?plugin_id=alpha", readToken, "", 403},
		{"GET", v1 + "?plugin_id=nope", "admin-secret", "", 404},
		{"GET", v1, "admin-secret", "", 400},
		{"POST", v1, "b-secret", `{"plugin_id":"alpha","action":"grant","identity":"bob"}`, 403},
		{"POST", v1, "admin-secret", `{"plugin_id":"alpha","action":"steal","identity":"bob"}`, 400},
		{"POST", v1, "admin-secret", `{"plugin_id":"alpha","action":"grant","identity":"b o b"}`, 400},
		{"POST", v1, "admin-secret", `{"plugin_id":"nope","action":"grant","identity":"bob"}`, 404},
	} {
		var body *bytes.Reader
		if c.body != "" {
			body = bytes.NewReader([]byte(c.body))
		}
		var st int
		if body != nil {
			st, _, _ = do(t, c.method, c.url, c.token, "application/json", body)
		} else {
			st, _, _ = do(t, c.method, c.url, c.token, "", nil)
		}
		if st != c.status {
			t.Errorf("%s %s (%s): %d, want %d", c.method, c.url, c.token, st, c.status)
		}
	}
}

// TestTokenConfigErrors: one secret cannot be two identities or roles.
func TestTokenConfigErrors(t *testing.T) {
	db, b, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, cfg := range []Config{
		{PublishTokens: []string{"alice=s", "bob=s"}},
		{PublishTokens: []string{"s"}, AdminTokens: []string{"s"}},
		{ReadTokens: []string{"r=s"}, PublishTokens: []string{"r=s"}},
	} {
		cfg.Store, cfg.Blobs = db, b
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%v) accepted a secret configured twice", cfg.PublishTokens)
		}
	}
	cfg := Config{Store: db, Blobs: b, PublishTokens: []string{"alice=s", "alice=s", " "}}
	if _, err := New(cfg); err != nil {
		t.Errorf("the same entry twice: %v", err)
	}
}
