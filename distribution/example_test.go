package distribution_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry"
	"github.com/plugkit/plugkit/snapshot"

	"github.com/plugkit/plugkit/registry/storage"
)

// startRegistry runs an in-process registry on 127.0.0.1 for the examples,
// with one published plugin.
func startRegistry() (*httptest.Server, func()) {
	dir, err := os.MkdirTemp("", "plugkit-example-")
	if err != nil {
		log.Fatal(err)
	}
	db, blobs, err := storage.OpenDir(dir)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := registry.New(registry.Config{Store: db, Blobs: blobs, PublishTokens: []string{"s3cret"}, AnonymousRead: true})
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	snap, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(
		`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "hello", "version": "1.0.0"}`)})
	b, _ := archive.Pack(snap, archive.PackOptions{})
	pub := &distribution.Client{BaseURL: ts.URL, Token: "s3cret"}
	if _, err := pub.Publish(context.Background(), b, ""); err != nil {
		log.Fatal(err)
	}
	return ts, func() { ts.Close(); db.Close(); os.RemoveAll(dir) }
}

// Resolve a plugin's stable channel and download its artifact: Download
// verifies the digest before it unpacks and loads the archive.
func ExampleClient_Download() {
	ts, stop := startRegistry()
	defer stop()
	ctx := context.Background()
	c := &distribution.Client{BaseURL: ts.URL}

	rel, err := c.Resolve(ctx, distribution.ResolveQuery{PluginID: "hello", Channel: "stable"})
	if err != nil {
		log.Fatal(err)
	}
	art, err := c.Download(ctx, rel.ArtifactDigest)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rel.ID, art.Package.Name, art.Package.Version, len(art.Snapshot.Files), art.Digest == rel.ArtifactDigest)
	// Output: hello@1.0.0 hello 1.0.0 1 true
}

// List the catalog: plugins and where their channels point.
func ExampleClient_Catalog() {
	ts, stop := startRegistry()
	defer stop()
	cat, err := (&distribution.Client{BaseURL: ts.URL}).Catalog(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range cat.Plugins {
		fmt.Println(p.ID, p.Channels["stable"], len(p.Releases))
	}
	// Output: hello hello@1.0.0 1
}

// Report an installation with Request, the generic JSON call. Reports
// need a token by default.
func ExampleClient_Request() {
	ts, stop := startRegistry()
	defer stop()
	c := &distribution.Client{BaseURL: ts.URL, Token: "s3cret"}
	in := distribution.Installation{
		ID: "laptop/hello", PluginID: "hello", ReleaseID: "hello@1.0.0", Status: "installed",
		ArtifactDigest: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
	}
	if err := c.Request(context.Background(), "POST", "/installations", in, nil); err != nil {
		log.Fatal(err)
	}
	var list distribution.Installations
	if err := c.Request(context.Background(), "GET", "/installations", nil, &list); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(list.Installations), list.Installations[0].Status)
	// Output: 1 installed
}
