package clitest

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/plugkit/plugkit/registry"
	"github.com/plugkit/plugkit/registry/storage"
)

// Tokens of the in-process test registry, by identity.
const (
	AliceToken  = "alice-secret"
	BobToken    = "bob-secret"
	ReaderToken = "reader-secret"
	AdminToken  = "admin-secret"
)

// NewRegistry starts an in-process registry on 127.0.0.1 with anonymous
// reads, publishers alice and bob, a reader and an admin.
func NewRegistry(t testing.TB) string {
	t.Helper()
	db, blobs, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := registry.New(registry.Config{Store: db, Blobs: blobs, AnonymousRead: true,
		PublishTokens: []string{"alice=" + AliceToken, "bob=" + BobToken},
		ReadTokens:    []string{"host=" + ReaderToken}, AdminTokens: []string{"root=" + AdminToken}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TokenFile writes a token file and returns its --token-file flag.
func TokenFile(t testing.TB, token string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte("# test token\n"+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "--token-file=" + p
}

// HelloManifest is the plugin.json of plugin "hello" 0.1.0.
const HelloManifest = `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "hello", "version": "0.1.0"}`
