package agentplugin

import (
	"path"
	"strings"

	"github.com/plugkit/plugkit/snapshot"
)

// extensionDirectories lists the top-level directories named like an
// extension namespace (spec 8.2). Their contents belong to their client
// and are never validated.
func (l *loader) extensionDirectories() {
	for _, name := range l.index.Children("") {
		// mcp.json and plugin.json look like namespaces but are fixed
		// locations: as directories they are invalid, not extensions.
		if IsNamespace(name) && name != mcpPath && name != manifestPath && l.index.Kind(name) == snapshot.Dir {
			l.pkg.ExtensionDirectories = append(l.pkg.ExtensionDirectories, name)
		}
	}
}

// deniedPaths reports what the directory reader omitted and no component
// rule reported (spec 4.1, boundary 5: access to those paths is denied).
func (l *loader) deniedPaths() {
	for _, o := range l.omits {
		if l.claimed[o.Path] {
			continue
		}
		code, msg := CodePathEscapes, "resolves outside the plugin root; access is denied"
		switch o.Reason {
		case snapshot.ReasonCycle:
			code, msg = CodePathCycle, "is a link or directory cycle; access is denied"
		case snapshot.ReasonBroken:
			code, msg = CodePathBroken, "is a broken link; it is ignored"
		case snapshot.ReasonSpecial:
			code, msg = CodePathSpecial, "is not a regular file or directory; it is ignored"
		case snapshot.ReasonName:
			code, msg = CodePathName, "has a name no package path can hold; it is ignored"
		}
		l.report(Diagnostic{Severity: Warning, Code: code, Path: o.Path, Message: o.Path + " " + msg})
	}
}

// inRoot reports whether the plugin-relative path rel ("./x/y") stays
// inside the root lexically, and returns its clean package path ("" for
// the root itself).
func inRoot(rel string) (string, bool) {
	clean := path.Clean(rel)
	if clean == "." {
		return "", true
	}
	if clean == ".." || strings.HasPrefix(clean, "../") || path.IsAbs(clean) {
		return "", false
	}
	return clean, true
}
