package archive_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// randomSnapshot builds a snapshot of clean paths (short and long, some
// needing the USTAR prefix field, some non-ASCII), contents of sizes around
// block boundaries, and arbitrary permission bits.
func randomSnapshot(rng *rand.Rand) *snapshot.Snapshot {
	segs := []string{"a", "b", "skills", "SKILL.md", "plugin.json", "x y", "é", "日本", "-", "..a", ".hidden", "f.txt", strings.Repeat("s", 40), strings.Repeat("L", 99)}
	sizes := []int{0, 1, 511, 512, 513, 1024, 4000}
	files := map[string][]byte{}
	modes := map[string]fs.FileMode{}
	for range rng.IntN(40) {
		var parts []string
		for range 1 + rng.IntN(4) {
			parts = append(parts, segs[rng.IntN(len(segs))])
		}
		p := strings.Join(parts, "/")
		if len(p) > 200 {
			continue
		}
		data := make([]byte, sizes[rng.IntN(len(sizes))])
		for i := range data {
			data[i] = byte(rng.IntN(4)) // compressible, not constant
		}
		files[p] = data
		modes[p] = fs.FileMode(rng.IntN(0o1000))
	}
	// Drop files that are also directories of others.
	for p := range files {
		for q := range files {
			if strings.HasPrefix(q, p+"/") {
				delete(files, p)
				delete(modes, p)
				break
			}
		}
	}
	s, err := snapshot.New(files, modes)
	if err != nil {
		panic(err)
	}
	return s
}

// normalized is s with the modes Pack writes: 0755 for any execute bit,
// 0644 otherwise.
func normalized(s *snapshot.Snapshot) *snapshot.Snapshot {
	modes := map[string]fs.FileMode{}
	for p := range s.Files {
		modes[p] = 0o644
		if s.Mode(p)&0o111 != 0 {
			modes[p] = 0o755
		}
	}
	n, _ := snapshot.New(s.Files, modes)
	return n
}

func TestRoundTripProperty(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 3))
		s := randomSnapshot(rng)
		root := ""
		if seed%3 == 0 {
			root = "demo"
		}
		b, err := archive.Pack(s, archive.PackOptions{Root: root})
		if err != nil {
			if errors.Is(err, archive.ErrNameTooLong) {
				continue
			}
			t.Fatalf("seed %d: Pack: %v", seed, err)
		}
		u, err := archive.Unpack(b, archive.UnpackOptions{Root: root})
		if err != nil {
			t.Fatalf("seed %d: Unpack: %v", seed, err)
		}
		if !u.Equal(normalized(s)) {
			t.Fatalf("seed %d: Unpack(Pack(s)) != s: %v vs %v", seed, u.Paths(), s.Paths())
		}
		again, err := archive.Pack(u, archive.PackOptions{Root: root})
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("seed %d: Pack(Unpack(Pack(s))) differs (%v)", seed, err)
		}
	}
}

// Modes 0644 and 0755 survive exactly; Unpack(Pack(s)) == s.
func TestRoundTripExactModes(t *testing.T) {
	s, _ := snapshot.New(map[string][]byte{"plugin.json": []byte("{}"), "bin/run": []byte("#!/bin/sh\n"), "empty": nil},
		map[string]fs.FileMode{"bin/run": 0o755})
	b, err := archive.Pack(s, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := archive.Unpack(b, archive.UnpackOptions{})
	if err != nil || !u.Equal(s) {
		t.Fatalf("Unpack(Pack(s)) = %v, %v", u, err)
	}
}

// The same snapshot gives the same bytes, however its maps were filled;
// the digest of a fixed snapshot is pinned, so a change of format (level,
// header bytes, gzip header) is seen here first.
func TestPackIsDeterministic(t *testing.T) {
	files := map[string][]byte{}
	for i := range 50 {
		files[fmt.Sprintf("lib/f%02d.txt", 49-i)] = []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), i))
	}
	files["plugin.json"] = []byte(`{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"demo"}`)
	first, _ := snapshot.New(files, map[string]fs.FileMode{"lib/f07.txt": 0o700})
	want, err := archive.Pack(first, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		copied := map[string][]byte{}
		for p, b := range files {
			copied[p] = bytes.Clone(b)
		}
		s, _ := snapshot.New(copied, map[string]fs.FileMode{"lib/f07.txt": 0o755})
		if got, _ := archive.Pack(s, archive.PackOptions{}); !bytes.Equal(got, want) {
			t.Fatal("Pack is not deterministic")
		}
	}
	if d := archive.Digest(want); d != goldenDigest {
		t.Errorf("digest %s, pinned %s: the archive format changed", d, goldenDigest)
	}
	if want[9] != 255 || !bytes.Equal(want[4:8], []byte{0, 0, 0, 0}) || want[3] != 0 {
		t.Errorf("gzip header % x: want no flags, mtime 0, OS 255", want[:10])
	}
}

