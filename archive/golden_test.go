package archive_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// goldenFile pins the digest of every plugin of goldenPlugins, one
// "name digest" line each.
const goldenFile = "testdata/golden-digests.txt"

// stream is a deterministic byte source, SHA-256 in counter mode: unlike
// math/rand's helpers its output is fixed by a standard, so only Pack and
// the toolchain's compress/flate can change a golden archive.
type stream struct {
	seed  string
	count uint64
	buf   []byte
}

func (s *stream) bytes(n int) []byte {
	for len(s.buf) < n {
		sum := sha256.Sum256(binary.BigEndian.AppendUint64([]byte(s.seed), s.count))
		s.count++
		s.buf = append(s.buf, sum[:]...)
	}
	b := s.buf[:n:n]
	s.buf = s.buf[n:]
	return b
}

// text is n bytes of words drawn by the stream: what deflate finds matches
// in, as it does in a plugin's manifests, skills and scripts.
func (s *stream) text(n int) []byte {
	words := []string{"skill ", "server ", "plugin ", "return ", "func ", "the ", "value\n", "config ", "{\"name\": ", "}\n", "    ", "description: "}
	b := make([]byte, 0, n+16)
	for _, c := range s.bytes(n) {
		if len(b) >= n {
			break
		}
		b = append(b, words[int(c)%len(words)]...)
	}
	return b[:n]
}

// goldenPlugins are the plugins whose archives are pinned: none, a small
// plugin under a root, a tar stream of exactly two chunks, text across 17
// chunks and incompressible data (stored blocks) across three.
func goldenPlugins() map[string]func() (*snapshot.Snapshot, archive.PackOptions) {
	const chunk = 256 << 10
	gen := func(name string, files map[string]int, random map[string]bool, exec ...string) *snapshot.Snapshot {
		src := &stream{seed: name}
		data := map[string][]byte{}
		for _, p := range slices.Sorted(maps.Keys(files)) {
			if random[p] {
				data[p] = src.bytes(files[p])
			} else {
				data[p] = src.text(files[p])
			}
		}
		modes := map[string]fs.FileMode{}
		for _, p := range exec {
			modes[p] = 0o755
		}
		s, err := snapshot.New(data, modes)
		if err != nil {
			panic(err)
		}
		return s
	}
	return map[string]func() (*snapshot.Snapshot, archive.PackOptions){
		"empty": func() (*snapshot.Snapshot, archive.PackOptions) {
			return gen("empty", nil, nil), archive.PackOptions{}
		},
		"small": func() (*snapshot.Snapshot, archive.PackOptions) {
			files := map[string]int{"plugin.json": 300, "skills/notes/SKILL.md": 2_000, "bin/run.sh": 700, "README.md": 5_000}
			return gen("small", files, nil, "bin/run.sh"), archive.PackOptions{Root: "small"}
		},
		"two-chunks": func() (*snapshot.Snapshot, archive.PackOptions) {
			// A header, then the data, then the two end blocks: 2 chunks.
			return gen("two-chunks", map[string]int{"data.txt": 2*chunk - 1536}, nil), archive.PackOptions{}
		},
		"text-17-chunks": func() (*snapshot.Snapshot, archive.PackOptions) {
			files := map[string]int{}
			for i := range 40 {
				files[fmt.Sprintf("lib/d%d/f%02d.txt", i%7, i)] = 104_000 + 17*i
			}
			return gen("text-17-chunks", files, nil), archive.PackOptions{Root: "text"}
		},
		"incompressible": func() (*snapshot.Snapshot, archive.PackOptions) {
			files := map[string]int{"assets/a.bin": 300_000, "assets/b.bin": 400_000, "notes.txt": 10_000}
			return gen("incompressible", files, map[string]bool{"assets/a.bin": true, "assets/b.bin": true}), archive.PackOptions{}
		},
	}
}

// readGolden reads goldenFile.
func readGolden(t *testing.T) map[string]string {
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pinned := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, digest, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("%s: bad line %q", goldenFile, sc.Text())
		}
		pinned[name] = digest
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pinned
}

// Archive bytes are the identity of every release, and they come from the
// toolchain's compress/flate: a Go release that compresses differently
// would change every digest. This test pins the archives of several
// plugins, so such a toolchain is seen here before anything is released
// with it (docs/install.md says which Go the pins were checked with).
func TestPackGoldenDigests(t *testing.T) {
	pinned := readGolden(t)
	plugins := goldenPlugins()
	if len(pinned) != len(plugins) {
		t.Errorf("%s pins %d plugins, the test makes %d", goldenFile, len(pinned), len(plugins))
	}
	for name, build := range plugins {
		s, opts := build()
		b, err := archive.Pack(s, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := archive.Digest(b); got != pinned[name] {
			t.Errorf("%s: packed with %s the digest is %s, pinned %s: this toolchain's compress/flate writes other bytes, and every archive digest would change (see docs/install.md)",
				name, runtime.Version(), got, pinned[name])
		}
	}
}
