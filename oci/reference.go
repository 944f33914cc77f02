package oci

import (
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/registry"
)

// The prefixes that name an OCI source.
const (
	RegistryPrefix = "oci://"
	LayoutPrefix   = "oci-layout:"
)

// isTag reports whether s matches the OCI distribution tag grammar,
// [A-Za-z0-9_][A-Za-z0-9._-]{0,127}. It is written out rather than compiled
// as a regexp because the bounded repetition makes a 128-state program that
// every start of the binary would build (0.4 ms, 1,700 allocations).
func isTag(s string) bool {
	if len(s) == 0 || len(s) > 128 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// Reference names a plugin, or a place for one, in a registry
// (oci://REGISTRY/REPOSITORY[:TAG][@DIGEST], helm's convention) or in an
// OCI image layout (oci-layout:PATH[:TAG][@DIGEST], PATH a directory or a
// .tar of one).
type Reference struct {
	// Layout is true for oci-layout: references; Path is then the layout.
	Layout bool
	Path   string
	// Registry (host[:port]) and Repository name a registry repository.
	Registry   string
	Repository string
	// Tag and Digest select the manifest; either or both may be empty.
	Tag    string
	Digest string
}

// IsReference reports whether s has one of the OCI prefixes, the rule by
// which every verb tells an OCI source from a path.
func IsReference(s string) bool {
	return strings.HasPrefix(s, RegistryPrefix) || strings.HasPrefix(s, LayoutPrefix)
}

// ParseReference parses an oci:// or oci-layout: reference. Errors match
// ErrReference.
func ParseReference(s string) (Reference, error) {
	var r Reference
	rest, ok := strings.CutPrefix(s, RegistryPrefix)
	if !ok {
		if rest, ok = strings.CutPrefix(s, LayoutPrefix); !ok {
			return r, fmt.Errorf("%w: %q: want %sREGISTRY/REPOSITORY[:TAG][@DIGEST] or %sPATH[:TAG][@DIGEST]", ErrReference, s, RegistryPrefix, LayoutPrefix)
		}
		r.Layout = true
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		d := digest.Digest(rest[i+1:])
		if err := d.Validate(); err != nil || d.Algorithm() != digest.SHA256 {
			return r, fmt.Errorf("%w: %q: %q is not a sha256 digest", ErrReference, s, rest[i+1:])
		}
		r.Digest, rest = string(d), rest[:i]
	}
	// A tag follows the last ':' after the last '/' (a registry's port
	// comes before the first '/').
	if i := strings.LastIndexByte(rest, ':'); i > strings.LastIndexByte(rest, '/') {
		if tag := rest[i+1:]; isTag(tag) {
			r.Tag, rest = tag, rest[:i]
		} else if !r.Layout {
			return r, fmt.Errorf("%w: %q: %q is not a valid tag", ErrReference, s, tag)
		}
	}
	if r.Layout {
		if rest == "" {
			return r, fmt.Errorf("%w: %q: no layout path", ErrReference, s)
		}
		r.Path = rest
		return r, nil
	}
	host, repo, ok := strings.Cut(rest, "/")
	if !ok || host == "" || repo == "" {
		return r, fmt.Errorf("%w: %q: want %sREGISTRY/REPOSITORY", ErrReference, s, RegistryPrefix)
	}
	rr := registry.Reference{Registry: host, Repository: repo}
	if err := rr.ValidateRegistry(); err != nil {
		return r, fmt.Errorf("%w: %q: registry %q: %v", ErrReference, s, host, err)
	}
	if err := rr.ValidateRepository(); err != nil {
		return r, fmt.Errorf("%w: %q: repository %q must be lowercase letters, digits and separators", ErrReference, s, repo)
	}
	r.Registry, r.Repository = host, repo
	return r, nil
}

// Selector is what Resolve takes: TAG, @DIGEST, TAG@DIGEST or "".
func (r Reference) Selector() string {
	if r.Digest == "" {
		return r.Tag
	}
	return r.Tag + "@" + r.Digest
}

// String is the reference in the syntax ParseReference reads.
func (r Reference) String() string {
	s := RegistryPrefix + r.Registry + "/" + r.Repository
	if r.Layout {
		s = LayoutPrefix + r.Path
	}
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// splitSelector splits TAG@DIGEST.
func splitSelector(sel string) (tag, dgst string) {
	tag, dgst, _ = strings.Cut(sel, "@")
	return tag, dgst
}
