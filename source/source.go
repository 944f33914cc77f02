// Package source names where a plugin comes from and reads it from there.
//
// Every verb that takes a plugin — validate, inspect, pull, install, mcp —
// parses its argument with Parse, so one rule decides what a bare argument
// names everywhere:
//
//   - "oci://REGISTRY/REPOSITORY[:TAG][@DIGEST]" is an OCI artifact, and
//     "oci-layout:PATH[:TAG][@DIGEST]" one in an OCI image layout (a
//     directory or a .tar of one), by prefix;
//   - anything containing a "/" (or the platform's separator), starting with
//     ".", or ending in ".tar.gz" or ".tgz" is a path: a plugin directory or
//     an archive file;
//   - otherwise, when a Backplane registry is set, a plugin id in it;
//   - otherwise, for verbs that take one, the name of an installed plugin;
//   - otherwise an error that suggests "./NAME".
//
// Open reads a parsed source into a loaded plugin. Whatever the source, the
// bytes become a snapshot.Snapshot first and agentplugin.Load judges it:
// there is one validator.
package source

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/oci"
)

// Kind is the kind of place a plugin comes from.
type Kind string

// The kinds of sources.
const (
	// Path is a plugin directory or an archive file; Open tells which.
	Path Kind = "path"
	// OCI is an artifact in an OCI registry.
	OCI Kind = "oci"
	// OCILayout is an artifact in an OCI image layout directory or tar.
	OCILayout Kind = "oci-layout"
	// Registry is a plugin in a Backplane registry.
	Registry Kind = "registry"
	// Installed is the name of an installed plugin; package install opens
	// it, not Open.
	Installed Kind = "installed"
)

// Prefixes that select a kind.
const (
	OCIPrefix       = oci.RegistryPrefix
	OCILayoutPrefix = oci.LayoutPrefix
)

// Source is one parsed source argument. Which fields are set depends on
// Kind; the zero value is not a valid source.
type Source struct {
	Kind Kind
	// Path is the path as given, for Path and OCILayout (the layout
	// directory or tar, without the :TAG or @DIGEST suffix).
	Path string
	// OCI is the parsed reference, for OCI and OCILayout (see
	// oci.ParseReference); its Selector picks the manifest.
	OCI oci.Reference
	// Registry is the Backplane registry's base URL, for Registry.
	Registry string
	// Name is the plugin id in a Backplane registry, or an installed
	// plugin's name.
	Name string
	// Channel and Release select a Backplane release: Release when set,
	// else Channel (distribution.DefaultChannel when empty).
	Channel, Release string
}

// ParseOptions say what a bare argument can name for the verb at hand.
type ParseOptions struct {
	// Registry is the Backplane registry base URL (--registry or
	// PLUGKIT_REGISTRY); when set, a bare name is a plugin id in it.
	Registry string
	// Channel and Release are copied into a Registry source.
	Channel, Release string
	// Installed, when not nil, reports whether a bare name is an installed
	// plugin; verbs that take installed plugins set it.
	Installed func(name string) bool
}

// ErrSyntax marks an argument that names no source.
var ErrSyntax = errors.New("not a plugin source")

// Parse decides what arg names, by the rule in the package documentation.
// It reads nothing: whether a path is a directory or an archive is Open's
// business.
func Parse(arg string, opts ParseOptions) (Source, error) {
	switch {
	case arg == "":
		return Source{}, fmt.Errorf("%w: empty argument", ErrSyntax)
	case oci.IsReference(arg):
		r, err := oci.ParseReference(arg)
		if err != nil {
			return Source{}, fmt.Errorf("%w: %w", ErrSyntax, err)
		}
		if r.Layout {
			return Source{Kind: OCILayout, Path: r.Path, OCI: r}, nil
		}
		return Source{Kind: OCI, OCI: r}, nil
	case isPathLike(arg):
		return Source{Kind: Path, Path: arg}, nil
	case opts.Registry != "":
		if err := distribution.CheckPluginID(arg); err != nil {
			return Source{}, fmt.Errorf("%w: %q is not a plugin id: %v (for a directory in the current directory, write ./%s)", ErrSyntax, arg, err, arg)
		}
		return Source{Kind: Registry, Registry: opts.Registry, Name: arg, Channel: opts.Channel, Release: opts.Release}, nil
	case opts.Installed != nil && opts.Installed(arg):
		return Source{Kind: Installed, Name: arg}, nil
	}
	hint := ""
	if opts.Installed != nil {
		hint = ", not an installed plugin,"
	}
	return Source{}, fmt.Errorf("%w: %q is not a path%s and no registry is set (--registry or PLUGKIT_REGISTRY); for a directory in the current directory, write ./%s", ErrSyntax, arg, hint, arg)
}

// isPathLike reports whether a bare argument is a path by its spelling.
func isPathLike(arg string) bool {
	return strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator) ||
		strings.HasPrefix(arg, ".") || strings.HasSuffix(arg, ".tar.gz") || strings.HasSuffix(arg, ".tgz") ||
		filepath.IsAbs(arg)
}

// String is the source in the form Parse reads back (for a Registry
// source, "URL#PLUGIN@channel:C" or "URL#PLUGIN@release:R", since a bare id
// needs --registry beside it).
func (s Source) String() string {
	switch s.Kind {
	case OCI, OCILayout:
		return s.OCI.String()
	case Registry:
		if s.Release != "" {
			return s.Registry + "#" + s.Name + "@release:" + s.Release
		}
		ch := s.Channel
		if ch == "" {
			ch = distribution.DefaultChannel
		}
		return s.Registry + "#" + s.Name + "@channel:" + ch
	case Installed:
		return s.Name
	}
	return s.Path
}
