package archive_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// fuzzLimits keep each fuzz run fast; the invariants are checked against
// them.
var fuzzLimits = archive.Limits{MaxUncompressedBytes: 4 << 20, MaxTotalBytes: 2 << 20, MaxFileBytes: 1 << 20, MaxFiles: 500, MaxEntries: 1000, MaxDepth: 8}

// sentinels are the errors every Unpack failure must match one of.
var sentinels = []error{
	archive.ErrSymlink, archive.ErrHardLink, archive.ErrSpecial, archive.ErrType, archive.ErrPAX, archive.ErrGNU,
	archive.ErrMagic, archive.ErrChecksum, archive.ErrHeader, archive.ErrPath, archive.ErrDuplicate, archive.ErrConflict,
	archive.ErrOutsideRoot, archive.ErrSize, archive.ErrTruncated, archive.ErrTrailingData, archive.ErrGzip, archive.ErrLimit,
}

// fuzzSeeds are the hostile corpus and a few valid archives.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	for _, c := range hostileArchives(false) {
		seeds = append(seeds, c.b)
	}
	s, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(`{"name":"demo"}`), "skills/a/SKILL.md": []byte("---\nname: a\n---\n")})
	for _, root := range []string{"", "demo"} {
		b, _ := archive.Pack(s, archive.PackOptions{Root: root})
		seeds = append(seeds, b)
	}
	seeds = append(seeds, gz(tarOf(dir("demo/"), file("demo/plugin.json", "{}"), raw{name: "demo/x", mode: "0004755", data: []byte("x")})))
	return seeds
}

func matchesSentinel(err error) bool {
	for _, e := range sentinels {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzUnpack checks that Unpack never panics, fails only with the
// package's errors, and returns only what the limits and the path rules
// allow, which then packs and unpacks to itself.
func FuzzUnpack(f *testing.F) {
	for _, b := range fuzzSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := archive.Unpack(b, archive.UnpackOptions{Limits: fuzzLimits})
		// A stream, its data given to OnFile only, reads the same.
		n, nerr := unpackNoData(b, fuzzLimits)
		if (err == nil) != (nerr == nil) || err == nil && !n.Equal(s) {
			t.Fatalf("UnpackFrom with NoData: %v; Unpack: %v", nerr, err)
		}
		if nerr != nil && !matchesSentinel(nerr) {
			t.Fatalf("UnpackFrom: error matches no sentinel: %v", nerr)
		}
		// The OCI layer reader's GNU switch only widens what is accepted:
		// a USTAR archive reads the same with it.
		g, gerr := archive.Unpack(b, archive.UnpackOptions{Limits: fuzzLimits, GNUMagic: true})
		if err == nil && (gerr != nil || !g.Equal(s)) {
			t.Fatalf("GNUMagic reads a USTAR archive differently: %v", gerr)
		}
		if gerr != nil && !matchesSentinel(gerr) {
			t.Fatalf("GNUMagic: error matches no sentinel: %v", gerr)
		}
		if err != nil {
			if !matchesSentinel(err) {
				t.Fatalf("error matches no sentinel: %v", err)
			}
			return
		}
		if len(s.Files) > fuzzLimits.MaxFiles || s.Size() > fuzzLimits.MaxTotalBytes {
			t.Fatalf("%d files, %d bytes past the limits", len(s.Files), s.Size())
		}
		for p, data := range s.Files {
			if snapshot.CheckPath(p) != nil || int64(len(data)) > fuzzLimits.MaxFileBytes || s.Mode(p)&^0o777 != 0 ||
				strings.Count(p, "/") > fuzzLimits.MaxDepth {
				t.Fatalf("unsafe entry %q mode %v size %d", p, s.Mode(p), len(data))
			}
		}
		packed, err := archive.Pack(s, archive.PackOptions{})
		if err != nil {
			t.Fatalf("Pack of an unpacked snapshot: %v", err)
		}
		u, err := archive.Unpack(packed, archive.UnpackOptions{Limits: fuzzLimits})
		if err != nil || len(u.Files) != len(s.Files) {
			t.Fatalf("re-unpack: %v", err)
		}
	})
}

// TestWriteFuzzCorpus writes the seeds to testdata/fuzz/FuzzUnpack when
// PLUGKIT_WRITE_FUZZ_CORPUS=1, so the corpus in the repository follows the
// generator.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("PLUGKIT_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set PLUGKIT_WRITE_FUZZ_CORPUS=1 to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzUnpack")
	os.MkdirAll(dir, 0o755)
	unsafe := regexp.MustCompile(`[^a-z0-9]+`)
	names := map[string][]byte{}
	for _, c := range hostileArchives(false) {
		names["hostile-"+strings.Trim(unsafe.ReplaceAllString(strings.ToLower(c.name), "-"), "-")] = c.b
	}
	for i, b := range fuzzSeeds()[len(names):] {
		names[fmt.Sprintf("valid-%d", i)] = b
	}
	for name, b := range names {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
