package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Reason says why a directory reader did not read a path.
type Reason string

// The reasons a path is omitted from a snapshot.
const (
	// ReasonEscape: a link resolves outside the filesystem-resolved root.
	ReasonEscape Reason = "escapes-root"
	// ReasonCycle: a link loop, or a link to a directory that contains it.
	ReasonCycle Reason = "cycle"
	// ReasonBroken: a link whose target does not exist.
	ReasonBroken Reason = "broken-link"
	// ReasonSpecial: a fifo, socket, device or other non-regular file.
	ReasonSpecial Reason = "special-file"
	// ReasonName: a name no package path can hold (a backslash, say).
	ReasonName Reason = "invalid-name"
)

// Omission is a path a directory reader saw and did not read.
type Omission struct {
	Path   string // package path of the entry (a link's own path, not its target)
	Reason Reason
}

// ErrNotRegular is matched by the error a strict read returns for a link or
// a special file.
var ErrNotRegular = errors.New("not a regular file or directory")

// Options control ReadDir. The zero value reads with default limits.
type Options struct {
	Limits Limits
	// Strict makes any link, special file or unrepresentable name an error
	// (wrapping ErrNotRegular) instead of an omission. Publishers use it:
	// what they pack must be exactly what is on disk.
	Strict bool
}

// maxLinkHops bounds the links followed to resolve one path, as the
// kernel's own ELOOP limit does.
const maxLinkHops = 40

// maxLinkSteps bounds the path components walked to resolve one link,
// every hop's target included: long targets such as "a/../a/../…" chained
// through many links would otherwise cost thousands of steps each. A link
// that needs more is treated as a loop. Real links take a few dozen.
const maxLinkSteps = 1024

// ReadDir reads the plugin directory at root into a snapshot.
//
// The root is first resolved through links (the "filesystem-resolved plugin
// root" of spec section 4.1). Every path below it is then judged after
// resolving its links component by component against that root, without
// ever opening anything outside it: a link whose target stays inside is read
// and its bytes kept under the link's own path; a link that escapes, loops
// or dangles, and special files, are recorded in Snapshot.Omitted. Empty
// directories leave no trace.
//
// Hitting a limit is an error wrapping ErrLimit that names it. Callers must
// keep the directory stable while it is read: this guards against links,
// not against a concurrent hostile writer racing the reader.
func ReadDir(root string, opts Options) (*Snapshot, error) {
	w, err := walk(root, opts, nil)
	if err != nil {
		return nil, err
	}
	w.top.release()
	return w.snap, nil
}

// walk reads the directory at root as ReadDir documents, reading the
// bytes of the files hold accepts (every file when hold is nil) and only
// sizing the others (walker.deferred). The walker it returns holds a
// reference to the root handle, which the caller releases.
func walk(root string, opts Options, hold func(pkg string) bool) (*walker, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", root)
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	top, err := openRootHandle(real)
	if err != nil {
		return nil, err
	}
	shared := share(top)
	w := &walker{
		root:   r,
		top:    shared,
		real:   real,
		opts:   opts,
		limits: opts.Limits.withDefaults(),
		snap:   &Snapshot{}, // its maps are made by readers.finish
		stack:  map[string]bool{},
		links:  map[string]resolved{},
		types:  map[string]fs.FileMode{},
	}
	w.readers = startReaders(w.limits, hold)
	err = w.dir(shared, ".", "", 0)
	if err := w.readers.finish(w, err); err != nil {
		shared.release()
		return nil, err
	}
	sort.Slice(w.snap.Omitted, func(i, j int) bool { return w.snap.Omitted[i].Path < w.snap.Omitted[j].Path })
	return w, nil
}

type walker struct {
	root    *os.Root   // for resolving links: Lstat and Readlink inside the root
	top     *sharedDir // the root directory, to open what links resolve to
	real    string     // absolute, link-free path of the root
	opts    Options
	limits  Limits
	snap    *Snapshot
	readers *readers // read the files the walk finds
	// deferred are the regular files sized but not read (see walk).
	deferred map[string]DeferredFile
	entries  int             // directory entries listed so far
	stack    map[string]bool // link-free directories being walked: a link back to one is a cycle
	// links remembers what each link (by its link-free path) resolved to,
	// and types the type of each root-relative path looked at while
	// resolving, so that a tree reached again through another link costs
	// no system call and no walk twice.
	links map[string]resolved
	types map[string]fs.FileMode
}

// resolved is what one link resolves to.
type resolved struct {
	target string // link-free root-relative path
	why    Reason // or why it does not resolve within the root
}

func (w *walker) omit(pkg string, why Reason) error {
	if w.opts.Strict {
		return fmt.Errorf("%w: %s: %s", ErrNotRegular, pkg, why)
	}
	w.snap.Omitted = append(w.snap.Omitted, Omission{Path: pkg, Reason: why})
	return nil
}

