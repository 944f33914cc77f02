package agentplugin

import (
	"fmt"
	"strings"

	"github.com/plugkit/plugkit/snapshot"
)

// ReadsContent reports whether Load reads the bytes of the file at the
// package path p: plugin.json, mcp.json and skills/NAME/SKILL.md. Every
// other file is judged by its path and mode alone, so its bytes cannot
// change a verdict. It is the hold function of snapshot.ReadPartial for
// LoadPartial.
func ReadsContent(p string) bool {
	if p == manifestPath || p == mcpPath {
		return true
	}
	rest, ok := strings.CutPrefix(p, skillsDir+"/")
	if !ok {
		return false
	}
	name, sub, ok := strings.Cut(rest, "/")
	return ok && name != "" && sub == skillFile
}

// LoadPartial is Load of a directory read by snapshot.ReadPartial: the
// same checks and diagnostics, judged from the held files' bytes and
// every file's path and mode. A deferred file whose bytes Load would read
// (see ReadsContent) is an error, never taken for an empty file.
//
// The bytes of the deferred files are not in the Package: its Snapshot is
// nil, and its skills' Files hold only held files. Pack it with
// archive.PackPartialTo.
func LoadPartial(p *snapshot.Partial, opts Options) (*Package, error) {
	for path := range p.Deferred {
		if ReadsContent(path) {
			return nil, fmt.Errorf("agentplugin: %s is deferred, but its bytes are read: hold it (ReadsContent)", path)
		}
	}
	l := newLoaderOf(p.Held.Files, p.Mode, p.Held.Omitted, opts)
	l.index = p.Index()
	return l.load()
}
