package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/snapshot"
)

// The link fan-outs: the directory of each level holds
// two links, a and b, to the next level's, so that the bottom file is
// reached through 2^levels-1 paths.
const (
	// fanOutLevels admits every path within the default limits (4,095
	// files, about 12,000 entries), so the plugin loads.
	fanOutLevels = 12
	// hostileLevels admits 2^30 paths, which no limit does: reading stops
	// at MaxEntries.
	hostileLevels = 30
)

// fanOuts prints the dir-link-fanout lines: at each size, a 12-level
// fan-out whose bottom file makes the plugin that many MiB, read from disk
// and loaded, against reading every path with os.ReadFile (the kernel
// following the links); then the 30-level fan-out, refused at MaxEntries,
// against listing as many directories as that limit admits.
func fanOuts(runs int, sizes []int) error {
	paths := (1 << fanOutLevels) - 1
	for _, mib := range sizes {
		dir, err := writeFanOut(fanOutLevels, (mib<<20)/paths)
		if err != nil {
			return err
		}
		files := fanOutPaths(dir, fanOutLevels)
		err = measure("dir-link-fanout", mib, runs, input{
			load:    loadDir(dir),
			size:    int64(len(files)) * int64((mib<<20)/paths),
			outcome: loads,
			anchor:  each(files, os.ReadFile),
		})
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
	}
	dir, err := writeFanOut(hostileLevels, 1)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	listed := listedDirs(dir, snapshot.DefaultMaxEntries/2)
	return measure(fmt.Sprintf("dir-link-fanout-%d", hostileLevels), 0, runs, input{
		load:    loadDir(dir),
		size:    snapshot.DefaultMaxEntries,
		outcome: limited,
		anchor:  each(listed, os.ReadDir),
	})
}

// each is the anchor that calls read on every path.
func each[T any](paths []string, read func(string) (T, error)) func() error {
	return func() error {
		for _, p := range paths {
			if _, err := read(p); err != nil {
				return err
			}
		}
		return nil
	}
}

func loadDir(dir string) func() (*agentplugin.Package, error) {
	return func() (*agentplugin.Package, error) {
		return agentplugin.LoadDir(dir, agentplugin.Options{})
	}
}

// writeFanOut writes a plugin whose tree is a fan-out of levels levels
// over a bottom file of size bytes, in a new temporary directory.
func writeFanOut(levels, size int) (string, error) {
	dir, err := os.MkdirTemp("", "fanout")
	if err != nil {
		return "", err
	}
	err = os.WriteFile(filepath.Join(dir, "plugin.json"), hostile.Minimal, 0o644)
	for i := 1; i <= levels && err == nil; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%d", i))
		if err = os.Mkdir(d, 0o755); err != nil {
			break
		}
		if i == levels {
			err = os.WriteFile(filepath.Join(d, "f"), []byte(strings.Repeat("x", size)), 0o644)
			break
		}
		next := fmt.Sprintf("../d%d", i+1)
		if err = os.Symlink(next, filepath.Join(d, "a")); err == nil {
			err = os.Symlink(next, filepath.Join(d, "b"))
		}
	}
	if err != nil {
		os.RemoveAll(dir)
	}
	return dir, err
}

// fanOutPaths lists every path to the bottom file of the fan-out in dir.
func fanOutPaths(dir string, levels int) []string {
	var out []string
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		if depth == levels {
			out = append(out, filepath.Join(p, "f"))
			return
		}
		walk(filepath.Join(p, "a"), depth+1)
		walk(filepath.Join(p, "b"), depth+1)
	}
	for k := 1; k <= levels; k++ {
		walk(filepath.Join(dir, fmt.Sprintf("d%d", k)), k)
	}
	return out
}

// listedDirs lists n directories of the fan-out in dir, breadth first.
func listedDirs(dir string, n int) []string {
	queue := []string{filepath.Join(dir, "d1")}
	for i := 0; len(queue) < n; i++ {
		queue = append(queue, filepath.Join(queue[i], "a"), filepath.Join(queue[i], "b"))
	}
	return queue[:n]
}
