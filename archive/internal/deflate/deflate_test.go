package deflate

import (
	"bytes"
	"compress/flate"
	"math/rand/v2"
	"testing"
)

// stdlib is what compress/flate writes for input after dict, ended with a
// sync flush or the final block.
func stdlib(dict, input []byte, final bool) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriterDict(&b, 6, dict)
	w.Write(input)
	if final {
		w.Close()
	} else {
		w.Flush()
	}
	return b.Bytes()
}

// ours is the same through one reused Writer, input written in pieces.
func ours(w *Writer, dict, input []byte, final bool, pieces []int) []byte {
	var b bytes.Buffer
	w.ResetDict(&b, dict)
	rest := input
	for _, n := range pieces {
		n = min(n, len(rest))
		w.Write(rest[:n])
		rest = rest[n:]
	}
	w.Write(rest)
	if final {
		w.Close()
	} else {
		w.Flush()
	}
	return b.Bytes()
}

// sample is input that deflate finds matches in (text, runs, repeats) and
// random bytes.
func sample(rng *rand.Rand, n int) []byte {
	words := []string{"plugin ", "skill ", "server ", "the ", "\n", "{\"name\": ", "}", "aaaaaaaaaaaaaaaa", "0123456789"}
	b := make([]byte, 0, n)
	for len(b) < n {
		switch rng.IntN(10) {
		case 0:
			b = append(b, byte(rng.Uint32()))
		case 1:
			if len(b) > 300 { // a long repeat, past nice and past the max match
				start := rng.IntN(len(b) - 300)
				b = append(b, b[start:start+1+rng.IntN(299)]...)
			}
		default:
			b = append(b, words[rng.IntN(len(words))]...)
		}
	}
	return b[:n]
}

// The output is compress/flate's at level 6, byte for byte, for every size
// around the window and block limits, with and without a dictionary, as a
// sync-flushed chunk or a final one, written whole or in pieces, through one
// Writer reused for every stream.
func TestSameBytesAsCompressFlate(t *testing.T) {
	w := NewWriter()
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 3, 4, 5, 257, 258, 259, 4095, 32 << 10, 64<<10 - 1, 64 << 10, 64<<10 + 300, 100_000, 256 << 10, 700_000}
	for _, n := range sizes {
		dictLens := []int{0, 1, 100, 32 << 10, 40 << 10}
		if n > 64<<10 { // the large ones, with and without a whole window, keep -race runs short
			dictLens = []int{0, 32 << 10}
		}
		for _, dictLen := range dictLens {
			data := sample(rng, dictLen+n)
			dict, input := data[:dictLen], data[dictLen:]
			for _, final := range []bool{false, true} {
				pieces := []int{rng.IntN(1000), rng.IntN(70_000), 1, 0, rng.IntN(300_000)}
				if got, want := ours(w, dict, input, final, pieces), stdlib(dict, input, final); !bytes.Equal(got, want) {
					t.Fatalf("size %d dict %d final %v: %d bytes, compress/flate %d", n, dictLen, final, len(got), len(want))
				}
			}
		}
	}
	// Random bytes: stored blocks.
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if got, want := ours(w, data[:32<<10], data[32<<10:], true, nil), stdlib(data[:32<<10], data[32<<10:], true); !bytes.Equal(got, want) {
		t.Fatal("random data differs")
	}
}

func FuzzSameBytesAsCompressFlate(f *testing.F) {
	f.Add([]byte("hello hello hello world"), uint16(6), uint16(3), true)
	f.Add(bytes.Repeat([]byte("abc"), 1000), uint16(100), uint16(7), false)
	w := NewWriter()
	f.Fuzz(func(t *testing.T, data []byte, dictLen, piece uint16, final bool) {
		d := min(int(dictLen), len(data))
		dict, input := data[:d], data[d:]
		if got, want := ours(w, dict, input, final, []int{int(piece)}), stdlib(dict, input, final); !bytes.Equal(got, want) {
			t.Fatalf("differs from compress/flate: %d vs %d bytes", len(got), len(want))
		}
	})
}

func BenchmarkWriter(b *testing.B) {
	data := sample(rand.New(rand.NewPCG(3, 4)), 32<<10+256<<10)
	w := NewWriter()
	b.SetBytes(256 << 10)
	b.ReportAllocs()
	for b.Loop() {
		ours(w, data[:32<<10], data[32<<10:], false, nil)
	}
}

func BenchmarkCompressFlate(b *testing.B) {
	data := sample(rand.New(rand.NewPCG(3, 4)), 32<<10+256<<10)
	b.SetBytes(256 << 10)
	b.ReportAllocs()
	for b.Loop() {
		stdlib(data[:32<<10], data[32<<10:], false)
	}
}
