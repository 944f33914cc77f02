package distribution

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/plugkit/plugkit/archive"
)

// ErrInvalidName is matched (with errors.Is) by the errors of CheckPluginID,
// CheckChannel and CheckReleaseID.
var ErrInvalidName = errors.New("invalid name")

// Length bounds of identifiers. They keep query strings, database keys and
// log lines small whatever a client sends.
const (
	MaxPluginIDLen  = 128
	MaxChannelLen   = 64
	MaxVersionLen   = 128
	MaxReleaseIDLen = MaxPluginIDLen + 1 + MaxVersionLen
)

// CheckPluginID reports whether id can be a plugin ID: 1 to 128 bytes of
// lowercase letters, digits, '.' and '-', starting and ending with a letter
// or digit. The loader checks the manifest name's full rules; this is the
// shape the protocol accepts before a lookup.
func CheckPluginID(id string) error {
	return checkSlug("plugin id", id, MaxPluginIDLen, ".-")
}

// CheckChannel reports whether name can be a channel: 1 to 64 bytes of
// lowercase letters, digits, '.', '_' and '-', starting and ending with a
// letter or digit.
func CheckChannel(name string) error {
	return checkSlug("channel", name, MaxChannelLen, "._-")
}

func checkSlug(what, s string, max int, punct string) error {
	if s == "" || len(s) > max {
		return fmt.Errorf("%w: %s must be 1 to %d bytes", ErrInvalidName, what, max)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		edge := i == 0 || i == len(s)-1
		if !alnum && (edge || strings.IndexByte(punct, c) < 0) {
			return fmt.Errorf("%w: %s %q: only a-z, 0-9 and %q inside", ErrInvalidName, what, s, punct)
		}
	}
	return nil
}

// CheckVersion reports whether a manifest version can be part of a release
// ID: at most 128 bytes of printable UTF-8 without spaces, '@' or ':'. The
// empty version is allowed: such a release is named by its digest.
//
// ':' is refused because a release ID's digest form ("PLUGIN@sha256:…") is
// reserved for versionless archives: a manifest version of "sha256:<hex>"
// would otherwise take the release ID of another archive. No digest
// algorithm's form can be a version.
func CheckVersion(v string) error {
	if len(v) > MaxVersionLen || !utf8.ValidString(v) {
		return fmt.Errorf("%w: version must be at most %d bytes of UTF-8", ErrInvalidName, MaxVersionLen)
	}
	for _, r := range v {
		if r == ':' {
			return fmt.Errorf("%w: version %q holds ':', which only a digest release ID may hold", ErrInvalidName, v)
		}
		if r == '@' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("%w: version %q holds a space, '@' or an unprintable character", ErrInvalidName, v)
		}
	}
	return nil
}

// ReleaseID names the release of a plugin version: "PLUGIN@VERSION", or
// "PLUGIN@DIGEST" when the manifest has no version, so that every distinct
// versionless artifact is its own release.
func ReleaseID(pluginID, version, digest string) string {
	if version == "" {
		return pluginID + "@" + digest
	}
	return pluginID + "@" + version
}

// CheckReleaseID reports whether id has the shape ReleaseID produces:
// PLUGIN@VERSION or PLUGIN@DIGEST.
func CheckReleaseID(id string) error {
	plugin, version, ok := strings.Cut(id, "@")
	if !ok || version == "" {
		return fmt.Errorf("%w: release id %q is not PLUGIN@VERSION", ErrInvalidName, id)
	}
	if err := CheckPluginID(plugin); err != nil {
		return err
	}
	if _, err := archive.ParseDigest(version); err == nil {
		return nil
	}
	return CheckVersion(version)
}

// MaxIdentityLen bounds a token identity name.
const MaxIdentityLen = 64

// CheckIdentity reports whether id can name a token holder: 1 to 64 bytes
// of letters, digits, '.', '_', '@' and '-', starting and ending with a
// letter or digit ("ci-bot", "alice@example.com"), or "token:" and 16
// lowercase hex digits, the identity the server gives a token configured
// without a name.
func CheckIdentity(id string) error {
	if h, ok := strings.CutPrefix(id, "token:"); ok {
		if len(h) == 16 && strings.Trim(h, "0123456789abcdef") == "" {
			return nil
		}
		return fmt.Errorf("%w: identity %q: \"token:\" needs 16 lowercase hex digits", ErrInvalidName, id)
	}
	if id == "" || len(id) > MaxIdentityLen {
		return fmt.Errorf("%w: identity must be 1 to %d bytes", ErrInvalidName, MaxIdentityLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(id)-1 || strings.IndexByte("._@-", c) < 0) {
			return fmt.Errorf("%w: identity %q: only letters, digits and '.', '_', '@', '-' inside", ErrInvalidName, id)
		}
	}
	return nil
}
