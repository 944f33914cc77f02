package cli

import (
	"bytes"
	"testing"
)

// TestPrefaultKeepsContent: prefault leaves what a buffer holds as it
// was, whatever its alignment, and takes buffers shorter than a page.
func TestPrefaultKeepsContent(t *testing.T) {
	big := bytes.Repeat([]byte("plugkit "), 3<<10) // 24 KiB
	for _, b := range [][]byte{nil, {}, big[:1], big[3:100], big[5:], big[:len(big)-7]} {
		want := bytes.Clone(b)
		prefault(b)
		if !bytes.Equal(b, want) {
			t.Fatalf("prefault changed %d bytes", len(b))
		}
	}
}
