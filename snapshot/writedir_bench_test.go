package snapshot_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/snapshot"
)

// BenchmarkWriteDir writes a plugin at the archive limits' scale: 10,000
// files of 6 KB in 100 directories.
func BenchmarkWriteDir(b *testing.B) {
	files := map[string][]byte{}
	body := []byte(strings.Repeat("plugin data\n", 512))
	for i := range 10_000 {
		files[fmt.Sprintf("skills/s%02d/refs/f%05d.md", i%100, i)] = body
	}
	s, err := snapshot.FromFiles(files)
	if err != nil {
		b.Fatal(err)
	}
	parent := b.TempDir()
	b.SetBytes(s.Size())
	i := 0
	for b.Loop() {
		i++
		if err := snapshot.WriteDir(filepath.Join(parent, fmt.Sprint(i)), s); err != nil {
			b.Fatal(err)
		}
	}
}
