package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/internal/jsontree"
)

// LockVersion is the lockfileVersion this package writes. It reads every
// version from 1 up to it: version 2 added Source.PlainHTTP. Later
// additions are optional fields of version 2, documented in
// docs/install.md; a lock of a newer version is refused with a message
// naming it, never half read.
const LockVersion = 2

// Lock is the content of plugkit.lock: every installed plugin, sorted by
// name. Encode writes it with a fixed key order, so that a lock rewritten
// without a change is byte-identical and a change shows as a small diff.
type Lock struct {
	// Version is the lockfileVersion read (1 or 2); a writer writes
	// LockVersion.
	Version int `json:"lockfileVersion"`
	// Policy is the sha256 of the home's policy.json when installs were
	// admitted by a policy, "" otherwise.
	Policy  string  `json:"policy,omitempty"`
	Plugins []Entry `json:"plugins"`
}

// Entry is one installed plugin.
type Entry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Source  Source `json:"source"`
	// Identity names exactly what was fetched: the OCI manifest digest for
	// OCI sources, the sha256 of the bytes fetched for archives and
	// Backplane sources, the archive digest for directories.
	Identity string `json:"identity"`
	// ArchiveDigest is the digest `plugkit pack` gives for the tree, and
	// the tree's key in the store.
	ArchiveDigest string `json:"archiveDigest"`
	// InstalledAt is when this identity was installed (RFC 3339, UTC).
	InstalledAt string `json:"installedAt"`
	// Trust says which policy rule admitted the plugin, when the home has a
	// policy.
	Trust *Trust `json:"trust,omitempty"`
	// Skills are the names of the plugin's valid skills, sorted.
	Skills []string `json:"skills"`
	// Servers are the approved launch surface, sorted by name.
	Servers []Server `json:"servers"`
}

// Trust records how a policy admitted a plugin.
type Trust struct {
	Rule   string `json:"rule"`
	Signer string `json:"signer,omitempty"`
}

