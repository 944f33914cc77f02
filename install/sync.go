package install

import (
	"context"
	"sync"

	"github.com/plugkit/plugkit/agentplugin"
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
	note, err := w.admitAll(ctx)
	if err != nil {
		return nil, err
	}
	n := len(w.lock.Plugins)
	res := &Result{Changes: make([]*Change, n)}
	if note != "" {
		res.Warnings = []string{note}
	}
	wrote := make([]bool, n)
	skills := make([][]string, n)
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
			wrote[i], skills[i], errs[i] = w.syncTree(ctx, e)
			progress.step()
		}()
	}
	wg.Wait()
	next := w.lock.clone()
	var steps []dataStep
	any := false
	for i := range next.Plugins {
		e := &next.Plugins[i]
		if errs[i] != nil {
			res.Changes[i].Action, res.Changes[i].Err = ActionFailed, errs[i]
			continue
		}
		if wrote[i] {
			res.Changes[i].Action, any = ActionRestore, true
		}
		if skills[i] != nil {
			e.Skills = skills[i]
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
	if err := w.commit(txn{next: next, steps: steps, wrote: any}); err != nil {
		return res, err
	}
	return res, failures("sync", res)
}

// syncTree makes the stored tree of e intact, fetching it by its identity
// if needed, and checks that it holds the plugin and launch surface e
// records: a fetched tree that does not is never stored. It reports
// whether it wrote a tree, and the tree's skill list when it differs from
// the entry's.
func (w *writer) syncTree(ctx context.Context, e *Entry) (bool, []string, error) {
	var pkg *agentplugin.Package
	var err error
	problems, verr := w.h.verifyDigest(e.ArchiveDigest)
	intact := verr == nil && len(problems) == 0
	if intact {
		pkg, err = agentplugin.LoadDir(w.h.TreePath(e.ArchiveDigest), w.h.opts.Source.Load)
	} else {
		var f *fetched
		if f, err = w.h.fetchIdentity(ctx, e); err == nil {
			pkg = f.pkg
		}
	}
	if err != nil {
		return false, nil, err
	}
	warn, err := matchEntry(e, pkg)
	if err != nil {
		return false, nil, err
	}
	var skills []string
	if warn != nil {
		skills = skillNames(pkg)
	}
	if intact {
		return false, skills, nil
	}
	wrote, err := w.putTree(pkg.Snapshot, e.ArchiveDigest)
	return wrote, skills, err
}

// admitAll applies the home's trust policy to every installed plugin. A
// lock admitted under a policy needs that very policy in the home: two
// homes with the same lock and policy.json install the same plugins. It
// returns the warning about a policy the lock does not record.
func (w *writer) admitAll(ctx context.Context) (string, error) {
	policy, err := w.lockedPolicy()
	if err != nil || policy == nil {
		return "", err
	}
	for i := range w.lock.Plugins {
		if _, err := w.h.admitEntry(ctx, policy, &w.lock.Plugins[i]); err != nil {
			return "", err
		}
	}
	return w.unrecordedPolicy(policy), nil
}