// goldenDigest pins the bytes of TestPackIsDeterministic's archive.
const goldenDigest = "sha256:dd0df7b408c4d44066038b6cfa2a7cabe35d547306a66f71d7aaa4ba2f36fb49"

// Paths that fit USTAR only through the prefix field are split there;
// anything longer is refused, never written as an extension.
func TestPackPathLengths(t *testing.T) {
	name100 := strings.Repeat("n", 100)
	prefix155 := strings.Repeat("p", 155)
	fits := []string{name100, prefix155 + "/" + name100, "a/" + name100, strings.Repeat("dd/", 40) + "f"}
	for _, p := range fits {
		s, _ := snapshot.FromFiles(map[string][]byte{p: []byte("x")})
		b, err := archive.Pack(s, archive.PackOptions{})
		if err != nil {
			t.Fatalf("%d-byte path: %v", len(p), err)
		}
		if u, err := archive.Unpack(b, archive.UnpackOptions{}); err != nil || !u.Equal(s) {
			t.Fatalf("%d-byte path: round trip %v", len(p), err)
		}
	}
	tooLong := []string{
		strings.Repeat("n", 101),                                  // no '/' to split at
		prefix155 + "p/" + name100,                                // prefix 156
		"a/" + name100 + "n",                                      // name 101
		strings.Repeat("d", 150) + "/" + strings.Repeat("e", 149), // 300 bytes
	}
	for _, p := range tooLong {
		s, _ := snapshot.FromFiles(map[string][]byte{p: []byte("x")})
		_, err := archive.Pack(s, archive.PackOptions{})
		var ee *archive.EntryError
		if !errors.Is(err, archive.ErrNameTooLong) || !errors.As(err, &ee) || ee.Path != p {
			t.Errorf("%d-byte path: err = %v", len(p), err)
		}
	}
}

func TestPackRefusesBadSnapshots(t *testing.T) {
	cases := []struct {
		files map[string][]byte
		root  string
		want  error
	}{
		{map[string][]byte{"../x": nil}, "", archive.ErrPath},
		{map[string][]byte{"/abs": nil}, "", archive.ErrPath},
		{map[string][]byte{"a": nil, "a/b": nil}, "", archive.ErrConflict},
		{map[string][]byte{"a": nil, "a-b": nil, "a/b": nil}, "", archive.ErrConflict},
		{map[string][]byte{"ok": nil}, "../up", archive.ErrPath},
		{map[string][]byte{"ok": nil}, "a/", archive.ErrPath},
	}
	for _, c := range cases {
		s := &snapshot.Snapshot{Files: c.files} // built by hand: New would refuse these
		if _, err := archive.Pack(s, archive.PackOptions{Root: c.root}); !errors.Is(err, c.want) {
			t.Errorf("%v root %q: err = %v, want %v", c.files, c.root, err, c.want)
		}
	}
	if _, err := archive.Unpack(gz(tarOf()), archive.UnpackOptions{Root: "/abs"}); !errors.Is(err, archive.ErrPath) {
		t.Errorf("Unpack with root /abs: %v", err)
	}
}

// The example plugins survive a round trip.
func TestRoundTripExamplePlugins(t *testing.T) {
	dirs, _ := fs.Glob(os.DirFS("../examples"), "*")
	if len(dirs) == 0 {
		t.Skip("no example plugins")
	}
	for _, d := range dirs {
		s, err := snapshot.ReadDir("../examples/"+d, snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := archive.Pack(s, archive.PackOptions{Root: d})
		if err != nil {
			t.Fatal(err)
		}
		u, err := archive.Unpack(b, archive.UnpackOptions{Root: d})
		if err != nil || !u.Equal(normalized(s)) {
			t.Fatalf("%s: %v", d, err)
		}
	}
}

// An archive of many chunks is compressed in parallel, yet its bytes do
// not depend on the number of CPUs, and it is one valid gzip member.
func TestPackParallelChunksAreDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	files := map[string][]byte{}
	for i := range 12 {
		data := make([]byte, 100_000+rng.IntN(100_000))
		for j := range data {
			data[j] = "abcdefgh \n"[rng.IntN(10)]
		}
		files[fmt.Sprintf("lib/f%02d", i)] = data
	}
	s, _ := snapshot.New(files, nil)
	var outs [][]byte
	for _, procs := range []int{1, 2, 7} {
		old := runtime.GOMAXPROCS(procs)
		b, err := archive.Pack(s, archive.PackOptions{})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) || !bytes.Equal(outs[0], outs[2]) {
		t.Fatal("output depends on GOMAXPROCS")
	}
	zr, err := gzip.NewReader(bytes.NewReader(outs[0]))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	if _, err := io.Copy(io.Discard, zr); err != nil {
		t.Fatalf("compress/gzip: %v", err)
	}
	if u, err := archive.Unpack(outs[0], archive.UnpackOptions{}); err != nil || !u.Equal(s) {
		t.Fatalf("round trip: %v", err)
	}
}
