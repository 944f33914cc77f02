package install

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchLock is a lock of n plugins shaped like bench/install.sh's: two
// skills and two MCP servers each.
func benchLock(n int) []byte {
	l := &Lock{Version: LockVersion}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p%03d", i)
		l.Plugins = append(l.Plugins, Entry{Name: name, Version: "1.0.0",
			Source:   Source{Kind: KindDirectory, Path: "/home/alex/plugins/" + name},
			Identity: digestA, ArchiveDigest: digestA, InstalledAt: "2026-01-02T03:04:05Z",
			Skills: []string{"one", "two"},
			Servers: []Server{
				{Name: "local", Transport: "stdio", Command: "./bin/server", Args: []string{"--data", "${PLUGIN_DATA}/db"}, Env: map[string]string{"MODE": digestB}},
				{Name: "remote", Transport: "streamable-http", URL: "https://" + name + ".example.com/mcp", Headers: map[string]string{"X-Tenant": digestB}},
			}})
	}
	return l.Encode()
}

// BenchmarkList500 is Home.List on a home of 500 plugins: what plugkit
// list does besides starting (bench/install.sh times the whole command).
func BenchmarkList500(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, LockFile), benchLock(500), 0o644); err != nil {
		b.Fatal(err)
	}
	h, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		list, err := h.List()
		if err != nil || len(list) != 500 {
			b.Fatal(len(list), err)
		}
	}
}
