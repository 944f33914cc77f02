package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/internal/atomicfile"
	"github.com/plugkit/plugkit/internal/boundedfile"
)

// The actions of a dataStep.
const (
	// dataReset swaps the empty directory Next in for the plugin's data:
	// the data came from another source.
	dataReset = "reset"
	// dataAdopt creates the data directory if needed and records Source as
	// the source that owns it.
	dataAdopt = "adopt"
	// dataPurge deletes the data directory and its record.
	dataPurge = "purge"
)

// dataStep is what happens to one data directory once a change commits.
// Steps are idempotent: the next writer repeats them after a crash.
type dataStep struct {
	Name   string  `json:"name"`
	Action string  `json:"action"`
	Next   string  `json:"next,omitempty"`
	Source *Source `json:"source,omitempty"`
}

// journal is what a writer must finish after committing a lock: written
// before the lock, removed after the steps. The next writer finishes the
// steps if the lock file is the one the journal names (the commit
// happened), and drops them otherwise.
type journal struct {
	// Lock is the sha256 of the lock file this change commits.
	Lock string     `json:"lock"`
	Data []dataStep `json:"data"`
	// Policy is the new policy.json prepared under HOME/.tmp, "" when the
	// policy does not change.
	Policy string `json:"policy,omitempty"`
	// RemovePolicy deletes policy.json: the home no longer has a policy.
	RemovePolicy bool `json:"removePolicy,omitempty"`
}

// txn is what a writer commits: the new lock, what becomes of data
// directories, whether trees were written (the store is then synced
// first), and the new policy file, if any.
type txn struct {
	next         *Lock
	steps        []dataStep
	wrote        bool
	policy       []byte
	removePolicy bool
}

