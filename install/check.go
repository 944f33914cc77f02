package install

import (
	"context"
	"errors"
	"fmt"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// CheckReport is what Check found for one installed plugin.
type CheckReport struct {
	Name string `json:"name"`
	// Problems are the differences between the stored tree, its file
	// list and the lock; none for an intact plugin. A tree that holds
	// another plugin, version or launch surface than its lock entry is one
	// problem of kind "lock-mismatch".
	Problems []Problem `json:"problems"`
	// Warnings are the differences that do not stop the plugin: a skill
	// list other than the lock's (CodeSkillsDiffer).
	Warnings []agentplugin.Diagnostic `json:"warnings"`
}

// Check re-hashes the trees of the named plugins (every installed plugin
// when names is empty) against their .files lists, and each intact tree
// against the lock: it must pack to the archive digest the lock records
// and hold the plugin, version and launch surface the entry records. It
// reports modified, missing and extra files and lock mismatches; it
// writes nothing.
func (h *Home) Check(ctx context.Context, names []string) ([]CheckReport, error) {
	lock, err := h.ReadLock()
	if err != nil {
		return nil, err
	}
	entries, err := (&state{h: h, lock: lock}).entries(names)
	if err != nil {
		return nil, err
	}
	out := make([]CheckReport, 0, len(entries))
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep, err := h.checkEntry(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
		out = append(out, *rep)
	}
	return out, nil
}

// checkEntry compares one plugin's tree with its list and the lock.
func (h *Home) checkEntry(e *Entry) (*CheckReport, error) {
	rep := &CheckReport{Name: e.Name, Problems: []Problem{}, Warnings: []agentplugin.Diagnostic{}}
	problems, err := h.verifyDigest(e.ArchiveDigest)
	if err != nil {
		rep.Problems = []Problem{{Path: e.ArchiveDigest + ".files", Kind: "missing", Detail: err.Error()}}
		return rep, nil
	}
	if len(problems) > 0 {
		rep.Problems = problems
		return rep, nil
	}
	snap, err := snapshot.ReadDir(h.TreePath(e.ArchiveDigest), h.opts.Source.Read)
	if err != nil {
		return nil, err
	}
	b, err := archive.Pack(snap, archive.PackOptions{})
	if err != nil {
		return nil, err
	}
	if d := archive.Digest(b); d != e.ArchiveDigest {
		rep.Problems = []Problem{{Path: ".", Kind: "modified", Detail: "the tree and its file list agree, but pack to " + d + ", not the archiveDigest of the lock"}}
		return rep, nil
	}
	pkg, err := agentplugin.Load(snap, h.opts.Source.Load)
	if err != nil {
		return nil, err
	}
	warn, err := matchEntry(e, pkg)
	var mm *MismatchError
	switch {
	case errors.As(err, &mm):
		rep.Problems = []Problem{{Path: ".", Kind: "lock-mismatch", Detail: mm.Error()}}
	case warn != nil:
		rep.Warnings = append(rep.Warnings, *warn)
	}
	return rep, nil
}
