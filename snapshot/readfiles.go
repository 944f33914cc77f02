package snapshot

import (
	"errors"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"
)

// sharedDir is a directory handle held by the walk and by every queued
// read of a file in it; whoever lets go of it last closes it, so a
// directory stays open exactly as long as some file in it is unread.
type sharedDir struct {
	*dirHandle
	refs atomic.Int32
}

func share(d *dirHandle) *sharedDir {
	s := &sharedDir{dirHandle: d}
	s.refs.Store(1)
	return s
}

func (s *sharedDir) hold() { s.refs.Add(1) }

func (s *sharedDir) release() {
	if s.refs.Add(-1) == 0 {
		s.close()
	}
}

// fileRead is one file the walk found, in walk order, read by a reader.
type fileRead struct {
	pkg, rel string
	dir      *sharedDir // held until the file is read
	// src is the link-free root-relative path of a deferred file: only
	// sized now, it is opened again from the root to be streamed.
	src      string
	deferred bool
	b        []byte
	size     int64
	read     bool // false when only sized, after the readers stopped
	mode     fs.FileMode
	err      error
}

// readers read the files the walk finds on other goroutines while the
// walk lists on: a plugin of many small files costs system calls (open,
// fstat, read, close), and those run on any CPU. What they read is taken
// into the snapshot afterwards in walk order (finish), so the snapshot,
// and which file crosses a limit, are those of a serial read.
type readers struct {
	max   Limits
	hold  func(pkg string) bool // nil holds every file (see walk)
	queue chan []*fileRead
	wg    sync.WaitGroup
	reads []*fileRead // in walk order
	// batch collects the files found since the last hand-over: handing
	// over each file on its own woke a reader, and cost, per file.
	batch []*fileRead
	// total counts the bytes read in any order; once it passes
	// MaxTotalBytes, or a read fails, stop is set and what is still queued
	// is only sized, not read, so that memory stays within the limits.
	// Sizes are enough for finish to find the file a serial read would
	// have stopped at, whichever reader got where first.
	total atomic.Int64
	stop  atomic.Bool
}

// readBatch is the number of files handed to a reader at once, and
// queuedBatches how many batches may wait: together they bound the
// directories held open by queued reads.
const (
	readBatch     = 64
	queuedBatches = 4
)

// errStopped ends the walk once a reader has met a limit or an error,
// which finish then reports.
var errStopped = errors.New("reading stopped")

func startReaders(limits Limits, hold func(pkg string) bool) *readers {
	r := &readers{max: limits, hold: hold, queue: make(chan []*fileRead, queuedBatches)}
	for range max(1, runtime.GOMAXPROCS(0)) {
		r.wg.Go(func() {
			var mem chunk // this reader's alone
			for batch := range r.queue {
				for _, fr := range batch {
					r.read(fr, &mem)
				}
			}
		})
	}
	return r
}

func (r *readers) read(fr *fileRead, mem *chunk) {
	defer fr.dir.release()
	switch {
	case r.stop.Load():
		fr.size, _, fr.err = fr.dir.statFile(fr.rel, r.max.MaxFileBytes)
		return
	case fr.deferred:
		// Sized by the same open as a read, so that a deferred file is
		// judged (regular, within MaxFileBytes) exactly as a read one.
		fr.size, fr.mode, fr.err = fr.dir.statFile(fr.rel, r.max.MaxFileBytes)
	default:
		fr.b, fr.mode, fr.err = fr.dir.readFile(fr.rel, r.max.MaxFileBytes, mem)
	}
	fr.read = true
	if !fr.deferred {
		fr.size = int64(len(fr.b))
	}
	if fr.err != nil && fr.err != errNotRegular || r.total.Add(fr.size) > r.max.MaxTotalBytes {
		r.stop.Store(true)
	}
}

// add queues the file rel below dir, whose link-free root-relative path
// is dirReal, unless the readers stopped.
func (r *readers) add(dir *sharedDir, dirReal, rel, pkg string) error {
	if r.stop.Load() {
		return errStopped
	}
	dir.hold()
	fr := &fileRead{pkg: pkg, rel: rel, dir: dir}
	if r.hold != nil && !r.hold(pkg) {
		fr.deferred, fr.src = true, rel
		if dirReal != "." {
			fr.src = dirReal + "/" + rel
		}
	}
	r.reads = append(r.reads, fr)
	if r.batch = append(r.batch, fr); len(r.batch) == readBatch {
		r.queue <- r.batch
		r.batch = nil
	}
	return nil
}

// finish waits for the readers and takes what they read into the walk's
// snapshot, in walk order, returning the first error in that order: a
// file's, or walkErr, the walk's own, which came after every file queued.
// Once the readers stop, some file in walk order fails or crosses
// MaxTotalBytes (every file's size counts, read or not), so a file left
// unread is never taken into a snapshot that is returned.
func (r *readers) finish(w *walker, walkErr error) error {
	if r.batch != nil {
		r.queue <- r.batch
	}
	close(r.queue)
	r.wg.Wait()
	// Sized once: growing the maps file by file rehashed them a dozen
	// times for a plugin of 10,000 files.
	held := len(r.reads)
	if r.hold != nil {
		w.deferred = map[string]DeferredFile{}
		held = 0
	}
	w.snap.Files = make(map[string][]byte, held)
	w.snap.Modes = make(map[string]fs.FileMode, held)
	var total int64
	for _, fr := range r.reads {
		switch {
		case fr.err == errNotRegular:
			if err := w.omit(fr.pkg, ReasonSpecial); err != nil {
				return err
			}
			continue
		case fr.err == errTooLarge:
			return &LimitError{Limit: "MaxFileBytes", Value: r.max.MaxFileBytes, Path: fr.pkg}
		case fr.err != nil:
			return fr.err
		}
		if total += fr.size; total > r.max.MaxTotalBytes {
			return &LimitError{Limit: "MaxTotalBytes", Value: r.max.MaxTotalBytes, Path: fr.pkg}
		}
		switch {
		case !fr.read:
			continue
		case fr.deferred:
			w.deferred[fr.pkg] = DeferredFile{Size: fr.size, Mode: fr.mode, src: fr.src}
			continue
		}
		w.snap.Files[fr.pkg] = fr.b
		w.snap.Modes[fr.pkg] = fr.mode
	}
	return walkErr
}
