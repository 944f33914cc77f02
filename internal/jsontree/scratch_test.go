package jsontree

import (
	"testing"

	"github.com/plugkit/plugkit/internal/hostile"
)

func BenchmarkScratchParse(b *testing.B) {
	for _, sh := range hostile.Shapes {
		doc := sh.Document(4 << 20)
		b.Run(sh.Name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(doc, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
