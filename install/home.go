package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/boundedfile"
	"github.com/plugkit/plugkit/source"
)

// Names inside a home.
const (
	LockFile   = "plugkit.lock"
	PolicyFile = "policy.json"
	ConfigFile = "config.json"

	storeDir    = "store/sha256"
	dataDir     = "data"
	writerFile  = ".writer"
	journalFile = ".journal"
	tmpDir      = ".tmp"
)

// DefaultLockTimeout is how long a writer waits for another by default.
const DefaultLockTimeout = 30 * time.Second

// Options configure a Home. The zero value reads with default limits and
// waits DefaultLockTimeout for another writer.
type Options struct {
	// Limits bound the lock file and file lists.
	Limits Limits
	// Source says how plugins are read from their sources: directory and
	// archive limits, loader options, the Backplane client template.
	Source source.Options
	// LockTimeout bounds how long a writer waits while another changes
	// the home; 0 means DefaultLockTimeout, negative means not at all.
	LockTimeout time.Duration
	// Now is the clock of installedAt (default time.Now).
	Now func() time.Time
}

// Home is a plugin home directory. Reading it (List, Get, Verify) never
// writes and never waits for a writer; Install, Update, Remove and Sync
// take the home's writer lock.
type Home struct {
	dir  string
	opts Options
}

// DefaultDir is the home used when none is given: $PLUGKIT_HOME, else
// $XDG_DATA_HOME/plugkit, else ~/.local/share/plugkit.
func DefaultDir() (string, error) {
	if d := os.Getenv("PLUGKIT_HOME"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "plugkit"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no plugin home: set PLUGKIT_HOME or give --home (%w)", err)
	}
	return filepath.Join(home, ".local", "share", "plugkit"), nil
}

