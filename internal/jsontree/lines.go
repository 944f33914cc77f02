package jsontree

import "bytes"

// lineBlock is the span of source one checkpoint of Lines covers: a
// position costs a scan of at most this many bytes.
const lineBlock = 4096

// Lines turns byte offsets of one source into line and column numbers in
// constant time each (a scan of at most one 4 KiB block), after a first
// call that counts the lines of the whole source once. Diagnostics use it,
// so that a file with many of them costs what its size costs.
type Lines struct {
	src []byte
	// line[i] and start[i] are the line number at offset i*lineBlock and
	// the offset where that line starts; built on the first Position.
	line, start []int
}

// NewLines returns the line index of src. It does no work until the first
// Position.
func NewLines(src []byte) *Lines { return &Lines{src: src} }

func (l *Lines) build() {
	blocks := len(l.src)/lineBlock + 1
	l.line, l.start = make([]int, blocks), make([]int, blocks)
	line, start := 1, 0
	for i := range blocks {
		l.line[i], l.start[i] = line, start
		block := l.src[i*lineBlock : min(len(l.src), (i+1)*lineBlock)]
		if n := bytes.Count(block, []byte{'\n'}); n > 0 {
			line += n
			start = i*lineBlock + bytes.LastIndexByte(block, '\n') + 1
		}
	}
}

// Position returns the 1-based line and 1-based byte column of offset
// (clamped to the end of the source).
func (l *Lines) Position(offset int) (line, col int) {
	if l.line == nil {
		l.build()
	}
	offset = max(0, min(offset, len(l.src)))
	b := offset / lineBlock
	line, start := l.line[b], l.start[b]
	if span := l.src[b*lineBlock : offset]; len(span) > 0 {
		if n := bytes.Count(span, []byte{'\n'}); n > 0 {
			line += n
			start = b*lineBlock + bytes.LastIndexByte(span, '\n') + 1
		}
	}
	return line, offset - start + 1
}
