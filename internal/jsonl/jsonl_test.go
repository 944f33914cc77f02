package jsonl

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/plugkit/plugkit/internal/hostile"
)

// filtered reads everything through a Filter that takes the lines
// holding "take", and returns what was read and what was taken.
func filtered(t *testing.T, in string, limit int) (read string, taken []string) {
	t.Helper()
	f := NewFilter(strings.NewReader(in), limit, func(line []byte) bool {
		if bytes.Contains(line, []byte("take")) {
			taken = append(taken, string(line))
			return true
		}
		return false
	})
	b, err := io.ReadAll(iotest{f})
	if err != nil {
		t.Fatal(err)
	}
	return string(b), taken
}

// iotest reads in small pieces, as a JSON decoder may.
type iotest struct{ r io.Reader }

func (r iotest) Read(p []byte) (int, error) { return r.r.Read(p[:min(len(p), 7)]) }

func TestFilterTakesWholeLinesAndPassesTheRest(t *testing.T) {
	in := `{"a":1}` + "\n" + `{"take":1}` + "\r\n" + `{"b":2}` + "\n\n" + `{"take":2}` + "\n" + `{"c":3}`
	read, taken := filtered(t, in, 1<<20)
	if want := `{"a":1}` + "\n" + `{"b":2}` + "\n\n" + `{"c":3}`; read != want {
		t.Errorf("read %q, want %q", read, want)
	}
	if len(taken) != 2 || taken[0] != `{"take":1}` || taken[1] != `{"take":2}` {
		t.Errorf("taken %q: want both lines without their line endings", taken)
	}
}

// A last line without its newline is never taken: the stream ended in
// it, and the reader judges it.
func TestFilterLeavesAnUnfinishedLastLine(t *testing.T) {
	read, taken := filtered(t, `{"a":1}`+"\n"+`{"take":1}`, 1<<20)
	if read != `{"a":1}`+"\n"+`{"take":1}` || taken != nil {
		t.Errorf("read %q, taken %q", read, taken)
	}
}

// Lines longer than the buffer are offered whole; lines over the limit
// are passed through, never offered, and the lines after them are.
func TestFilterLongLines(t *testing.T) {
	long := `{"take":"` + strings.Repeat("x", 3*bufferSize) + `"}`
	read, taken := filtered(t, long+"\n"+`{"a":1}`+"\n", 1<<20)
	if len(taken) != 1 || taken[0] != long || read != `{"a":1}`+"\n" {
		t.Errorf("a line of %d bytes under the limit: taken %d lines, read %q", len(long), len(taken), read)
	}
	read, taken = filtered(t, long+"\n"+`{"take":2}`+"\n", 2*bufferSize)
	if read != long+"\n" || len(taken) != 1 || taken[0] != `{"take":2}` {
		t.Errorf("a line over the limit: read %d bytes, taken %q", len(read), taken)
	}
}

// A message spread over several lines stops the taking for good, so that
// no line is taken out of the middle of a message.
func TestFilterStopsAtAMessageOverSeveralLines(t *testing.T) {
	in := `{"take":0}` + "\n" + "[\n" + `{"take":1}` + "\n]\n" + `{"take":2}` + "\n"
	read, taken := filtered(t, in, 1<<20)
	if want := "[\n" + `{"take":1}` + "\n]\n" + `{"take":2}` + "\n"; read != want || len(taken) != 1 {
		t.Errorf("read %q (want %q), taken %q", read, want, taken)
	}
}

func TestWriterKeepsMessagesWhole(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(nopCloser{&buf})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				w.Write([]byte(`{"n":` + strings.Repeat("1", i+1) + "}\n"))
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"n":`) || !strings.HasSuffix(l, "}") || strings.Trim(l[5:len(l)-1], "1") != "" {
			t.Fatalf("interleaved line %q", l)
		}
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// TestFilterCostIsLinear: whatever the shape of the stream — one long
// line built from many buffer-sized pieces, a line over the limit read
// through, or many tiny lines — reading it through a Filter costs what
// its size costs.
func TestFilterCostIsLinear(t *testing.T) {
	const small, large = 256 << 10, 4 << 20
	shapes := map[string]func(size int) string{
		"one line taken": func(size int) string {
			return `{"take":"` + strings.Repeat("x", size) + `"}` + "\n"
		},
		"one line over the limit": func(size int) string {
			return `{"a":"` + strings.Repeat("x", size) + `"}` + "\n"
		},
		"many tiny lines": func(size int) string {
			return strings.Repeat(`{"take":1}`+"\n"+`{"a":1}`+"\n", size/19)
		},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			limit := 2 * large
			if name == "one line over the limit" {
				limit = small / 2
			}
			run := func(in string) func() {
				return func() {
					f := NewFilter(strings.NewReader(in), limit, func(line []byte) bool { return bytes.HasPrefix(line, []byte(`{"take"`)) })
					if _, err := io.Copy(io.Discard, f); err != nil {
						t.Fatal(err)
					}
				}
			}
			hostile.Linear(t, name, large/small, run(shape(small)), run(shape(large)))
		})
	}
}
