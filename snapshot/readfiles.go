package snapshot

import (
	"errors"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"
)

// fileRead is one file the walk found: opened by the walk, in walk order,
// and read by a reader.
type fileRead struct {
	pkg, rel string
	f        openedFile
	b        []byte
	mode     fs.FileMode
	err      error
}

// readers read the files the walk opens on other goroutines while the walk
// lists on, since a plugin of many small files costs system calls, which
// run on any CPU. What they read is taken into the snapshot afterwards in
// walk order (keep), so the snapshot, and which file crosses a limit, are
// those of a serial read.
type readers struct {
	max   Limits
	queue chan *fileRead
	wg    sync.WaitGroup
	reads []*fileRead // in walk order
	// total counts the bytes read in any order; once it passes
	// MaxTotalBytes, or a read fails, stop is set and what is still queued
	// is not read, so that memory stays within the limits.
	total atomic.Int64
	stop  atomic.Bool
}

// errStopped ends the walk once a reader has met a limit or an error,
// which keep then reports.
var errStopped = errors.New("reading stopped")

// errSkipped marks a file left unread after the readers stopped.
var errSkipped = errors.New("not read")

func startReaders(limits Limits) *readers {
	r := &readers{max: limits, queue: make(chan *fileRead, 64)}
	for range max(1, runtime.GOMAXPROCS(0)-1) {
		r.wg.Go(func() {
			for fr := range r.queue {
				r.read(fr)
			}
		})
	}
	return r
}

func (r *readers) read(fr *fileRead) {
	if r.stop.Load() {
		closeOpened(fr.f)
		fr.err = errSkipped
		return
	}
	fr.b, fr.mode, fr.err = readOpened(fr.f, fr.rel, r.max.MaxFileBytes)
	if fr.err != nil && fr.err != errNotRegular || r.total.Add(int64(len(fr.b))) > r.max.MaxTotalBytes {
		r.stop.Store(true)
	}
}

// add queues the file f, opened by the walk, unless the readers stopped.
func (r *readers) add(f openedFile, rel, pkg string) error {
	if r.stop.Load() {
		closeOpened(f)
		return errStopped
	}
	fr := &fileRead{pkg: pkg, rel: rel, f: f}
	r.reads = append(r.reads, fr)
	r.queue <- fr
	return nil
}

// finish waits for the readers and takes what they read into the walk's
// snapshot, in walk order, returning the first error in that order: a
// file's, or walkErr, the walk's own, which came after every file queued.
func (r *readers) finish(w *walker, walkErr error) error {
	close(r.queue)
	r.wg.Wait()
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
		if total += int64(len(fr.b)); total > r.max.MaxTotalBytes {
			return &LimitError{Limit: "MaxTotalBytes", Value: r.max.MaxTotalBytes, Path: fr.pkg}
		}
		w.snap.Files[fr.pkg] = fr.b
		w.snap.Modes[fr.pkg] = fr.mode
	}
	return walkErr
}
