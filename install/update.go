package install

import (
	"context"
	"errors"
	"fmt"

	"github.com/plugkit/plugkit/agentplugin"
)

// UpdateOptions control Update.
type UpdateOptions struct {
	// Consent is asked for every update that widens the launch surface
	// (and, with ConsentOnCode, every one that changes code). Nil refuses.
	Consent ConsentFunc
	// ConsentOnCode makes changed files under the paths of "./" commands
	// need consent too; the home's config.json can set it as well.
	ConsentOnCode bool
	// DryRun computes the changes and writes nothing (and needs no
	// consent).
	DryRun bool
	// Report reports each named plugin from a Backplane registry to it
	// once committed ("updated", or "installed" when it was up to date);
	// a failed report is in its Change, as for Install.
	Report bool
	// Progress, when set, is told as each plugin's source has been read
	// again.
	Progress Progress
}

// Update reads the source of each named plugin again (every installed
// plugin when names is empty): a channel or tag is resolved again, a
// directory or archive read again. A plugin whose source gives another
// identity is updated; its data directory is kept. A plugin that cannot
// be read again (or whose installed tree is not what its lock entry
// describes, ErrLockMismatch) is ActionFailed with its error in its
// Change and the others are updated; the error then names how many failed.
// Consent and the home's trust policy stay all or nothing: the policy, if
// any, must admit every new version, and a plugin whose update no longer
// satisfies it stops the update (the error matches trust.ErrRefused, and
// nothing changes).
func (h *Home) Update(ctx context.Context, names []string, opts UpdateOptions) (*Result, error) {
	cfg, err := h.ReadConfig()
	if err != nil {
		return nil, err
	}
	opts.ConsentOnCode = opts.ConsentOnCode || cfg.ConsentOnCode
	if opts.DryRun {
		lock, err := h.ReadLock()
		if err != nil {
			return nil, err
		}
		s := &state{h: h, lock: lock}
		res, fetched, err := s.planUpdate(ctx, names, opts)
		if err != nil {
			return res, err
		}
		if _, err = s.applyPolicy(ctx, nil, res.Changes, fetched, true); err != nil {
			return res, err
		}
		return res, failures("update", res)
	}
	w, err := h.lockWriter(ctx)
	if err != nil {
		return nil, err
	}
	defer w.close()
	res, fetched, err := w.planUpdate(ctx, names, opts)
	if err != nil {
		return res, err
	}
	ap, err := w.applyPolicy(ctx, nil, res.Changes, fetched, false)
	if err != nil {
		return res, err
	}
	if err := askConsent(ctx, opts.Consent, res.Changes); err != nil {
		return res, err
	}
	if err := w.commitChanges(ctx, res.Changes, fetched, true, ap); err != nil {
		return res, err
	}
	if opts.Report {
		h.reportAll(ctx, res.Changes, fetched)
	}
	return res, failures("update", res)
}

// planUpdate fetches the named plugins again and says what updating them
// would change. A plugin that cannot be updated (its source unreachable or
// holding another plugin, its installed tree not the one its entry
// describes) is ActionFailed with its error, and the others are planned;
// fetched is nil for it.
func (s *state) planUpdate(ctx context.Context, names []string, opts UpdateOptions) (*Result, []*fetched, error) {
	entries, err := s.entries(names)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{}
	all := make([]*fetched, len(entries))
	progress := newCounter(opts.Progress, len(entries))
	for i, e := range entries {
		c := &Change{Name: e.Name, Action: ActionNone, Old: e, New: e}
		res.Changes = append(res.Changes, c)
		f, err := s.planOne(ctx, c, opts)
		progress.step()
		if err != nil {
			c.Action, c.Err = ActionFailed, err
			continue
		}
		all[i] = f
	}
	return res, all, nil
}

// planOne plans the update of c.Old.
func (s *state) planOne(ctx context.Context, c *Change, opts UpdateOptions) (*fetched, error) {
	e := c.Old
	skills, err := s.installedSkills(e)
	if err != nil {
		return nil, err
	}
	f, err := s.h.fetch(ctx, e.Source.parsed(), e.Source.PlainHTTP)
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", e.Name, e.Source, err)
	}
	if f.pkg.Name != e.Name {
		return nil, fmt.Errorf("%s: %w: %s now holds plugin %q", e.Name, ErrSourceChanged, e.Source, f.pkg.Name)
	}
	switch {
	case f.identity != e.Identity:
		c.New, c.Warnings = f.entry(s.h.opts.Now()), f.warnings()
		s.updateChange(c, e, f, opts.ConsentOnCode)
	case skills != nil:
		// Up to date, with the skill list of its tree recorded again.
		up := *e
		up.Skills = skills
		c.New = &up
	}
	return f, nil
}

// installedSkills checks the stored tree of e against e, as Home.Load
// does, when it is intact (a missing or modified tree is sync's to
// restore). It returns the tree's skill list when only that differs.
func (s *state) installedSkills(e *Entry) ([]string, error) {
	if problems, err := s.h.verifyDigest(e.ArchiveDigest); err != nil || len(problems) > 0 {
		return nil, nil
	}
	pkg, err := agentplugin.LoadDir(s.h.TreePath(e.ArchiveDigest), s.h.opts.Source.Load)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.Name, err)
	}
	warn, err := matchEntry(e, pkg)
	if err != nil || warn == nil {
		return nil, err
	}
	return skillNames(pkg), nil
}

// FailedError is the error of an operation (Sync, Update) that went on
// for every plugin it could and failed for some: each failed plugin's
// Change is ActionFailed with its own error, and the others' changes
// stand. errors.Is and errors.As match each cause.
type FailedError struct {
	// Verb is the operation ("sync", "update"); Total how many plugins
	// it was for.
	Verb  string
	Total int
	// Errs are the failed plugins' errors, in lock order.
	Errs []error
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("%d of %d plugins failed to %s: %v", len(e.Errs), e.Total, e.Verb, errors.Join(e.Errs...))
}

// Unwrap returns the failed plugins' errors.
func (e *FailedError) Unwrap() []error { return e.Errs }

// failures is the *FailedError of res, nil when no plugin failed.
func failures(verb string, res *Result) error {
	fe := &FailedError{Verb: verb, Total: len(res.Changes)}
	for _, c := range res.Changes {
		if c.Action == ActionFailed {
			fe.Errs = append(fe.Errs, c.Err)
		}
	}
	if len(fe.Errs) == 0 {
		return nil
	}
	return fe
}

// entries returns the lock entries called names, in order and without
// repeats; every entry when names is empty.
func (s *state) entries(names []string) ([]*Entry, error) {
	if len(names) == 0 {
		out := make([]*Entry, len(s.lock.Plugins))
		for i := range s.lock.Plugins {
			out[i] = &s.lock.Plugins[i]
		}
		return out, nil
	}
	var out []*Entry
	for _, n := range distinct(names) {
		e := s.lock.Find(n)
		if e == nil {
			return nil, s.h.notInstalled(n)
		}
		out = append(out, e)
	}
	return out, nil
}

// distinct returns names in their order, each once.
func distinct(names []string) []string {
	out := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
