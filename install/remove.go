package install

import (
	"context"
	"errors"
	"io/fs"
	"os"
)

// RemoveOptions control Remove.
type RemoveOptions struct {
	// Purge deletes the data directories too; without it they stay for a
	// later reinstall from the same source.
	Purge bool
}

// Remove uninstalls the named plugins in one commit; their trees go once
// the lock no longer names them. With Purge, a name that is not installed
// but still has a data directory has that directory deleted.
func (h *Home) Remove(ctx context.Context, names []string, opts RemoveOptions) (*Result, error) {
	if len(names) == 0 {
		return nil, errors.New("install: no plugin to remove")
	}
	w, err := h.lockWriter(ctx)
	if err != nil {
		return nil, err
	}
	defer w.close()
	next := w.lock.clone()
	res := &Result{}
	var steps []dataStep
	for _, name := range distinct(names) {
		e := w.lock.Find(name)
		_, statErr := os.Lstat(h.DataDir(name))
		hasData := !errors.Is(statErr, fs.ErrNotExist)
		if e == nil && !(opts.Purge && hasData) {
			return nil, h.notInstalled(name)
		}
		c := &Change{Name: name, Action: ActionRemove, Old: e, DataPurged: opts.Purge && hasData}
		if e == nil {
			c.Action = ActionNone
		}
		next.Delete(name)
		if opts.Purge {
			steps = append(steps, dataStep{Name: name, Action: dataPurge})
		}
		res.Changes = append(res.Changes, c)
	}
	if err := w.commit(txn{next: next, steps: steps}); err != nil {
		return res, err
	}
	return res, nil
}
