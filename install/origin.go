package install

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/source"
)

// The kinds of Source, as the lock file spells them.
const (
	KindDirectory = "directory"
	KindArchive   = "archive"
	KindOCI       = "oci"
	KindOCILayout = "oci-layout"
	KindRegistry  = "registry"
)

// Source is where an installed plugin comes from, normalised: paths are
// absolute and clean, a registry URL has no trailing slash, and a
// Backplane source names its channel (default "stable") or its release.
type Source struct {
	Kind string `json:"kind"`
	// Path is the directory, archive file or OCI layout.
	Path string `json:"path,omitempty"`
	// Reference is the "oci://REGISTRY/REPOSITORY[:TAG][@DIGEST]" of an OCI
	// source, or the tag or digest that selects a manifest in a layout.
	Reference string `json:"reference,omitempty"`
	// Registry, Plugin and Channel or Release name a Backplane release.
	Registry string `json:"registry,omitempty"`
	Plugin   string `json:"plugin,omitempty"`
	Channel  string `json:"channel,omitempty"`
	Release  string `json:"release,omitempty"`
	// PlainHTTP says that an OCI registry is reached over HTTP, not HTTPS
	// (install --plain-http): recorded, so that update and sync reach it
	// the same way and a reviewer sees that the source has no TLS.
	PlainHTTP bool `json:"plainHTTP,omitempty"`
}

// normalSource turns a parsed source into the form the lock records. dir
// tells whether a path source turned out to be a directory, plainHTTP
// whether an OCI registry was reached over HTTP.
func normalSource(src source.Source, dir, plainHTTP bool) (Source, error) {
	switch src.Kind {
	case source.Path, source.OCILayout:
		abs, err := filepath.Abs(src.Path)
		if err != nil {
			return Source{}, err
		}
		s := Source{Kind: KindArchive, Path: abs}
		switch {
		case src.Kind == source.OCILayout:
			s.Kind, s.Reference = KindOCILayout, src.OCI.Selector()
		case dir:
			s.Kind = KindDirectory
		}
		return s, nil
	case source.OCI:
		return Source{Kind: KindOCI, Reference: src.OCI.String(), PlainHTTP: plainHTTP}, nil
	case source.Registry:
		s := Source{Kind: KindRegistry, Registry: strings.TrimSuffix(src.Registry, "/"), Plugin: src.Name, Channel: src.Channel, Release: src.Release}
		if s.Release != "" {
			s.Channel = ""
		} else if s.Channel == "" {
			s.Channel = distribution.DefaultChannel
		}
		return s, nil
	}
	return Source{}, fmt.Errorf("%w: a %s cannot be installed", source.ErrUnsupported, src.Kind)
}

// parsed is the source in the form package source opens.
func (s Source) parsed() source.Source {
	switch s.Kind {
	case KindOCI, KindOCILayout:
		arg := s.Reference
		if s.Kind == KindOCILayout {
			arg = source.OCILayoutPrefix + s.Path
			if strings.HasPrefix(s.Reference, "sha256:") {
				arg += "@" + s.Reference
			} else if s.Reference != "" {
				arg += ":" + s.Reference
			}
		}
		src, err := source.Parse(arg, source.ParseOptions{})
		if err != nil {
			return source.Source{Kind: source.Kind(s.Kind)} // Open refuses it with its kind
		}
		return src
	case KindRegistry:
		return source.Source{Kind: source.Registry, Registry: s.Registry, Name: s.Plugin, Channel: s.Channel, Release: s.Release}
	}
	return source.Source{Kind: source.Path, Path: s.Path}
}

// Origin names where a plugin comes from regardless of which version was
// selected: the path, the registry and plugin id, or the OCI repository.
// Two sources with one origin install "the same plugin"; installing a name
// from another origin needs Replace, and starts with empty data.
func (s Source) Origin() string {
	switch s.Kind {
	case KindRegistry:
		return KindRegistry + ":" + s.Registry + "#" + s.Plugin
	case KindOCI:
		return KindOCI + ":" + ociRepository(strings.TrimPrefix(s.Reference, source.OCIPrefix))
	}
	return s.Kind + ":" + s.Path
}

// ociRepository strips the tag and digest from an OCI reference.
func ociRepository(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// String is the source as package source writes it: a path, an OCI
// reference (followed by " (plain HTTP)" when it is reached so), or
// "URL#PLUGIN@channel:C" ("@release:R") for a Backplane release.
func (s Source) String() string {
	switch s.Kind {
	case KindOCI:
		if s.PlainHTTP {
			return s.Reference + " (plain HTTP)"
		}
		return s.Reference
	case KindOCILayout, KindRegistry:
		return s.parsed().String()
	}
	return s.Path
}

func (s Source) check() error {
	switch s.Kind {
	case KindDirectory, KindArchive, KindOCILayout:
		if s.Path == "" || !filepath.IsAbs(s.Path) || filepath.Clean(s.Path) != s.Path {
			return fmt.Errorf("path %q is not absolute and clean", s.Path)
		}
		if s.Registry != "" || s.Plugin != "" || s.Channel != "" || s.Release != "" || (s.Reference != "" && s.Kind != KindOCILayout) {
			return fmt.Errorf("a %s source has only a path", s.Kind)
		}
	case KindOCI:
		if _, err := source.Parse(s.Reference, source.ParseOptions{}); err != nil || !strings.HasPrefix(s.Reference, source.OCIPrefix) {
			return fmt.Errorf("reference %q is not oci://REGISTRY/REPOSITORY[:TAG][@DIGEST]", s.Reference)
		}
		if s.Path != "" || s.Registry != "" || s.Plugin != "" || s.Channel != "" || s.Release != "" {
			return errors.New("an oci source has only a reference and plainHTTP")
		}
	case KindRegistry:
		u, err := url.Parse(s.Registry)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.HasSuffix(s.Registry, "/") {
			return fmt.Errorf("registry %q is not an http(s) base URL without a trailing slash", s.Registry)
		}
		if err := distribution.CheckPluginID(s.Plugin); err != nil {
			return err
		}
		switch {
		case (s.Channel == "") == (s.Release == ""):
			return errors.New("a registry source names a channel or a release, not both")
		case s.Channel != "":
			if err := distribution.CheckChannel(s.Channel); err != nil {
				return err
			}
		default:
			if err := distribution.CheckReleaseID(s.Release); err != nil {
				return err
			}
		}
		if s.Path != "" || s.Reference != "" {
			return errors.New("a registry source has no path or reference")
		}
	default:
		return fmt.Errorf("unknown kind %q", s.Kind)
	}
	if s.PlainHTTP && s.Kind != KindOCI {
		return fmt.Errorf("plainHTTP is for oci sources, not %s", s.Kind)
	}
	return nil
}
