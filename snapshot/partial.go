package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
)

// ErrChanged is matched (with errors.Is) by the error of reading a deferred
// file that is no longer the regular file of the size ReadPartial found:
// removed, replaced by a link or a directory, grown or shrunk.
var ErrChanged = errors.New("changed while packing")

// Partial is a plugin directory read by ReadPartial: every file's path,
// size and mode exactly as ReadDir reads them, but the bytes of only the
// files the caller chose to hold. The others stay in the directory until
// Open streams them, so that packing a plugin does not hold its payload.
//
// A Partial is not a Snapshot on purpose: Held alone lacks the deferred
// files, so it must never be validated, packed or written as the package.
type Partial struct {
	// Held holds the bytes and modes of the held files, and every path the
	// reader omitted.
	Held *Snapshot
	// Deferred are the other regular files, by package path.
	Deferred map[string]DeferredFile
	top      *sharedDir // the root as first read, open until Close

	// mu guards the directory of the last file opened, kept open: files
	// are opened in archive order, mostly one directory after another,
	// and opening each from the root cost an openat per component.
	mu    sync.Mutex
	dir   string
	dirFD *dirHandle
}

// DeferredFile is a regular file ReadPartial sized and did not read.
type DeferredFile struct {
	Size int64
	Mode fs.FileMode // permission bits, as Snapshot.Modes holds them
	src  string      // link-free root-relative path it was sized at
}

// ReadPartial reads the plugin directory at root as ReadDir does — the
// same walk, links, limits (deferred files count towards MaxTotalBytes)
// and omissions — but keeps the bytes of only the files hold accepts, by
// package path. Every other regular file is opened and sized as a read
// one is, then left in the directory as a DeferredFile.
//
// The Partial keeps the root directory open: Close it.
func ReadPartial(root string, opts Options, hold func(pkg string) bool) (*Partial, error) {
	if hold == nil {
		return nil, errors.New("snapshot: ReadPartial needs a hold function")
	}
	w, err := walk(root, opts, hold)
	if err != nil {
		return nil, err
	}
	return &Partial{Held: w.snap, Deferred: w.deferred, top: w.top}, nil
}

// Close releases the root directory. Open fails after it.
func (p *Partial) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setDir("", nil)
	if p.top != nil {
		p.top.release()
		p.top = nil
	}
	return nil
}

// setDir replaces the kept directory.
func (p *Partial) setDir(dir string, h *dirHandle) {
	if p.dirFD != nil {
		p.dirFD.close()
	}
	p.dir, p.dirFD = dir, h
}

// openSrc opens the file at the link-free root-relative path src through
// the kept directory, opening it first when src lies in another.
func (p *Partial) openSrc(src string, max int64) (io.ReadCloser, int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.top == nil {
		return nil, 0, errors.New("the directory is closed")
	}
	dir, name := path.Split(src)
	if dir == "" {
		return p.top.openStream(name, max)
	}
	if dir != p.dir {
		h, err := p.top.openDir(strings.TrimSuffix(dir, "/"))
		if err != nil {
			return nil, 0, err
		}
		p.setDir(dir, h)
	}
	return p.dirFD.openStream(name, max)
}

// Len returns the number of files, held and deferred (see Paths).
func (p *Partial) Len() int {
	n := len(p.Deferred)
	for q := range p.Held.Files {
		if _, both := p.Deferred[q]; !both {
			n++
		}
	}
	return n
}

// Paths returns every file path, held and deferred, in byte order. A
// path in both (only a caller's edit makes one) is deferred, as Mode and
// Open take it, and listed once.
func (p *Partial) Paths() []string {
	ps := make([]string, 0, p.Len())
	for q := range p.Held.Files {
		if _, both := p.Deferred[q]; !both {
			ps = append(ps, q)
		}
	}
	for q := range p.Deferred {
		ps = append(ps, q)
	}
	sort.Strings(ps)
	return ps
}

// Index builds an index of every file, held and deferred.
func (p *Partial) Index() *Index {
	return &Index{isFile: p.isFile, paths: p.Paths()}
}

func (p *Partial) isFile(q string) bool {
	if _, ok := p.Held.Files[q]; ok {
		return true
	}
	_, ok := p.Deferred[q]
	return ok
}

// Mode returns the permission bits of the file at path, held or
// deferred, DefaultMode when none is recorded.
func (p *Partial) Mode(path string) fs.FileMode {
	if f, ok := p.Deferred[path]; ok {
		return f.Mode.Perm()
	}
	return p.Held.Mode(path)
}

// Remove drops the file at path, held or deferred.
func (p *Partial) Remove(path string) {
	delete(p.Held.Files, path)
	delete(p.Held.Modes, path)
	delete(p.Deferred, path)
}

// Open opens the deferred file at path for reading, with the rules of the
// first read: from the root directory then held open, one component at a
// time without following any link (a link the reader followed is opened
// at the target it resolved to), and only a regular file. It must still
// be of the size found then, and the reader yields exactly that many
// bytes; otherwise the error matches ErrChanged.
//
// Open is safe for concurrent use, but meant for one file after another
// in archive order: it keeps the directory of the last file open.
//
// Only the size is compared, not the content: the loader never reads a
// deferred file's bytes, so its verdict cannot depend on them, and an
// archive of a file rewritten in place is what packing it a moment later
// would give.
func (p *Partial) Open(path string) (io.ReadCloser, error) {
	f, ok := p.Deferred[path]
	if !ok || f.src == "" {
		return nil, fmt.Errorf("snapshot: %s is not a file ReadPartial deferred", path)
	}
	// A file that grew fails with errTooLarge: only its size is asked.
	r, size, err := p.openSrc(f.src, f.Size)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, changed(path, "it was removed")
	case err == errNotRegular || replaced(err):
		return nil, changed(path, "it is no longer a regular file inside the plugin")
	case err == errTooLarge:
		return nil, grew(path, f.Size)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case size != f.Size:
		r.Close()
		return nil, changed(path, fmt.Sprintf("it has %d bytes, not the %d it had", size, f.Size))
	}
	return &sizedReader{r: r, path: path, size: f.Size, left: f.Size}, nil
}

func changed(path, why string) error {
	return fmt.Errorf("%s %w: %s", path, ErrChanged, why)
}

func grew(path string, size int64) error {
	return changed(path, fmt.Sprintf("it grew past the %d bytes it had", size))
}

// sizedReader yields exactly size bytes of r, and an ErrChanged error
// when r ends sooner, or still has bytes when asked for more.
type sizedReader struct {
	r          io.ReadCloser
	path       string
	size, left int64
	probe      [1]byte
}

func (s *sizedReader) Read(b []byte) (int, error) {
	if s.left == 0 {
		switch n, err := s.r.Read(s.probe[:]); {
		case n > 0:
			return 0, grew(s.path, s.size)
		case err != nil && err != io.EOF:
			return 0, fmt.Errorf("%s: %w", s.path, err)
		}
		return 0, io.EOF
	}
	if int64(len(b)) > s.left {
		b = b[:s.left]
	}
	n, err := s.r.Read(b)
	s.left -= int64(n)
	if err == io.EOF {
		if s.left > 0 {
			return n, changed(s.path, fmt.Sprintf("it shrank to %d bytes from %d", s.size-s.left, s.size))
		}
		return n, nil
	}
	if err != nil {
		return n, fmt.Errorf("%s: %w", s.path, err)
	}
	return n, nil
}

func (s *sizedReader) Close() error { return s.r.Close() }
