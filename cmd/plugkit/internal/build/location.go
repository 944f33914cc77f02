package build

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/snapshot"
)

// location is where a diagnostic points on disk, for formats that annotate
// files (SARIF, GitHub): a file path relative to a base directory, and a
// line and column (UTF-16 code units, as both formats count them; 0 when
// unknown).
type location struct {
	File         string // slash-separated, relative to the base, or absolute when outside it
	Line, Column int
	// InFile reports whether the diagnostic is located in File itself;
	// false when File is the archive or directory that was validated and
	// the diagnostic's own position is only in its text.
	InFile bool
}

// locator turns diagnostics into locations relative to a base directory,
// indexing each file's lines once, so that locating n diagnostics costs the
// file sizes plus n, whatever their number.
type locator struct {
	base  string                               // absolute base directory
	lines map[*ValidateReport]map[string][]int // line start offsets per report and file
	rels  map[string]string                    // rel's results: a file has many diagnostics
}

func newLocator(base string) (*locator, error) {
	if base == "" {
		base = "."
	}
	abs, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", base)
	}
	return &locator{base: abs, lines: map[*ValidateReport]map[string][]int{}, rels: map[string]string{}}, nil
}

// locate places d, a diagnostic of r.
func (l *locator) locate(r *ValidateReport, d agentplugin.Diagnostic) location {
	if r.dir == "" || d.Path == "" {
		return location{File: l.rel(r.Path)}
	}
	loc := location{File: l.rel(filepath.Join(r.dir, filepath.FromSlash(d.Path))), Line: d.Line, Column: d.Column, InFile: true}
	if d.Line > 0 && d.Column > 0 {
		if content, ok := r.content(d.Path); ok {
			loc.Column = l.utf16Column(r, d.Path, content, d.Line, d.Column)
		}
	}
	return loc
}

// content returns the bytes of the plugin file path, to count columns in:
// the loaded snapshot's, or, for a rejected directory, which leaves no
// snapshot, the regular file read back from disk (a link, a special file,
// one over snapshot.DefaultMaxFileBytes, or any once the files read back
// reach snapshot.DefaultMaxTotalBytes, keeps its byte columns). What is
// read back is remembered, so each file is read once.
func (r *ValidateReport) content(path string) ([]byte, bool) {
	if b, ok := r.files[path]; ok || r.Loaded || r.dir == "" {
		return b, ok && b != nil
	}
	if r.files == nil {
		r.files = map[string][]byte{}
	}
	var b []byte
	if r.readBackBytes < snapshot.DefaultMaxTotalBytes {
		b = readBack(filepath.Join(r.dir, filepath.FromSlash(path)))
		r.readBackBytes += int64(len(b))
	}
	r.files[path] = b
	return b, b != nil
}

// readBack reads the regular file p, nil when it is anything else or too
// large.
func readBack(p string) []byte {
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, snapshot.DefaultMaxFileBytes+1))
	if err != nil || len(b) > snapshot.DefaultMaxFileBytes {
		return nil
	}
	return b
}

// rel is p relative to the base, slash-separated; absolute when it lies
// outside the base, where a relative path would climb out of it.
func (l *locator) rel(p string) string {
	if r, ok := l.rels[p]; ok {
		return r
	}
	r := l.relUncached(p)
	l.rels[p] = r
	return r
}

func (l *locator) relUncached(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	rel, err := filepath.Rel(l.base, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// utf16Column converts a 1-based byte column on a 1-based line of content
// into a 1-based column in UTF-16 code units. Invalid UTF-8 counts one unit
// a byte. A position past the content is returned as it is.
func (l *locator) utf16Column(r *ValidateReport, path string, content []byte, line, col int) int {
	files := l.lines[r]
	if files == nil {
		files = map[string][]int{}
		l.lines[r] = files
	}
	starts, ok := files[path]
	if !ok {
		starts = make([]int, 1, bytes.Count(content, []byte{'\n'})+1)
		for i := bytes.IndexByte(content, '\n'); i >= 0; {
			starts = append(starts, starts[len(starts)-1]+i+1)
			i = bytes.IndexByte(content[starts[len(starts)-1]:], '\n')
		}
		files[path] = starts
	}
	if line > len(starts) {
		return col
	}
	start := starts[line-1]
	end := start + col - 1
	if end > len(content) {
		return col
	}
	units := 0
	for s := content[start:end]; len(s) > 0; {
		r, n := utf8.DecodeRune(s)
		units += max(1, utf16.RuneLen(r))
		s = s[n:]
	}
	return units + 1
}

// position is where a diagnostic points inside its plugin, as text:
// "mcp.json:7:14", "plugin.json", or "" without a path.
func position(d agentplugin.Diagnostic) string {
	switch {
	case d.Path == "" || d.Line == 0:
		return d.Path
	case d.Column == 0:
		return fmt.Sprintf("%s:%d", d.Path, d.Line)
	}
	return fmt.Sprintf("%s:%d:%d", d.Path, d.Line, d.Column)
}
