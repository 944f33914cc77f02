package install

import (
	"context"
	"fmt"
	"slices"

	"github.com/plugkit/plugkit/source"
	"github.com/plugkit/plugkit/trust"
)

// InstallOptions control Install.
type InstallOptions struct {
	// Consent is asked for every change that needs it (every new or
	// replacing install, every update that widens the launch surface).
	// Nil refuses them all.
	Consent ConsentFunc
	// Replace allows installing a plugin over one of the same name from
	// another origin.
	Replace bool
	// KeepData keeps a data directory that another origin created;
	// otherwise the plugin starts with an empty one.
	KeepData bool
	// Report reports each plugin from a Backplane registry to it (POST
	// /installations) once committed, even one already installed at that
	// release, so that running the install again sends a report that
	// failed. A failed report is in its Change (Report, ReportErr), not
	// Install's error: the installation stands.
	Report bool
	// Policy, when set, becomes the home's trust policy (stored as
	// HOME/policy.json): the plugins installed and those already installed
	// must all satisfy it. Without it the home's policy, if any, applies.
	Policy *trust.Policy
	// Progress, when set, is told as each source has been read.
	Progress Progress
}

// Install reads each source, refuses a plugin with error diagnostics,
// asks for consent, stores the trees and commits them to the lock, all or
// nothing. A source of a plugin already installed from the same origin
// updates it (consent only if its launch surface widens); the same
// identity from the same source changes nothing, unless the lock entry
// does not describe it (an edited lock), which it then records again, as
// an update from what the entry says.
//
// The Result lists the changes even when the error is ErrConsent, so that
// a caller can show what needed consent.
func (h *Home) Install(ctx context.Context, srcs []source.Source, opts InstallOptions) (*Result, error) {
	var all []*fetched
	seen := map[string]Source{}
	progress := newCounter(opts.Progress, len(srcs))
	for _, src := range srcs {
		f, err := h.fetch(ctx, src, false)
		if err != nil {
			return nil, err
		}
		progress.step()
		if other, dup := seen[f.pkg.Name]; dup {
			return nil, fmt.Errorf("%w: %s and %s both hold plugin %s", ErrConflict, other, f.src, f.pkg.Name)
		}
		seen[f.pkg.Name] = f.src
		all = append(all, f)
	}
	w, err := h.lockWriter(ctx)
	if err != nil {
		return nil, err
	}
	defer w.close()
	res := &Result{}
	var todo []*fetched
	for _, f := range all {
		c, err := w.installChange(f, opts)
		if err != nil {
			return nil, err
		}
		res.Changes = append(res.Changes, c)
		todo = append(todo, f)
	}
	ap, err := w.applyPolicy(ctx, opts.Policy, res.Changes, todo, false)
	if err != nil {
		return res, err
	}
	if err := askConsent(ctx, opts.Consent, res.Changes); err != nil {
		return res, err
	}
	if err := w.commitChanges(ctx, res.Changes, todo, opts.KeepData, ap); err != nil {
		return res, err
	}
	if opts.Report {
		h.reportAll(ctx, res.Changes, todo)
	}
	return res, nil
}

// installChange decides what installing f does.
func (w *state) installChange(f *fetched, opts InstallOptions) (*Change, error) {
	e := f.entry(w.h.opts.Now())
	c := &Change{Name: e.Name, New: e, Warnings: f.warnings()}
	old := w.lock.Find(e.Name)
	switch {
	case old == nil:
		c.Action, c.NeedsConsent = ActionInstall, true
		c.Surface = DiffSurface(nil, e.Servers)
	case old.Source.Origin() != e.Source.Origin():
		if !opts.Replace {
			return nil, fmt.Errorf("%w: %s is installed from %s; installing it from %s replaces it: add --replace",
				ErrConflict, e.Name, old.Source, e.Source)
		}
		c.Action, c.NeedsConsent, c.Old = ActionReplace, true, old
		c.Surface = DiffSurface(nil, e.Servers)
	case old.Identity == e.Identity && old.Source == e.Source && old.Version == e.Version &&
		len(DiffSurface(old.Servers, e.Servers)) == 0 && slices.Equal(old.Skills, e.Skills):
		c.Action, c.Old, c.New = ActionNone, old, old
		return c, nil
	default:
		w.updateChange(c, old, f, false)
	}
	step, prev := w.dataStepFor(e.Name, e.Source, opts.KeepData)
	c.DataFrom = prev
	c.DataReset = step != nil && step.Action == dataReset
	return c, nil
}

// updateChange fills c as an update of old to f: the surface diff, the
// code files, and whether consent is needed.
func (w *state) updateChange(c *Change, old *Entry, f *fetched, consentOnCode bool) {
	c.Action, c.Old = ActionUpdate, old
	c.Surface = DiffSurface(old.Servers, c.New.Servers)
	c.CodeFiles = w.h.codeChanges(old, f, c.New.Servers)
	for _, s := range c.Surface {
		c.NeedsConsent = c.NeedsConsent || s.NeedsConsent()
	}
	if consentOnCode && len(c.CodeFiles) > 0 {
		c.NeedsConsent = true
	}
}

// commitChanges stores the trees of the changes that do something, then
// commits the new lock and the data steps. fetched[i] is what changes[i]
// installs.
func (w *writer) commitChanges(ctx context.Context, changes []*Change, fetched []*fetched, keepData bool, ap *appliedPolicy) error {
	next := w.lock.clone()
	var steps []dataStep
	wrote := false
	for i, c := range changes {
		switch {
		case c.Action == ActionNone && c.New != c.Old:
			next.Set(*c.New) // the tree's skill list, recorded again
			continue
		case c.Action == ActionNone, c.Action == ActionFailed:
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.h.checkDataDir(c.Name); err != nil {
			return err
		}
		did, err := w.putTree(fetched[i].pkg.Snapshot, c.New.ArchiveDigest)
		if err != nil {
			return err
		}
		wrote = wrote || did
		next.Set(*c.New)
		if step, _ := w.dataStepFor(c.Name, c.New.Source, keepData); step != nil {
			steps = append(steps, *step)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t := txn{next: next, steps: steps, wrote: wrote}
	if ap != nil {
		next.Policy, t.policy = ap.policy.Digest.String(), ap.bytes
		for name, tr := range ap.trusts {
			next.Find(name).Trust = tr
		}
	}
	return w.commit(t)
}
