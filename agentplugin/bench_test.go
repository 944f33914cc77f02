//go:build unix

package agentplugin_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/snapshot"
)

// pluginFiles builds a plugin with the given number of skills and stdio
// servers, padded with resource files up to files in total.
func pluginFiles(skills, servers, files int) map[string][]byte {
	out := map[string][]byte{"plugin.json": []byte(minimal)}
	var entries []string
	for i := range servers {
		entries = append(entries, fmt.Sprintf(`"srv-%d": {"type": "stdio", "command": "./bin/server", "args": ["--id", "%d", "${PLUGIN_DATA}/s%d"], "env": {"LEVEL": "info"}, "cwd": "${PLUGIN_ROOT}"}`, i, i, i))
	}
	out["mcp.json"] = []byte(mcpDoc(strings.Join(entries, ",\n")))
	out["bin/server"] = []byte("#!/bin/sh\n")
	for i := range skills {
		name := fmt.Sprintf("skill-%d", i)
		out["skills/"+name+"/SKILL.md"] = []byte("---\nname: " + name + "\ndescription: Does task " + name +
			" and reports the result. Use when the user asks for " + name + ".\nlicense: MIT\nmetadata:\n  author: bench\n  version: \"1.0\"\n---\n\n# " +
			name + "\n\n" + strings.Repeat("Step by step instructions for the agent.\n", 40))
	}
	for i := 0; len(out) < files; i++ {
		out[fmt.Sprintf("skills/skill-%d/references/ref-%d.md", i%max(skills, 1), i)] = []byte(strings.Repeat("reference text\n", 20))
	}
	return out
}

// BenchmarkLoadDirLarge loads a plugin at the scale the limits allow for (1,000
// skills, 200 MCP servers, 10,000 files) from a directory in the page
// cache: ReadDir plus Load.
func BenchmarkLoadDirLarge(b *testing.B) {
	dir := b.TempDir()
	for p, content := range pluginFiles(1000, 200, 10_000) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, content, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		pkg, err := agentplugin.LoadDir(dir, agentplugin.Options{})
		if err != nil || len(pkg.Skills) != 1000 || len(pkg.Servers) != 200 {
			b.Fatalf("%v", err)
		}
	}
}

// reportCPU adds the process CPU time (user and system) per operation to
// the results: on a shared machine it is steadier than wall time, which
// counts the time other processes hold the core. Call the returned
// function after the loop.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkLoadLargeFromMemory is the Load part alone of the large plugin.
func BenchmarkLoadLargeFromMemory(b *testing.B) {
	benchLoad(b, pluginFiles(1000, 200, 10_000), 1000, 200)
}

// BenchmarkLoadTypical loads a typical plugin (5 skills, 3 servers) that
// is already in memory.
func BenchmarkLoadTypical(b *testing.B) {
	benchLoad(b, pluginFiles(5, 3, 20), 5, 3)
}

func benchLoad(b *testing.B, files map[string][]byte, skills, servers int) {
	s, err := snapshot.FromFiles(files)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		pkg, err := agentplugin.Load(s, agentplugin.Options{})
		if err != nil || len(pkg.Skills) != skills || len(pkg.Servers) != servers {
			b.Fatalf("%v", err)
		}
	}
}
