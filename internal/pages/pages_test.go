package pages_test

import (
	"bytes"
	"testing"

	"github.com/plugkit/plugkit/internal/pages"
)

// TestHintsKeepContent: neither hint changes what memory holds, whatever
// its alignment, and both take memory shorter than a page, or none.
func TestHintsKeepContent(t *testing.T) {
	big := bytes.Repeat([]byte("plugkit "), 3<<10) // 24 KiB
	for _, b := range [][]byte{nil, {}, big[:1], big[3:100], big[5:], big[:len(big)-7], big[:0]} {
		want := bytes.Clone(b)
		pages.Populate(b)
		pages.Huge(b)
		if !bytes.Equal(b, want) {
			t.Fatalf("a hint changed %d bytes", len(b))
		}
	}
}
