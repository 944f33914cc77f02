package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/plugkit/plugkit/internal/filelock"
)

// ErrBusy is matched by the error of a writer that gave up waiting for
// another writer of the same home.
var ErrBusy = errors.New("another plugkit is changing this home")

// state is a home and its lock file as read at one moment: what a change
// is planned against.
type state struct {
	h    *Home
	lock *Lock
}

// writer holds a home's writer lock. Only one exists per home at a time,
// across processes. Its lock is the committed lock file, read once the
// writer lock was taken and leftovers cleaned.
type writer struct {
	state
	f *os.File
}

// lockPollInterval is how often a waiting writer retries.
const lockPollInterval = 25 * time.Millisecond

// lockWriter creates the home if needed, takes its writer lock (waiting
// up to LockTimeout), finishes or undoes what an interrupted writer left,
// and reads the lock file.
func (h *Home) lockWriter(ctx context.Context) (*writer, error) {
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(h.path(writerFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(max(h.opts.LockTimeout, 0))
	for {
		err = filelock.TryLock(f)
		if !errors.Is(err, filelock.ErrLocked) {
			break
		}
		if time.Now().After(deadline) {
			holder := lockHolder(f)
			f.Close()
			return nil, fmt.Errorf("%w (%s%s); gave up after %v: try again when it is done", ErrBusy, h.dir, holder, h.opts.LockTimeout)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockPollInterval):
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", h.path(writerFile), err)
	}
	w := &writer{state: state{h: h}, f: f}
	if err := h.checkLayout(); err != nil {
		w.close()
		return nil, err
	}
	// Who holds the lock, for the message of a writer that waits.
	filelock.Stamp(f)
	if err := w.recover(); err != nil {
		w.close()
		return nil, err
	}
	if w.lock, err = h.ReadLock(); err != nil {
		w.close()
		return nil, err
	}
	if err := w.gcTrees(); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// lockHolder says who holds the writer lock, from what the holder wrote.
func lockHolder(f *os.File) string {
	if h := filelock.Holder(f); h != "" {
		return ": held by " + h
	}
	return ""
}

// close releases the writer lock.
func (w *writer) close() {
	filelock.Unlock(w.f)
	w.f.Close()
}