// dir walks the link-free directory real, whose package path is pkg,
// through its open handle d: entries directly inside it are opened by name
// relative to d, so a file costs one open, not a walk from the root.
func (w *walker) dir(d *sharedDir, real, pkg string, depth int) error {
	if depth > w.limits.MaxDepth {
		return &LimitError{Limit: "MaxDepth", Value: int64(w.limits.MaxDepth), Path: pkg}
	}
	w.stack[real] = true
	defer delete(w.stack, real)
	// At most one entry past the budget is listed: a huge directory costs
	// what the limit allows, not what it holds.
	entries, err := d.list(w.limits.MaxEntries - w.entries + 1)
	if err != nil {
		return err
	}
	if w.entries += len(entries); w.entries > w.limits.MaxEntries {
		return &LimitError{Limit: "MaxEntries", Value: int64(w.limits.MaxEntries), Path: pkg}
	}
	// Sorted, so that which file crosses a limit, and so the error, does
	// not depend on the order the filesystem lists entries in.
	slices.SortFunc(entries, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	for _, e := range entries {
		name := e.name
		childPkg := name
		if pkg != "" {
			childPkg = pkg + "/" + name
		}
		// A listed name holds no '/' and is never "." or "..": only the
		// characters a package path refuses are left to check.
		if strings.ContainsAny(name, "\\\x00") {
			if err := w.omit(childPkg, ReasonName); err != nil {
				return err
			}
			continue
		}
		// parent and rel locate the entry for opening: this directory and
		// the name or, behind a link, the root and the resolved path.
		parent, rel := d, name
		typ := e.typ
		childReal := ""
		if typ.IsDir() || typ&fs.ModeSymlink != 0 {
			childReal = path.Join(real, name)
		}
		if typ&fs.ModeSymlink != 0 {
			if w.opts.Strict {
				return fmt.Errorf("%w: %s: symbolic link", ErrNotRegular, childPkg)
			}
			link, ok := w.links[childReal]
			if !ok {
				link.target, link.why = w.resolve(childReal)
				w.links[childReal] = link
			}
			if link.why != "" {
				w.snap.Omitted = append(w.snap.Omitted, Omission{Path: childPkg, Reason: link.why})
				continue
			}
			t, err := w.lstat(link.target)
			if err != nil {
				return err
			}
			parent, rel, childReal, typ = w.top, link.target, link.target, t
		}
		switch {
		case typ.IsDir():
			if w.stack[childReal] {
				if err := w.omit(childPkg, ReasonCycle); err != nil {
					return err
				}
				continue
			}
			sub, err := parent.openDir(rel)
			if err != nil {
				return err
			}
			shared := share(sub)
			err = w.dir(shared, childReal, childPkg, depth+1)
			shared.release()
			if err != nil {
				return err
			}
		case typ.IsRegular():
			// rel is a name in the directory real or, behind a link,
			// already a root-relative path.
			dirReal := real
			if parent != d {
				dirReal = "."
			}
			if err := w.file(parent, dirReal, rel, childPkg); err != nil {
				return err
			}
		default:
			if err := w.omit(childPkg, ReasonSpecial); err != nil {
				return err
			}
		}
	}
	return nil
}

// Errors of dirHandle.readFile.
var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("file too large")
)

// file queues the link-free regular file rel below parent, whose
// link-free root-relative path is dirReal, to be read into the snapshot as
// pkg.
func (w *walker) file(parent *sharedDir, dirReal, rel, pkg string) error {
	if len(w.readers.reads) >= w.limits.MaxFiles {
		return &LimitError{Limit: "MaxFiles", Value: int64(w.limits.MaxFiles), Path: pkg}
	}
	return w.readers.add(parent, dirReal, rel, pkg)
}

// resolve follows the link at the root-relative path p, component by
// component, and returns the link-free root-relative path it names. Only
// paths inside the root are ever looked at: a ".." above the root, or an
// absolute target outside the resolved root, stops the walk as an escape
// before anything there is touched.
func (w *walker) resolve(p string) (string, Reason) {
	var done []string
	pending := strings.Split(p, "/")
	for hops, steps := 0, 0; len(pending) > 0; steps++ {
		if steps > maxLinkSteps {
			return "", ReasonCycle
		}
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", ReasonEscape
			}
			done = done[:len(done)-1]
			continue
		}
		cand := path.Join(append(done, c)...)
		t, err := w.lstat(cand)
		if err != nil {
			return "", ReasonBroken
		}
		if t&fs.ModeSymlink == 0 {
			if !t.IsDir() && len(pending) > 0 {
				return "", ReasonBroken
			}
			done = append(done, c)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", ReasonCycle
		}
		target, err := w.root.Readlink(cand)
		if err != nil {
			return "", ReasonBroken
		}
		target = filepath.ToSlash(target)
		if path.IsAbs(target) {
			rel, ok := within(w.real, target)
			if !ok {
				return "", ReasonEscape
			}
			done, target = nil, rel
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	if len(done) == 0 {
		return ".", ""
	}
	return path.Join(done...), ""
}

// lstat returns the type of the root-relative path p, without following
// a link at its end, remembering it for the rest of the walk.
func (w *walker) lstat(p string) (fs.FileMode, error) {
	if t, ok := w.types[p]; ok {
		return t, nil
	}
	fi, err := w.root.Lstat(p)
	if err != nil {
		return 0, err
	}
	w.types[p] = fi.Mode().Type()
	return fi.Mode().Type(), nil
}

// within returns target relative to root when the absolute target lies
// inside root, judged lexically: an absolute target that reaches the root
// only through some other link is treated as outside.
func within(root, target string) (string, bool) {
	target = path.Clean(target)
	if target == root {
		return ".", true
	}
	rel, ok := strings.CutPrefix(target, strings.TrimSuffix(root, "/")+"/")
	return rel, ok
}

// dirEntry is one entry of a directory listing: its name and type bits.
type dirEntry struct {
	name string
	typ  fs.FileMode
}

// listAtMost lists the open directory f in batches until it ends or more
// than n entries are read, so that listing a huge directory holds no more
// than the budget in memory.
func listAtMost(f *os.File, n int) ([]dirEntry, error) {
	var all []dirEntry
	for len(all) <= n {
		want := min(1024, n+1-len(all))
		batch, err := f.ReadDir(want)
		for _, e := range batch {
			all = append(all, dirEntry{e.Name(), e.Type()})
		}
		// A short batch without error means the directory ended: ReadDir
		// fills a batch until the end. Asking again would cost one more
		// getdents per directory just to hear io.EOF.
		if errors.Is(err, io.EOF) || (err == nil && len(batch) < want) {
			return all, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return all, nil
}
