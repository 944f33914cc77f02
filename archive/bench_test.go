package archive_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// benchSnapshot is a plugin of n files and about total bytes of
// compressible text, one file in twenty random bytes.
func benchSnapshot(n int, total int) *snapshot.Snapshot {
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	words := []string{"skill ", "server ", "plugin ", "return ", "func ", "the ", "value\n", "config ", "{\"name\": ", "}\n"}
	files := map[string][]byte{}
	modes := map[string]fs.FileMode{}
	for i := range n {
		size := total / n
		data := make([]byte, 0, size)
		for len(data) < size {
			if i%20 == 19 {
				data = append(data, byte(rng.Uint32()))
			} else {
				data = append(data, words[rng.IntN(len(words))]...)
			}
		}
		p := fmt.Sprintf("lib/d%02d/f%05d.txt", i%97, i)
		files[p] = data[:size]
		if i%25 == 0 {
			modes[p] = 0o755
		}
	}
	s, _ := snapshot.New(files, modes)
	return s
}

var benchSizes = []struct {
	name         string
	files, bytes int
}{
	{"typical-50files-500KB", 50, 500_000},
	{"limits-10000files-60MiB", 10_000, 60 << 20},
}

func BenchmarkPack(b *testing.B) {
	for _, sz := range benchSizes {
		s := benchSnapshot(sz.files, sz.bytes)
		b.Run(sz.name, func(b *testing.B) {
			b.SetBytes(s.Size())
			for b.Loop() {
				if _, err := archive.Pack(s, archive.PackOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUnpackDigest is what an installer does with a download: check
// its digest and unpack it in memory.
func BenchmarkUnpackDigest(b *testing.B) {
	for _, sz := range benchSizes {
		s := benchSnapshot(sz.files, sz.bytes)
		packed, err := archive.Pack(s, archive.PackOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(sz.name, func(b *testing.B) {
			b.SetBytes(s.Size())
			b.ReportAllocs()
			for b.Loop() {
				archive.Digest(packed)
				if _, err := archive.Unpack(packed, archive.UnpackOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
