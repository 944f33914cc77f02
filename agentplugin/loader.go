package agentplugin

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/plugkit/plugkit/internal/jsontree"
	"github.com/plugkit/plugkit/skill"
	"github.com/plugkit/plugkit/snapshot"
)

// Limits bound one load. A zero field takes its default.
type Limits struct {
	MaxDiagnostics int // default 1,000; past it a last diagnostic says how many were dropped
	MaxMessageLen  int // bytes of one message (default 512)
	MaxJSONDepth   int // nesting of plugin.json and mcp.json (default 64)
	MaxSkills      int // skills discovered (default 10,000)
	MaxServers     int // MCP server entries (default 1,000)
	// Skill bounds the parsing of each SKILL.md (package skill's
	// defaults when zero).
	Skill skill.Limits
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
	// files holds the bytes the loader reads (see ReadsContent): every
	// file's for Load, the held ones' for LoadPartial. Which paths are
	// files at all is the index's to say, and their modes are mode's.
	files   map[string][]byte
	mode    func(p string) fs.FileMode
	omits   []snapshot.Omission
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
	l := newLoaderOf(s.Files, s.Mode, s.Omitted, opts)
	l.pkg.Snapshot = s
	l.index = s.Index()
	return l
}

// newLoaderOf is a loader of the files, modes and omissions of a
// snapshot or a partial read; the caller sets the index.
func newLoaderOf(files map[string][]byte, mode func(string) fs.FileMode, omits []snapshot.Omission, opts Options) *loader {
	l := &loader{
		files:   files,
		mode:    mode,
		omits:   omits,
		opts:    opts,
		limits:  opts.Limits.withDefaults(),
		pkg:     &Package{},
		omitted: make(map[string]snapshot.Reason, len(omits)),
		claimed: map[string]bool{},
	}
	for _, o := range omits {
		l.omitted[o.Path] = o.Reason
	}
	return l
}

func (l *loader) load() (*Package, error) {
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

// full reports whether MaxDiagnostics diagnostics are already kept, and
// counts the one the caller was about to report as dropped: callers check
// it before building a diagnostic, so that a dropped one costs nothing.
func (l *loader) full() bool {
	if len(l.pkg.Diagnostics) < l.limits.MaxDiagnostics {
		return false
	}
	l.dropped++
	return true
}

// report adds a diagnostic, bounded in number and message size.
func (l *loader) report(d Diagnostic) {
	if l.full() {
		return
	}
	l.keep(d)
}

func (l *loader) keep(d Diagnostic) {
	if len(d.Message) > l.limits.MaxMessageLen {
		d.Message = truncateUTF8(d.Message, l.limits.MaxMessageLen-3) + "..."
	}
	l.pkg.Diagnostics = append(l.pkg.Diagnostics, d)
}

// jsonDoc is one JSON file being checked: its package path, its tree and
// the line index that places its diagnostics.
type jsonDoc struct {
	path  string
	src   []byte
	lines *jsontree.Lines
}

// at reports a diagnostic about the JSON value at offset in d. The pointer
// is joined and the message formatted only when the diagnostic is kept.
func (l *loader) at(sev Severity, code string, d *jsonDoc, ptr pointer, offset int, format string, args ...any) {
	if !l.full() {
		l.place(sev, code, d, ptr, offset, fmt.Sprintf(format, args...))
	}
}

// atMsg is at for a message whose arguments cost something to build (a
// member name to decode): msg runs only when the diagnostic is kept. Loops
// over members use it, so that a million members past MaxDiagnostics cost
// no more than parsing them.
func (l *loader) atMsg(sev Severity, code string, d *jsonDoc, ptr pointer, offset int, msg func() string) {
	if !l.full() {
		l.place(sev, code, d, ptr, offset, msg())
	}
}

// place keeps a diagnostic about the JSON value at offset in d, once full
// has said there is room for it.
func (l *loader) place(sev Severity, code string, d *jsonDoc, ptr pointer, offset int, msg string) {
	line, col := d.lines.Position(offset)
	l.keep(Diagnostic{Severity: sev, Code: code, Path: d.path, Pointer: ptr.String(), Line: line, Column: col, Message: msg})
}

// parseJSON parses the JSON file at path, reporting a syntax error with
// codeInvalid, or codeDuplicate for a repeated member name. ok is false
// when the file is not strict JSON.
func (l *loader) parseJSON(path string, sev Severity, codeInvalid, codeDuplicate string) (d *jsonDoc, root jsontree.Node, ok bool) {
	src := l.files[path]
	d = &jsonDoc{path: path, src: src, lines: jsontree.NewLines(src)}
	tree, err := jsontree.Parse(src, l.limits.MaxJSONDepth)
	if err == nil {
		return d, tree.Root(), true
	}
	var se *jsontree.SyntaxError
	if errors.As(err, &se) {
		code := codeInvalid
		if errors.Is(err, jsontree.ErrDuplicate) {
			code = codeDuplicate
		}
		l.at(sev, code, d, ptr(se.Pointer), se.Offset, "%s", se.Msg)
	} else {
		l.report(Diagnostic{Severity: sev, Code: codeInvalid, Path: path, Message: err.Error()})
	}
	return d, root, false
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
