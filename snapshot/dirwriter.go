package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// ErrWriterClosed is matched by the error of a DirWriter used after Commit
// or Abort.
var ErrWriterClosed = errors.New("directory writer already committed or aborted")

// DirWriter writes a new directory file by file, for a caller that has the
// files one at a time (an archive being inflated) and may still refuse the
// whole. The files go into a temporary sibling of the directory; Commit
// flushes it and renames it into place, Abort removes it. Until Commit
// returns, the directory is left as it was.
//
// Files are written by background writers while the caller goes on: the
// files of one directory by one writer, in the order given, and files of
// different directories in parallel (creating a file costs the kernel far
// more than writing its bytes, and directories do not share that cost).
// WriteFile, Commit and Abort are called from one goroutine, and one of
// Commit or Abort must be called, which waits for the writers.
//
// Files and directories are written as WriteDir writes them (it is built on
// a DirWriter): files 0644 or 0755 (see FileMode) and directories 0755
// whatever the umask, created one path component at a time below the new
// tree, never through a link, never replacing anything.
type DirWriter struct {
	dir    string // the directory asked for, cleaned
	tmp    string // the temporary sibling the files are written into
	prefix string // tmp up to its random suffix (see aboutDir)
	top    *dirHandle
	umask  fs.FileMode

	queues []*writerQueue // one per writer started so far
	worker map[string]int // the writer of each directory, by package path
	wg     sync.WaitGroup // the writers
	seq    int            // files handed to the writers so far
	done   bool           // Commit or Abort was called
	failed atomic.Bool    // a file failed: the writers drop the rest
	mu     sync.Mutex     // guards err and errSeq
	err    error          // the failure of the earliest file that failed
	errSeq int            // its position among the files handed over

	unflushed int64         // bytes handed over since the last early flush started
	flushing  chan struct{} // closed when the early flush under way ends; nil before the first
	flushErr  error         // of the early flushes, read once flushing is closed
}

// dirJob is one file for a writer.
type dirJob struct {
	seq       int
	dir, name string // its directory's package path ("" for the root) and base name
	data      []byte
	mode      fs.FileMode // as FileMode gives it
}

// maxWriters bounds the writers of one DirWriter: one more than the CPUs,
// as a writer spends its time in the kernel making files, where it also
// waits (for locks, for memory), and another keeps the CPU busy meanwhile:
// with 2 CPUs, 3 writers made the best of five pulls of a 30 MB plugin
// (2,000 files) 5-12% faster than 2 in three rounds of interleaved runs
// at load 2 to 9. Many more only queue for the CPUs.
func maxWriters() int { return min(runtime.GOMAXPROCS(0)+1, 4) }

// writerQueue is what WriteFile hands one writer: files in batches, as
// waking a writer for each file doubled the context switches and cost
// some 6% more CPU on an archive of 10,000 files.
type writerQueue struct {
	batches chan []dirJob
	next    []dirJob // the batch being filled
	bytes   int      // of the files in next
}

// A batch is handed over at writeBatch files or writeBatchBytes bytes,
// and a writer may have queuedWrites batches waiting before WriteFile
// waits for it.
const (
	writeBatch      = 32
	writeBatchBytes = 256 << 10
	queuedWrites    = 16
)

// earlyFlushBytes is how much a DirWriter is handed between two early
// flushes of the new tree (see WriteFile).
const earlyFlushBytes = 4 << 20

// flush hands the batch being filled to the writer.
func (q *writerQueue) flush() {
	if len(q.next) > 0 {
		q.batches <- q.next
		q.next, q.bytes = nil, 0
	}
}