// commit makes t.next the home's lock and applies the data steps and the
// new policy. Trees the new lock names must already be stored; trees it no
// longer names are removed last.
func (w *writer) commit(t txn) error {
	h := w.h
	if t.wrote {
		if err := syncFS(filepath.Join(h.dir, storeDir)); err != nil {
			return err
		}
	}
	for i := range t.steps {
		if t.steps[i].Action != dataReset {
			continue
		}
		next, err := w.newTmpDir("data-" + t.steps[i].Name)
		if err != nil {
			return err
		}
		t.steps[i].Next = next
	}
	j := journal{Data: t.steps, RemovePolicy: t.removePolicy}
	if t.policy != nil {
		dir, err := w.newTmpDir("policy")
		if err != nil {
			return err
		}
		j.Policy = filepath.Join(dir, PolicyFile)
		if err := writeFileAtomic(j.Policy, t.policy, 0o644); err != nil {
			return err
		}
	}
	// Whatever version was read, a writer writes the current one.
	t.next.Version = LockVersion
	newBytes, oldBytes := t.next.Encode(), w.lock.Encode()
	if bytes.Equal(newBytes, oldBytes) {
		// Nothing to commit: each step is safe on its own.
		if err := w.finish(j); err != nil {
			return err
		}
		return w.tidy()
	}
	if j.pending() {
		j.Lock = sha256Hex(newBytes)
		b, err := json.Marshal(j)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(h.path(journalFile), b, 0o644); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(h.LockPath(), newBytes, 0o644); err != nil {
		return err
	}
	crashPoint("committed")
	w.lock = t.next
	if err := w.finish(j); err != nil {
		return fmt.Errorf("committed, but finishing failed (the next plugkit run finishes it): %w", err)
	}
	if j.pending() {
		if err := os.Remove(h.path(journalFile)); err != nil {
			return err
		}
	}
	return w.tidy()
}

// pending reports whether anything follows the commit of the lock.
func (j *journal) pending() bool { return len(j.Data) > 0 || j.Policy != "" || j.RemovePolicy }

// finish applies what a journal says follows a commit: the data steps,
// then the policy. Each is idempotent.
func (w *writer) finish(j journal) error {
	for _, s := range j.Data {
		if err := w.applyStep(s); err != nil {
			return err
		}
	}
	if j.RemovePolicy {
		if err := os.Remove(w.h.path(PolicyFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return atomicfile.SyncDir(w.h.dir)
	}
	if j.Policy == "" {
		return nil
	}
	if _, err := os.Lstat(j.Policy); errors.Is(err, fs.ErrNotExist) {
		return nil // moved in already
	}
	if err := os.Rename(j.Policy, w.h.path(PolicyFile)); err != nil {
		return err
	}
	os.Remove(filepath.Dir(j.Policy)) // emptied; tidy and the next writer clear the rest
	return atomicfile.SyncDir(w.h.dir)
}

// tidy removes what the committed lock no longer needs: trees it does not
// name, and the emptied HOME/.tmp.
func (w *writer) tidy() error {
	if err := w.gcTrees(); err != nil {
		return err
	}
	os.Remove(w.h.path(tmpDir)) // only if empty; the next writer clears it otherwise
	return nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// newTmpDir makes an empty 0700 directory under HOME/.tmp.
func (w *writer) newTmpDir(prefix string) (string, error) {
	tmp := w.h.path(tmpDir)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", err
	}
	return os.MkdirTemp(tmp, prefix+"-*")
}

// recover finishes or drops what an interrupted writer left, then removes
// its leftovers. It runs under the writer lock, before anything else.
func (w *writer) recover() error {
	h := w.h
	// A journal is smaller than the lock it goes with.
	b, err := h.readBounded(h.path(journalFile))
	switch {
	case err == nil:
		if err := w.replay(b); err != nil {
			return fmt.Errorf("finishing an interrupted change (%s): %w", h.path(journalFile), err)
		}
		if err := os.Remove(h.path(journalFile)); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		// Larger than any journal plugkit writes: not ours, and not
		// something to delete unseen.
		return fmt.Errorf("reading the journal of an interrupted change (move it away if plugkit did not write it): %w", err)
	}
	if err := removeTree(h.path(tmpDir)); err != nil {
		return err
	}
	// Temporary files of interrupted atomic writes.
	for _, dir := range []string{h.dir, filepath.Join(h.dir, dataDir)} {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// replay applies a journal's steps if its lock was committed.
func (w *writer) replay(b []byte) error {
	var j journal
	if err := json.Unmarshal(b, &j); err != nil {
		// Written atomically, so never half: not ours. Nothing to finish.
		return nil
	}
	cur, err := w.h.readBounded(w.h.LockPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if sha256Hex(cur) != j.Lock {
		return nil // the crash came before the commit
	}
	for _, s := range j.Data {
		if err := w.checkStep(s); err != nil {
			return err
		}
	}
	if j.Policy != "" && filepath.Dir(filepath.Dir(j.Policy)) != w.h.path(tmpDir) {
		return fmt.Errorf("journal policy outside %s: %q", w.h.path(tmpDir), j.Policy)
	}
	return w.finish(j)
}

// checkStep refuses a journal step that would reach outside the home.
func (w *writer) checkStep(s dataStep) error {
	if err := distribution.CheckPluginID(s.Name); err != nil {
		return err
	}
	if s.Next != "" && filepath.Dir(s.Next) != w.h.path(tmpDir) {
		return fmt.Errorf("journal step outside %s: %q", w.h.path(tmpDir), s.Next)
	}
	if s.Action != dataPurge && s.Source == nil {
		return fmt.Errorf("journal step %s of %q has no source", s.Action, s.Name)
	}
	return nil
}

// applyStep performs one data step; applying it again changes nothing.
func (w *writer) applyStep(s dataStep) error {
	h := w.h
	switch s.Action {
	case dataReset:
		if _, err := os.Lstat(s.Next); err == nil {
			if err := w.trashData(s.Name); err != nil {
				return err
			}
			crashPoint("data-moved-out")
			if err := os.Rename(s.Next, h.DataDir(s.Name)); err != nil {
				return err
			}
		}
		return w.adoptData(s.Name, *s.Source)
	case dataAdopt:
		return w.adoptData(s.Name, *s.Source)
	case dataPurge:
		if err := w.trashData(s.Name); err != nil {
			return err
		}
		err := os.Remove(h.dataSourcePath(s.Name))
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return err
	}
	return fmt.Errorf("unknown data step %q", s.Action)
}

// trashData moves a data directory under HOME/.tmp, so that it vanishes
// at once, then deletes it.
func (w *writer) trashData(name string) error {
	dir := w.h.DataDir(name)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	trash, err := w.newTmpDir("trash-" + name)
	if err != nil {
		return err
	}
	if err := os.Rename(dir, filepath.Join(trash, name)); err != nil {
		return err
	}
	crashPoint("data-trashed")
	return removeTree(trash)
}

// adoptData makes sure the plugin's data directory exists, is a real
// directory with mode 0700, and records src as its source.
func (w *writer) adoptData(name string, src Source) error {
	h := w.h
	dir := h.DataDir(name)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := h.checkDataDir(name); err != nil {
		return err
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	if cur, _ := h.dataSource(name); cur != nil && *cur == src {
		return nil
	}
	b, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return writeFileAtomic(h.dataSourcePath(name), append(b, '\n'), 0o644)
}

// checkDataDir refuses a data directory that is not a real directory (a
// link could send PLUGIN_DATA, and the installer's chmod, outside the
// home). A missing one is fine.
func (h *Home) checkDataDir(name string) error {
	return checkRealDir(h.DataDir(name))
}

// checkRealDir refuses a path that exists and is not a directory: a link
// there would make a writer write where it points, outside the home.
func checkRealDir(p string) error {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (a link or a file is in the way): move it away", p)
	}
	return nil
}

// checkLayout refuses a home whose own directories (data, the store, the
// temporary directory) are links or files: they are checked like the
// entries in them.
func (h *Home) checkLayout() error {
	for _, d := range []string{dataDir, "store", storeDir, tmpDir} {
		if err := checkRealDir(h.path(d)); err != nil {
			return err
		}
	}
	return nil
}

// dataSource returns the source recorded as the owner of a data
// directory; nil when there is none or it cannot be read.
func (h *Home) dataSource(name string) (*Source, error) {
	b, err := boundedfile.Read(h.dataSourcePath(name), 64<<10, "data source record")
	if err != nil {
		return nil, err
	}
	var s Source
	if err := json.Unmarshal(b, &s); err != nil || s.check() != nil {
		return nil, fmt.Errorf("%s: not a source record", h.dataSourcePath(name))
	}
	return &s, nil
}

// dataStepFor decides what becomes of a plugin's data when it is installed
// from src: kept when it came from the same origin, or when keep is set;
// emptied otherwise. prev is the other origin's source when the data came
// from one.
func (w *state) dataStepFor(name string, src Source, keep bool) (step *dataStep, prev *Source) {
	s := src
	adopt := &dataStep{Name: name, Action: dataAdopt, Source: &s}
	if _, err := os.Lstat(w.h.DataDir(name)); err != nil {
		return adopt, nil
	}
	rec, err := w.h.dataSource(name)
	switch {
	case err != nil:
		// Data without a record of its source: keep it rather than delete
		// what plugkit did not create.
		return adopt, nil
	case *rec == src:
		return nil, nil
	case rec.Origin() == src.Origin():
		return adopt, nil
	case keep:
		return adopt, rec
	}
	return &dataStep{Name: name, Action: dataReset, Source: &s}, rec
}
