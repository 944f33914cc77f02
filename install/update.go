package install

import (
	"context"
	"fmt"
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
// identity is updated, all or nothing; its data directory is kept. The
// home's trust policy, if any, must admit every new version: a plugin
// whose update no longer satisfies it is not updated (the error matches
// trust.ErrRefused, and nothing changes).
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
		_, err = s.applyPolicy(ctx, nil, res.Changes, fetched, true)
		return res, err
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
	return res, nil
}

// planUpdate fetches the named plugins again and says what updating them
// would change.
func (s *state) planUpdate(ctx context.Context, names []string, opts UpdateOptions) (*Result, []*fetched, error) {
	entries, err := s.entries(names)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{}
	var all []*fetched
	progress := newCounter(opts.Progress, len(entries))
	for _, e := range entries {
		f, err := s.h.fetch(ctx, e.Source.parsed())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: reading %s: %w", e.Name, e.Source, err)
		}
		progress.step()
		if f.pkg.Name != e.Name {
			return nil, nil, fmt.Errorf("%s: %w: %s now holds plugin %q", e.Name, ErrSourceChanged, e.Source, f.pkg.Name)
		}
		c := &Change{Name: e.Name, Action: ActionNone, Old: e, New: e}
		if f.identity != e.Identity {
			c.New, c.Warnings = f.entry(s.h.opts.Now()), f.warnings()
			s.updateChange(c, e, f, opts.ConsentOnCode)
		}
		res.Changes = append(res.Changes, c)
		all = append(all, f)
	}
	return res, all, nil
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
