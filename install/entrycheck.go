package install

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/plugkit/plugkit/agentplugin"
)

// ErrLockMismatch is matched by a *MismatchError: a lock entry that does
// not describe the tree it names.
var ErrLockMismatch = errors.New("the tree does not match its lock entry")

// CodeSkillsDiffer is the code of the warning diagnostic about a tree whose
// valid skills are not the ones its lock entry lists. A skill list is not
// launch surface, and a newer validator may judge a skill differently, so
// the difference is a warning; Sync and Update record the tree's list.
const CodeSkillsDiffer = "lock-skills-differ"

// MismatchError reports that the tree a lock entry names holds another
// plugin, version or launch surface than the entry records: the lock was
// edited, or entries were swapped. The plugin is not run and its data
// directory is not used.
type MismatchError struct {
	// Name is the lock entry's name.
	Name string
	// Field is what differs: "name", "version" or "servers".
	Field string
	// Lock and Tree are the values of Field in the lock and in the tree
	// ("servers" lists the differences as SurfaceChange lines in Tree).
	Lock, Tree string
}

func (e *MismatchError) Error() string {
	if e.Field == "servers" {
		return fmt.Sprintf("%s: %s: the tree runs other servers than the lock records: %s; refusing it (reinstall it to review what it runs)",
			e.Name, ErrLockMismatch, e.Tree)
	}
	return fmt.Sprintf("%s: %s: the lock records %s %q, the tree holds %q; refusing it (reinstall it to review what it runs)",
		e.Name, ErrLockMismatch, e.Field, e.Lock, e.Tree)
}

// Is makes errors.Is(err, ErrLockMismatch) true.
func (e *MismatchError) Is(target error) bool { return target == ErrLockMismatch }

// matchEntry compares the plugin loaded from the tree of e with e: its
// name, version and launch surface must be the entry's, exactly. A
// different skill list alone is reported as its warning diagnostic, which
// matchEntry returns (nil when the skills agree).
func matchEntry(e *Entry, pkg *agentplugin.Package) (*agentplugin.Diagnostic, error) {
	if pkg.Name != e.Name {
		return nil, &MismatchError{Name: e.Name, Field: "name", Lock: e.Name, Tree: pkg.Name}
	}
	if pkg.Version != e.Version {
		return nil, &MismatchError{Name: e.Name, Field: "version", Lock: e.Version, Tree: pkg.Version}
	}
	if diff := DiffSurface(e.Servers, Surface(pkg)); len(diff) > 0 {
		lines := make([]string, len(diff))
		for i, c := range diff {
			lines[i] = c.String()
		}
		return nil, &MismatchError{Name: e.Name, Field: "servers", Tree: strings.Join(lines, "; ")}
	}
	if skills := skillNames(pkg); !slices.Equal(skills, e.Skills) {
		return &agentplugin.Diagnostic{Severity: agentplugin.Warning, Code: CodeSkillsDiffer,
			Message: fmt.Sprintf("the lock lists skills [%s], the tree holds [%s]: plugkit sync or update records the tree's list",
				strings.Join(e.Skills, " "), strings.Join(skills, " "))}, nil
	}
	return nil, nil
}

// Load returns the plugin in's tree holds, for a host to run: the tree is
// verified against its file list (Verify), loaded with opts, and compared
// with its lock entry, whose name, version and launch surface it must
// have (else a *MismatchError). A skill list that differs from the lock's
// is a warning diagnostic (CodeSkillsDiffer) in the package. The home's
// data directory, and the plugin's in it, must be directories, not links.
// Only a plugin that loads here may run with in.DataDir.
func (h *Home) Load(in *Installed, opts agentplugin.Options) (*agentplugin.Package, error) {
	if err := h.verifyFiles(in); err != nil {
		return nil, err
	}
	pkg, err := agentplugin.LoadDir(in.Path, opts)
	if err != nil {
		return nil, h.goneOr(in, fmt.Errorf("installed plugin %s: %w", in.Name, err))
	}
	warn, err := matchEntry(&in.Entry, pkg)
	if err != nil {
		return nil, err
	}
	// Its data directory is the one of the name just matched, inside the
	// home.
	if err := h.checkLayout(); err != nil {
		return nil, err
	}
	if err := h.checkDataDir(in.Name); err != nil {
		return nil, err
	}
	if warn != nil {
		pkg.Diagnostics = append(pkg.Diagnostics, *warn)
	}
	return pkg, nil
}