// CreateDir starts writing the new directory dir: it checks that dir may be
// created (see CheckNewDir) and creates the temporary sibling that will
// become it. dir's parent must exist.
func CreateDir(dir string) (w *DirWriter, err error) {
	if err := CheckNewDir(dir); err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	base := "." + filepath.Base(dir) + ".tmp-"
	prefix := filepath.Join(filepath.Dir(dir), base)
	defer func() { err = aboutDir(err, dir, prefix) }()
	tmp, err := os.MkdirTemp(filepath.Dir(dir), base+"*")
	if err != nil {
		return nil, err
	}
	top, err := openRootHandle(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &DirWriter{dir: dir, tmp: tmp, prefix: prefix, top: top, umask: processUmask(), worker: map[string]int{}}, nil
}

// WriteFile hands over the file at package path p with the bytes data, to
// be written with FileMode(mode). The writer keeps data until Commit or
// Abort returns, and the caller must not change it meanwhile.
//
// WriteFile returns an error only for a call that cannot be accepted: an
// invalid path (see CheckPath) or a writer already committed or aborted;
// Commit then fails too. An error of writing the file is reported by
// Commit, so that a caller still reading its input reaches its own verdict
// first. Two files at one path, or a file where a directory is, fail the
// writing.
func (w *DirWriter) WriteFile(p string, mode fs.FileMode, data []byte) error {
	if w.done {
		return ErrWriterClosed
	}
	if err := CheckPath(p); err != nil {
		w.fail(w.seq, err)
		return err
	}
	dir, name := "", p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir, name = p[:i], p[i+1:]
	}
	i, ok := w.worker[dir]
	if !ok {
		// Directories go to the writers in turn, so that each writer keeps
		// the directories of its files open between them.
		i = len(w.worker) % maxWriters()
		if i == len(w.queues) {
			q := &writerQueue{batches: make(chan []dirJob, queuedWrites)}
			w.queues = append(w.queues, q)
			w.wg.Go(func() { w.write(q.batches) })
		}
		w.worker[dir] = i
	}
	q := w.queues[i]
	q.next = append(q.next, dirJob{seq: w.seq, dir: dir, name: name, data: data, mode: FileMode(mode)})
	q.bytes += len(data)
	w.seq++
	if len(q.next) >= writeBatch || q.bytes >= writeBatchBytes {
		q.flush()
	}
	w.unflushed += int64(len(data))
	if w.unflushed >= earlyFlushBytes {
		w.flushEarly()
	}
	return nil
}

// flushEarly starts flushing to stable storage what the writers have
// written so far, in the background, unless a flush is still under way.
// Where one syncfs flushes the whole tree (Linux), Commit's own flush
// then waits only for what came after the last early one rather than for
// every byte, and the disk works while the files are still being made:
// the best of five pulls of a 30 MB plugin (2,000 files) took 7-25% less
// time in three rounds of interleaved runs at load 2 to 6 (against oras
// pull + tar -xzf, as bench/oci.sh runs it). Commit still flushes after
// the last file, so the tree is as durable as without; an early flush's
// error fails Commit, as syncfs reports a writeback error to one flush of
// a descriptor only.
func (w *DirWriter) flushEarly() {
	if syncEachFile {
		return // each file is flushed as it is written
	}
	if w.flushing != nil {
		select {
		case <-w.flushing:
		default:
			return
		}
	}
	w.unflushed = 0
	done := make(chan struct{})
	w.flushing = done
	go func() {
		defer close(done)
		if err := w.top.syncTree(); err != nil && w.flushErr == nil {
			w.flushErr = err
		}
	}()
}

// write is one writer: it writes the files of its queue until the queue is
// closed, and drops them once any file has failed.
func (w *DirWriter) write(q <-chan []dirJob) {
	c := cursor{open: []*dirHandle{w.top}}
	for batch := range q {
		for _, j := range batch {
			if w.failed.Load() {
				break
			}
			d, err := c.enter(j.dir, w.umask)
			if err == nil {
				err = d.create(j.name, j.data, j.mode, w.umask)
			}
			if err != nil {
				w.fail(j.seq, err)
			}
		}
	}
	if err := c.leave(0); err != nil {
		w.fail(math.MaxInt, err)
	}
}

// fail records the failure of the file at position seq; of several, the
// earliest file's is the one reported.
func (w *DirWriter) fail(seq int, err error) {
	w.failed.Store(true)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil || seq < w.errSeq {
		w.err, w.errSeq = err, seq
	}
}

// finish marks the writer done, lets the writers drain their queues and
// waits for them and for an early flush under way.
func (w *DirWriter) finish() {
	w.done = true
	for _, q := range w.queues {
		if !w.failed.Load() {
			q.flush()
		}
		close(q.batches)
	}
	w.wg.Wait()
	if w.flushing != nil {
		<-w.flushing
	}
}

