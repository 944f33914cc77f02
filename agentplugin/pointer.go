package agentplugin

import (
	"strconv"

	"github.com/plugkit/plugkit/internal/jsontree"
)

// pointer is the RFC 6901 pointer of a diagnostic, held in parts: a
// parent pointer and at most one more token, a member name or an index.
// The parts are joined, and the name decoded, only when the diagnostic is
// kept, so that diagnostics past MaxDiagnostics cost nothing to place.
type pointer struct {
	parent string
	key    jsontree.Node // the member name node, when the token is a name
	index  int           // the array index plus one, when the token is one
}

// ptrMember returns the pointer of the value of the member named by key below
// parent.
func ptrMember(parent string, key jsontree.Node) pointer { return pointer{parent: parent, key: key} }

// ptrIndex returns the pointer of element i below parent.
func ptrIndex(parent string, i int) pointer { return pointer{parent: parent, index: i + 1} }

// ptr returns a pointer given whole.
func ptr(p string) pointer { return pointer{parent: p} }

func (p pointer) String() string {
	switch {
	case p.key.Exists():
		return p.parent + "/" + jsontree.EscapePointer(p.key.Str())
	case p.index > 0:
		return p.parent + "/" + strconv.Itoa(p.index-1)
	}
	return p.parent
}
