package install

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// SyncOptions control Sync.
type SyncOptions struct {
	// KeepData keeps data directories that another origin created.
	KeepData bool
	// Parallel is how many plugins are fetched at once (default 4).
	Parallel int
	// Progress, when set, is told as each plugin's tree has been checked
	// (and fetched again if it had to be).
	Progress Progress
}

// Sync makes the home match its lock file exactly: every tree the lock
// names present and intact (fetched again by its identity when it is not,
// refusing a source that now gives other bytes), every plugin's data
// directory present, and every tree the lock does not name removed. It
// needs no consent: the lock records what was approved. Two homes with
// the same lock get the same trees, byte for byte.
//
// Each plugin is synced on its own: one that fails (a source that changed,
// a fetch that failed) is ActionFailed with its error in its Change, keeps
// its lock entry and its old tree if any, and does not stop the others,
// which are restored and committed. The error then names how many failed
// and matches each cause with errors.Is.
func (h *Home) Sync(ctx context.Context, opts SyncOptions) (*Result, error) {
	w, err := h.lockWriter(ctx)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if err := w.admitAll(ctx); err != nil {
		return nil, err
	}
	n := len(w.lock.Plugins)
	res := &Result{Changes: make([]*Change, n)}
	wrote := make([]bool, n)
	errs := make([]error, n)
	par := opts.Parallel
	if par <= 0 {
		par = 4
	}
	sem := make(chan struct{}, par)
	progress := newCounter(opts.Progress, n)
	var wg sync.WaitGroup
	for i := range w.lock.Plugins {
		e := &w.lock.Plugins[i]
		res.Changes[i] = &Change{Name: e.Name, Action: ActionNone, Old: e, New: e}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			// A failure is this plugin's own: its siblings go on, so that
			// each plugin's outcome is its own and not another's cancellation.
			wrote[i], errs[i] = w.syncTree(ctx, e)
			progress.step()
		}()
	}
	wg.Wait()
	var steps []dataStep
	any := false
	var failed []error
	for i, e := range w.lock.Plugins {
		if errs[i] != nil {
			res.Changes[i].Action, res.Changes[i].Err = ActionFailed, errs[i]
			failed = append(failed, errs[i])
			continue
		}
		if wrote[i] {
			res.Changes[i].Action, any = ActionRestore, true
		}
		if err := h.checkDataDir(e.Name); err != nil {
			return res, err
		}
		step, prev := w.dataStepFor(e.Name, e.Source, opts.KeepData)
		if step != nil {
			steps = append(steps, *step)
			res.Changes[i].DataFrom = prev
			res.Changes[i].DataReset = step.Action == dataReset
		}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := w.commit(txn{next: w.lock, steps: steps, wrote: any}); err != nil {
		return res, err
	}
	if len(failed) > 0 {
		return res, fmt.Errorf("%d of %d plugins failed to sync: %w", len(failed), n, errors.Join(failed...))
	}
	return res, nil
}

// syncTree makes the stored tree of e intact, fetching it by its identity
// if needed; it reports whether it wrote one.
func (w *writer) syncTree(ctx context.Context, e *Entry) (bool, error) {
	if problems, err := w.h.verifyDigest(e.ArchiveDigest); err == nil && len(problems) == 0 {
		return false, nil
	}
	f, err := w.h.fetchIdentity(ctx, e)
	if err != nil {
		return false, err
	}
	return w.putTree(f.pkg.Snapshot, e.ArchiveDigest)
}

// admitAll applies the home's trust policy to every installed plugin. A
// lock admitted under a policy needs that very policy in the home: two
// homes with the same lock and policy.json install the same plugins.
func (w *writer) admitAll(ctx context.Context) error {
	policy, err := w.h.Policy()
	if err != nil {
		return err
	}
	if w.lock.Policy != "" && (policy == nil || policy.Digest.String() != w.lock.Policy) {
		have := "none"
		if policy != nil {
			have = policy.Digest.String()
		}
		return fmt.Errorf("%w: the lock was admitted under policy %s, and %s holds %s: copy the policy.json that goes with the lock",
			ErrPolicyMismatch, w.lock.Policy, w.h.path(PolicyFile), have)
	}
	if policy == nil {
		return nil
	}
	for i := range w.lock.Plugins {
		if _, err := w.h.admitEntry(ctx, policy, &w.lock.Plugins[i]); err != nil {
			return err
		}
	}
	return nil
}