// Commit waits for every file handed over to be written, flushes the new
// tree to stable storage (a syncfs on Linux, after any started as the tree
// grew, see flushEarly; elsewhere an fsync of each file and directory),
// renames it to the directory asked for and flushes the rename. On any
// failure, that of the earliest file that failed included, the temporary
// sibling is removed and the directory is left as it was. The directory
// must still not exist or be empty: one that was filled meanwhile is not
// touched.
func (w *DirWriter) Commit() (err error) {
	if w.done {
		return ErrWriterClosed
	}
	w.finish()
	defer func() {
		if err != nil {
			w.remove()
		}
		err = aboutDir(err, w.dir, w.prefix)
	}()
	if w.err != nil {
		return w.err
	}
	if w.flushErr != nil {
		return w.flushErr
	}
	if err := os.Chmod(w.tmp, 0o755); err != nil {
		return err
	}
	if err := w.top.syncTree(); err != nil {
		return err
	}
	w.top.close()
	w.top = nil
	if err := removeEmptyDir(w.dir); err != nil {
		return err
	}
	if err := os.Rename(w.tmp, w.dir); err != nil {
		return err
	}
	return syncDir(filepath.Dir(w.dir))
}

// Abort drops what was handed over: it waits for the writers, which stop
// at once, and removes the temporary sibling. The directory is left as it
// was. Abort after Commit does nothing, so that it can be deferred.
func (w *DirWriter) Abort() error {
	if w.done {
		return nil
	}
	w.failed.Store(true)
	w.finish()
	return aboutDir(w.remove(), w.dir, w.prefix)
}

// remove removes the temporary sibling.
func (w *DirWriter) remove() error {
	if w.top != nil {
		w.top.close()
		w.top = nil
	}
	return os.RemoveAll(w.tmp)
}

// removeEmptyDir removes dir if it is an empty directory, as rename never
// replaces a directory, even an empty one. It fails, touching nothing, if
// dir was filled (ErrNotEmpty, as CheckNewDir says) or replaced by a file
// meanwhile.
func removeEmptyDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0:
		// A link to an empty directory passed CheckNewDir and is replaced,
		// as it always was; a file put there meanwhile is kept.
		return &fs.PathError{Op: "rename", Path: dir, Err: fs.ErrExist}
	}
	err = os.Remove(dir)
	switch {
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return fmt.Errorf("%s: %w", dir, ErrNotEmpty)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return err
}

// cursor is one writer's way down the new tree: the directories along the
// path of the file it wrote last, kept open for the next file, which is
// most often in the same directory.
type cursor struct {
	open  []*dirHandle // open[0] is the top; open[i] is names[:i] below it
	names []string
	cur   string // names joined with '/'
}

// enter returns the directory at package path dir ("" for the top),
// creating what is missing of it.
func (c *cursor) enter(dir string, umask fs.FileMode) (*dirHandle, error) {
	if dir == c.cur {
		return c.open[len(c.open)-1], nil
	}
	var parts []string
	if dir != "" {
		parts = strings.Split(dir, "/")
	}
	common := 0
	for common < len(c.names) && common < len(parts) && c.names[common] == parts[common] {
		common++
	}
	if err := c.leave(common); err != nil {
		return nil, err
	}
	for _, name := range parts[common:] {
		d, err := c.open[len(c.open)-1].mkdir(name, umask)
		if err != nil {
			return nil, err
		}
		c.open = append(c.open, d)
		c.names = append(c.names, name)
		c.cur = dir[:len(c.cur)+len(name)+min(len(c.cur), 1)]
	}
	return c.open[len(c.open)-1], nil
}

// leave closes the directories deeper than depth, first flushing each
// where each directory is flushed on its own.
func (c *cursor) leave(depth int) error {
	var first error
	for len(c.open) > depth+1 {
		d := c.open[len(c.open)-1]
		c.open = c.open[:len(c.open)-1]
		c.names = c.names[:len(c.names)-1]
		if err := d.syncDir(); err != nil && first == nil {
			first = err
		}
		d.close()
	}
	c.cur = strings.Join(c.names, "/")
	return first
}