// Open returns the home at dir. It creates nothing: a home that does not
// exist yet lists no plugins, and the first writer creates it.
func Open(dir string, opts Options) (*Home, error) {
	if dir == "" {
		return nil, errors.New("install: empty home directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Limits = opts.Limits.withDefaults()
	return &Home{dir: abs, opts: opts}, nil
}

// Dir is the home's absolute path.
func (h *Home) Dir() string { return h.dir }

// LockPath is the path of plugkit.lock. Hosts watch it: every change to
// the installed plugins replaces it (by a rename) exactly once.
func (h *Home) LockPath() string { return filepath.Join(h.dir, LockFile) }

// TreePath is the store directory of the tree with archive digest d.
func (h *Home) TreePath(d string) string {
	return filepath.Join(h.dir, storeDir, strings.TrimPrefix(d, "sha256:"))
}

// filesPath is the .files list of the tree with archive digest d.
func (h *Home) filesPath(d string) string { return h.TreePath(d) + ".files" }

// DataDir is the PLUGIN_DATA directory of the plugin called name.
func (h *Home) DataDir(name string) string { return filepath.Join(h.dir, dataDir, name) }

// dataSourcePath records which source created DataDir(name). Plugin names
// never start with ".", so it cannot be another plugin's data directory.
func (h *Home) dataSourcePath(name string) string {
	return filepath.Join(h.dir, dataDir, "."+name+".source")
}

func (h *Home) path(name string) string { return filepath.Join(h.dir, name) }

// readBounded reads the lock file, or the journal that goes with it,
// within MaxLockBytes.
func (h *Home) readBounded(name string) ([]byte, error) {
	return boundedfile.Read(name, h.opts.Limits.MaxLockBytes, "MaxLockBytes")
}

// ReadLock reads plugkit.lock; a home without one has an empty lock.
func (h *Home) ReadLock() (*Lock, error) {
	b, err := h.readBounded(h.LockPath())
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Version: LockVersion, Plugins: []Entry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	l, err := ParseLock(b, h.opts.Limits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.LockPath(), err)
	}
	return l, nil
}

// Installed is an installed plugin as a host uses it: its lock entry, the
// store tree it runs from, and its PLUGIN_DATA directory.
type Installed struct {
	Entry
	// Path is the plugin's read-only tree in the store (its PLUGIN_ROOT).
	Path string
	// DataDir is its PLUGIN_DATA directory, HOME/data/NAME.
	DataDir string
}

// ErrNotInstalled is matched by the error about a name the lock does not
// list.
var ErrNotInstalled = errors.New("not installed")

// List returns every installed plugin, sorted by name, as the lock file
// says now. It reads nothing but the lock file.
func (h *Home) List() ([]Installed, error) {
	l, err := h.ReadLock()
	if err != nil {
		return nil, err
	}
	out := make([]Installed, len(l.Plugins))
	for i, e := range l.Plugins {
		out[i] = h.installed(e)
	}
	return out, nil
}

// Get returns the installed plugin called name; an error matching
// ErrNotInstalled when there is none.
func (h *Home) Get(name string) (*Installed, error) {
	l, err := h.ReadLock()
	if err != nil {
		return nil, err
	}
	e := l.Find(name)
	if e == nil {
		return nil, h.notInstalled(name)
	}
	in := h.installed(*e)
	return &in, nil
}

// notInstalled is the error about a name the lock does not list.
func (h *Home) notInstalled(name string) error {
	return fmt.Errorf("%q: %w in %s", name, ErrNotInstalled, h.dir)
}

func (h *Home) installed(e Entry) Installed {
	return Installed{Entry: e, Path: h.TreePath(e.ArchiveDigest), DataDir: h.DataDir(e.Name)}
}

// ErrGone is matched by the error of a verification that raced with a
// writer: the tree was removed or replaced while it was read, because a
// newer lock no longer names it. Read the lock again (List, Get) and
// verify what it names now.
var ErrGone = errors.New("removed or replaced while it was read: list the home again")

// ErrModified is matched by a *ModifiedError.
var ErrModified = errors.New("installed tree was modified")

// ModifiedError reports that a plugin's tree differs from its file list.
type ModifiedError struct {
	Name     string
	Problems []Problem
}

func (e *ModifiedError) Error() string {
	msg := fmt.Sprintf("%s: %s", e.Name, ErrModified)
	for i, p := range e.Problems {
		if i == 3 {
			msg += fmt.Sprintf("; and %d more", len(e.Problems)-3)
			break
		}
		msg += "; " + p.String()
	}
	return msg + " (plugkit check; plugkit sync restores it)"
}

// Is makes errors.Is(err, ErrModified) true.
func (e *ModifiedError) Is(target error) bool { return target == ErrModified }

// Verify checks an installed plugin before a host first uses it, and the
// host refuses it on error: its tree against its .files list (every file
// present with its bytes and mode, nothing missing, nothing added, no
// link), and the plugin the tree holds against the lock entry (its name,
// version and launch surface, as Load checks them). A tree that differs
// from its list is a *ModifiedError listing the differences; one that
// holds another plugin or surface a *MismatchError. When a writer removed
// or replaced the plugin meanwhile (the lock no longer names this tree for
// it, or the tree was rewritten while it was read), the error matches
// ErrGone instead: list again.
func (h *Home) Verify(in *Installed) error {
	_, err := h.Load(in, agentplugin.Options{})
	return err
}

// verifyFiles is the file-list half of Verify.
func (h *Home) verifyFiles(in *Installed) error {
	problems, err := h.verifyDigest(in.ArchiveDigest)
	if err == nil && len(problems) == 0 {
		return nil
	}
	if err == nil {
		err = &ModifiedError{Name: in.Name, Problems: problems}
	}
	return h.goneOr(in, err)
}

// goneOr is ErrGone when a writer removed or replaced in since it was
// listed (what was read is no longer what the home holds), else err.
func (h *Home) goneOr(in *Installed, err error) error {
	if cur, gerr := h.Get(in.Name); gerr != nil || cur.ArchiveDigest != in.ArchiveDigest {
		return fmt.Errorf("%s: %w", in.Name, ErrGone)
	}
	return err
}

// readFileList reads and checks the .files list of digest.
func (h *Home) readFileList(digest string) (*FileList, error) {
	b, err := boundedfile.Read(h.filesPath(digest), h.opts.Limits.MaxFilesListBytes, "MaxFilesListBytes")
	if err != nil {
		return nil, err
	}
	l, err := parseFileList(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.filesPath(digest), err)
	}
	if l.ArchiveDigest != digest {
		return nil, fmt.Errorf("%s: %w: lists %s", h.filesPath(digest), ErrFileList, l.ArchiveDigest)
	}
	return l, nil
}
