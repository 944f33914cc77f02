package agentplugin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/plugkit/plugkit/internal/jsontree"
	"github.com/plugkit/plugkit/snapshot"
)

// Limits bound one load. A zero field takes its default.
type Limits struct {
	MaxDiagnostics int // default 1,000; past it a last diagnostic says how many were dropped
	MaxMessageLen  int // bytes of one message (default 512)
	MaxJSONDepth   int // nesting of plugin.json and mcp.json (default 64)
	MaxSkills      int // skills discovered (default 10,000)
	MaxServers     int // MCP server entries (default 1,000)
}

func (l Limits) withDefaults() Limits {
	if l.MaxDiagnostics <= 0 {
		l.MaxDiagnostics = 1000
	}
	if l.MaxMessageLen <= 0 {
		l.MaxMessageLen = 512
	}
	if l.MaxJSONDepth <= 0 {
		l.MaxJSONDepth = jsontree.DefaultMaxDepth
	}
	if l.MaxSkills <= 0 {
		l.MaxSkills = 10_000
	}
	if l.MaxServers <= 0 {
		l.MaxServers = 1000
	}
	return l
}

// loader carries the state of one Load.
type loader struct {
	snap    *snapshot.Snapshot
	opts    Options
	limits  Limits
	pkg     *Package
	index   *snapshot.Index // directories implied by the paths
	omitted map[string]snapshot.Reason
	claimed map[string]bool // omitted paths a component rule reported
	dropped int             // diagnostics past MaxDiagnostics
	version *specVersion
}

func newLoader(s *snapshot.Snapshot, opts Options) *loader {
	if s == nil {
		s = &snapshot.Snapshot{}
	}
	l := &loader{
		snap:    s,
		opts:    opts,
		limits:  opts.Limits.withDefaults(),
		pkg:     &Package{Snapshot: s},
		omitted: make(map[string]snapshot.Reason, len(s.Omitted)),
		claimed: map[string]bool{},
	}
	for _, o := range s.Omitted {
		l.omitted[o.Path] = o.Reason
	}
	return l
}

func (l *loader) load() (*Package, error) {
	l.index = l.snap.Index()
	if !l.manifest() {
		return nil, l.reject()
	}
	l.extensionDirectories()
	l.skills()
	l.mcp()
	l.deniedPaths()
	if l.dropped > 0 {
		l.pkg.Diagnostics = append(l.pkg.Diagnostics, Diagnostic{Severity: Warning, Code: CodeDiagnosticsTruncated,
			Message: fmt.Sprintf("%d more diagnostics were dropped (limit MaxDiagnostics %d)", l.dropped, l.limits.MaxDiagnostics)})
	}
	return l.pkg, nil
}

func (l *loader) reject() error {
	ds := l.pkg.Diagnostics
	if l.dropped > 0 {
		ds = append(ds, Diagnostic{Severity: Warning, Code: CodeDiagnosticsTruncated,
			Message: fmt.Sprintf("%d more diagnostics were dropped", l.dropped)})
	}
	return &RejectedError{Diagnostics: ds}
}

// report adds a diagnostic, bounded in number and message size.
func (l *loader) report(d Diagnostic) {
	if len(l.pkg.Diagnostics) >= l.limits.MaxDiagnostics {
		l.dropped++
		return
	}
	if len(d.Message) > l.limits.MaxMessageLen {
		d.Message = truncateUTF8(d.Message, l.limits.MaxMessageLen-3) + "..."
	}
	l.pkg.Diagnostics = append(l.pkg.Diagnostics, d)
}

// at reports a diagnostic about a JSON node in file path.
func (l *loader) at(sev Severity, code, path string, src []byte, ptr string, offset int, format string, args ...any) {
	line, col := jsontree.LineCol(src, offset)
	l.report(Diagnostic{Severity: sev, Code: code, Path: path, Pointer: ptr, Line: line, Column: col,
		Message: fmt.Sprintf(format, args...)})
}

// parseJSON parses a JSON file, reporting a syntax error with code prefix
// (for example "manifest" → "manifest-json-invalid").
func (l *loader) parseJSON(path string, src []byte, sev Severity, codeInvalid, codeDuplicate string) *jsontree.Node {
	root, err := jsontree.Parse(src, l.limits.MaxJSONDepth)
	if err == nil {
		return root
	}
	var se *jsontree.SyntaxError
	if errors.As(err, &se) {
		code := codeInvalid
		if errors.Is(err, jsontree.ErrDuplicate) {
			code = codeDuplicate
		}
		l.at(sev, code, path, src, se.Pointer, se.Offset, "%s", se.Msg)
	} else {
		l.report(Diagnostic{Severity: sev, Code: codeInvalid, Path: path, Message: err.Error()})
	}
	return nil
}

func truncateUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	for n > 0 && n < len(s) && !isRuneStart(s[n]) {
		n--
	}
	return s[:min(n, len(s))]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// kind tells what a package path is, counting omitted entries: an omitted
// path is reported by its reason so that callers can apply the narrowest
// failure boundary of spec section 4.1.
func (l *loader) kind(p string) (snapshot.Kind, snapshot.Reason) {
	for q := p; ; {
		if r, ok := l.omitted[q]; ok {
			// Every caller reports what it finds omitted with a narrower
			// boundary than "access denied", so the path is claimed.
			l.claimed[q] = true
			return snapshot.Absent, r
		}
		i := strings.LastIndexByte(q, '/')
		if i < 0 {
			break
		}
		q = q[:i]
	}
	return l.index.Kind(p), ""
}