// Server is the approved launch surface of one MCP server: everything that
// decides what runs or where requests go. Env and header values are kept
// as "sha256:HEX" of the value, never the value itself.
type Server struct {
	Name      string            `json:"name"`
	Transport string            `json:"transport"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// Default limits of a lock file.
const (
	DefaultMaxLockBytes = 64 << 20
	DefaultMaxPlugins   = 10000
)

// Limits bound what reading a home costs. A zero field takes its default.
type Limits struct {
	// MaxLockBytes bounds plugkit.lock (default 64 MiB).
	MaxLockBytes int64
	// MaxPlugins bounds the entries of plugkit.lock (default 10,000).
	MaxPlugins int
	// MaxFilesListBytes bounds one tree's .files list (default 64 MiB).
	MaxFilesListBytes int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxLockBytes <= 0 {
		l.MaxLockBytes = DefaultMaxLockBytes
	}
	if l.MaxPlugins <= 0 {
		l.MaxPlugins = DefaultMaxPlugins
	}
	if l.MaxFilesListBytes <= 0 {
		l.MaxFilesListBytes = DefaultMaxLockBytes
	}
	return l
}

// ErrLockInvalid is matched by every error about a lock file's content.
var ErrLockInvalid = errors.New("invalid lock file")

// lockError is an ErrLockInvalid error.
func lockError(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrLockInvalid, fmt.Sprintf(format, a...))
}

// ParseLock reads a lock file strictly: strict JSON (no duplicate keys),
// no unknown fields, lockfileVersion 1 or 2, entries sorted by name, and every
// name, digest, source and server well formed. Names become directory
// names, so a lock cannot make the installer touch anything outside the
// home. Its cost is linear in len(b), which limits bounds.
func ParseLock(b []byte, limits Limits) (*Lock, error) {
	limits = limits.withDefaults()
	if int64(len(b)) > limits.MaxLockBytes {
		return nil, lockError("%d bytes, over MaxLockBytes (%d)", len(b), limits.MaxLockBytes)
	}
	root, err := jsontree.Parse(b, 16)
	if err != nil {
		return nil, lockError("%v", err)
	}
	l, err := decodeLock(root.Root())
	if err != nil {
		return nil, lockError("%v", err)
	}
	if len(l.Plugins) > limits.MaxPlugins {
		return nil, lockError("%d plugins, over MaxPlugins (%d)", len(l.Plugins), limits.MaxPlugins)
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	return l, nil
}

// check reports the first malformed part of l.
func (l *Lock) check() error {
	for i := range l.Plugins {
		if l.Version < 2 && l.Plugins[i].Source.PlainHTTP {
			return lockError("plugin %q: plainHTTP needs lockfileVersion 2", l.Plugins[i].Name)
		}
	}
	if l.Policy != "" {
		if _, err := archive.ParseDigest(l.Policy); err != nil {
			return lockError("policy: %v", err)
		}
	}
	for i := range l.Plugins {
		e := &l.Plugins[i]
		if i > 0 && l.Plugins[i-1].Name >= e.Name {
			return lockError("plugins are not sorted by name, or %q is listed twice", e.Name)
		}
		if err := e.check(); err != nil {
			return lockError("plugin %q: %v", e.Name, err)
		}
	}
	return nil
}

func (e *Entry) check() error {
	if err := distribution.CheckPluginID(e.Name); err != nil {
		return err
	}
	if err := e.Source.check(); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	if _, err := archive.ParseDigest(e.Identity); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	if _, err := archive.ParseDigest(e.ArchiveDigest); err != nil {
		return fmt.Errorf("archiveDigest: %w", err)
	}
	if _, err := time.Parse(time.RFC3339, e.InstalledAt); err != nil {
		return fmt.Errorf("installedAt: %w", err)
	}
	if e.Trust != nil && e.Trust.Rule == "" {
		return errors.New("trust: rule is empty")
	}
	if !sort.StringsAreSorted(e.Skills) || hasDuplicate(e.Skills) {
		return errors.New("skills are not sorted or hold a duplicate")
	}
	for i, s := range e.Servers {
		if i > 0 && e.Servers[i-1].Name >= s.Name {
			return errors.New("servers are not sorted by name, or one is listed twice")
		}
		if err := s.check(); err != nil {
			return fmt.Errorf("server %q: %w", s.Name, err)
		}
	}
	return nil
}

func hasDuplicate(sorted []string) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

func (s *Server) check() error {
	if s.Name == "" {
		return errors.New("empty name")
	}
	switch s.Transport {
	case "stdio":
		if s.Command == "" || s.URL != "" || s.Headers != nil {
			return errors.New("a stdio server has a command and no url or headers")
		}
	case "streamable-http", "sse":
		if s.URL == "" || s.Command != "" || s.Args != nil || s.Cwd != "" || s.Env != nil {
			return fmt.Errorf("a %s server has a url and no command, args, cwd or env", s.Transport)
		}
	default:
		return fmt.Errorf("unknown transport %q", s.Transport)
	}
	if err := checkHashedValues("env", s.Env); err != nil {
		return err
	}
	return checkHashedValues("headers", s.Headers)
}

// checkHashedValues requires every value of m to be a sha256 digest: a
// lock never holds an env or header value itself.
func checkHashedValues(what string, m map[string]string) error {
	for k, v := range m {
		if _, err := archive.ParseDigest(v); err != nil {
			return fmt.Errorf("%s %q: the value must be recorded as its sha256: %w", what, k, err)
		}
	}
	return nil
}

// Encode returns the lock file's bytes: indented JSON with a fixed key
// order (struct fields in order, map keys sorted) and a final newline.
// Plugins must be sorted by name (Set keeps them so).
func (l *Lock) Encode() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if l.Plugins == nil {
		l.Plugins = []Entry{}
	}
	for i := range l.Plugins {
		// Empty lists are written as [], whatever built them.
		e := &l.Plugins[i]
		if e.Skills == nil {
			e.Skills = []string{}
		}
		if e.Servers == nil {
			e.Servers = []Server{}
		}
	}
	if err := enc.Encode(l); err != nil {
		// Only strings, slices, maps and structs: encoding cannot fail.
		panic(err)
	}
	return buf.Bytes()
}

// Find returns the entry called name, or nil.
func (l *Lock) Find(name string) *Entry {
	i := sort.Search(len(l.Plugins), func(i int) bool { return l.Plugins[i].Name >= name })
	if i < len(l.Plugins) && l.Plugins[i].Name == name {
		return &l.Plugins[i]
	}
	return nil
}

// Set adds e, or replaces the entry with its name, keeping the order.
func (l *Lock) Set(e Entry) {
	i := sort.Search(len(l.Plugins), func(i int) bool { return l.Plugins[i].Name >= e.Name })
	if i < len(l.Plugins) && l.Plugins[i].Name == e.Name {
		l.Plugins[i] = e
		return
	}
	l.Plugins = append(l.Plugins, Entry{})
	copy(l.Plugins[i+1:], l.Plugins[i:])
	l.Plugins[i] = e
}

// Delete removes the entry called name, if there is one.
func (l *Lock) Delete(name string) {
	i := sort.Search(len(l.Plugins), func(i int) bool { return l.Plugins[i].Name >= name })
	if i < len(l.Plugins) && l.Plugins[i].Name == name {
		l.Plugins = append(l.Plugins[:i], l.Plugins[i+1:]...)
	}
}

// clone returns a deep enough copy of l for a writer to change.
func (l *Lock) clone() *Lock {
	c := *l
	c.Plugins = append([]Entry(nil), l.Plugins...)
	return &c
}
