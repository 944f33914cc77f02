package install

import (
	"context"
	"fmt"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// CheckReport is what Check found for one installed plugin.
type CheckReport struct {
	Name string `json:"name"`
	// Problems are the differences between the stored tree, its file
	// list and the lock; none for an intact plugin.
	Problems []Problem `json:"problems"`
}

// Check re-hashes the trees of the named plugins (every installed plugin
// when names is empty) against their .files lists, and each intact tree
// against the lock: it must pack to the archive digest the lock records.
// It reports modified, missing and extra files; it writes nothing.
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
		problems, err := h.checkEntry(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
		out = append(out, CheckReport{Name: e.Name, Problems: problems})
	}
	return out, nil
}

// checkEntry compares one plugin's tree with its list and the lock.
func (h *Home) checkEntry(e *Entry) ([]Problem, error) {
	problems, err := h.verifyDigest(e.ArchiveDigest)
	if err != nil {
		return []Problem{{Path: e.ArchiveDigest + ".files", Kind: "missing", Detail: err.Error()}}, nil
	}
	if len(problems) > 0 {
		return problems, nil
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
		return []Problem{{Path: ".", Kind: "modified", Detail: "the tree and its file list agree, but pack to " + d + ", not the archiveDigest of the lock"}}, nil
	}
	return []Problem{}, nil
}
