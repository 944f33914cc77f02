package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/internal/boundedfile"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
)

// Plugin is a plugin read from a source and loaded.
type Plugin struct {
	Source Source
	// Package is the loaded plugin; Package.Snapshot holds its files.
	Package *agentplugin.Package
	// Archive is the archive exactly as read (an archive file, a registry
	// download, an OCI layer); nil for a directory.
	Archive []byte
	// Identity names exactly what was read: the OCI manifest digest for
	// OCI sources, the sha256 of Archive for archive files and Backplane
	// registries, "" for a directory (whose identity is the digest of the
	// archive plugkit pack would write, which the caller computes when it
	// needs one).
	Identity string
	// Release is the Backplane release that was resolved, for Registry.
	Release *distribution.Release
	// Dir is the directory read, for a directory source.
	Dir string
	// OCI is the artifact read, for OCI and OCILayout: its descriptors and
	// blobs (Archive is its layer).
	OCI *oci.Plugin
	// Root is the folder every entry of an archive file lay under, when the
	// archive is a layer rooted at NAME/ (an OCI layer saved by `oras
	// pull`, say); "" otherwise.
	Root string
}

// Options control how Open reads and loads.
type Options struct {
	// Read controls how a directory is read (links, limits).
	Read snapshot.Options
	// Limits bound an archive: its size and its unpacking. Zero fields take
	// archive's defaults.
	Limits archive.Limits
	// Load is passed to agentplugin.Load.
	Load agentplugin.Options
	// Client is the template of the Backplane client for Registry sources
	// (token, HTTP client); Open sets its BaseURL from the source. Nil
	// means an anonymous client.
	Client *distribution.Client
	// Remote says how to reach OCI registries (plain HTTP, credentials).
	Remote oci.RemoteOptions
	// OCILimits bound an OCI manifest and config; the layer is bounded and
	// unpacked by Limits.
	OCILimits oci.Limits
	// OnFile is given each file of an OCI or OCI layout source's layer as
	// it is unpacked (see oci.PullOptions.OnFile), so that a caller can
	// write the plugin while it is checked; it must undo what it wrote
	// when Open fails. Other kinds of source never call it.
	OnFile func(path string, mode fs.FileMode, data []byte) error
	// Stream unpacks an OCI layer as it is fetched and keeps neither it
	// nor the bytes of the files the loader does not read (see
	// oci.PullOptions.Stream): Plugin.Archive is nil, and the Package's
	// Snapshot holds nil data for those files. For a caller that writes
	// the files out through OnFile and needs nothing more.
	Stream bool
}

// Errors of Open.
var (
	// ErrArchive marks an archive that archive.Unpack refused, or a file
	// that is not an archive at all.
	ErrArchive = errors.New("invalid archive")
	// ErrUnsupported marks a source kind Open cannot read.
	ErrUnsupported = errors.New("source kind not supported here")
	// ErrPluginFile marks a path that names one of a plugin's files
	// (plugin.json, a SKILL.md) where the plugin itself was wanted.
	ErrPluginFile = errors.New("one of a plugin's files, not a plugin")
)

// Open reads src and loads the plugin. A plugin the specification rejects
// is the loader's *agentplugin.RejectedError (agentplugin.Diagnostics
// returns its diagnostics); an archive that cannot be unpacked wraps
// ErrArchive; a limit hit wraps snapshot.ErrLimit; anything else is an I/O,
// network or registry error.
func Open(ctx context.Context, src Source, opts Options) (*Plugin, error) {
	switch src.Kind {
	case Path:
		return openPath(src, opts)
	case Registry:
		return openRegistry(ctx, src, opts)
	case OCI, OCILayout:
		return openOCI(ctx, src, opts)
	case Installed:
		return nil, fmt.Errorf("%w: %q is an installed plugin: open it through its home (package install)", ErrUnsupported, src.Name)
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupported, src.Kind)
}

func openPath(src Source, opts Options) (*Plugin, error) {
	fi, err := os.Stat(src.Path)
	if err != nil {
		return nil, err
	}
	p := &Plugin{Source: src}
	var snap *snapshot.Snapshot
	if fi.IsDir() {
		p.Dir = src.Path
		if snap, err = snapshot.ReadDir(src.Path, opts.Read); err != nil {
			return nil, err
		}
	} else {
		if p.Archive, err = ReadArchiveFile(src.Path, opts.Limits); err != nil {
			return nil, err
		}
		if snap, err = unpack(src.Path, p.Archive, opts.Limits); err != nil {
			return nil, err
		}
		snap, p.Root = unroot(snap)
		p.Identity = archive.Digest(p.Archive)
	}
	if p.Package, err = agentplugin.Load(snap, opts.Load); err != nil {
		return nil, err
	}
	if p.Root != "" && p.Root != p.Package.Name {
		return nil, fmt.Errorf("%w: %s: every entry is under %q, but the plugin is named %q (a layer is rooted at its plugin's name)", ErrArchive, src.Path, p.Root+"/", p.Package.Name)
	}
	return p, nil
}

// unroot strips the folder of an archive whose entries all lie under one
// folder holding plugin.json, and no plugin.json of its own: a layer rooted
// at NAME/.
func unroot(s *snapshot.Snapshot) (*snapshot.Snapshot, string) {
	if _, ok := s.Files["plugin.json"]; ok {
		return s, ""
	}
	root := ""
	for p := range s.Files {
		first, _, ok := strings.Cut(p, "/")
		if !ok || root != "" && first != root {
			return s, ""
		}
		root = first
	}
	if _, ok := s.Files[root+"/plugin.json"]; !ok {
		return s, ""
	}
	out := &snapshot.Snapshot{Files: make(map[string][]byte, len(s.Files)), Modes: make(map[string]fs.FileMode, len(s.Modes))}
	for p, b := range s.Files {
		out.Files[p[len(root)+1:]] = b
	}
	for p, m := range s.Modes {
		out.Modes[strings.TrimPrefix(p, root+"/")] = m
	}
	return out, root
}

// openOCI pulls an artifact from a registry or a layout: every refusal of
// the profile (package oci) applies before the plugin is loaded.
func openOCI(ctx context.Context, src Source, opts Options) (*Plugin, error) {
	store, err := oci.Open(ctx, src.OCI, opts.Remote, false)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	lim := opts.OCILimits
	lim.Archive = opts.Limits
	op, err := oci.Pull(ctx, store, src.OCI.Selector(), oci.PullOptions{Limits: lim, Load: opts.Load, OnFile: opts.OnFile, Stream: opts.Stream})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return &Plugin{Source: src, Package: op.Package, Archive: op.Layer, Identity: op.Descriptor.Digest.String(), OCI: op}, nil
}

// ReadArchiveFile reads an archive file, refusing one larger than
// limits.MaxArchiveBytes (archive's default when zero) without reading
// more than one byte past it.
func ReadArchiveFile(path string, limits archive.Limits) ([]byte, error) {
	max := int64(limits.MaxArchiveBytes)
	if max <= 0 {
		max = archive.DefaultMaxArchiveBytes
	}
	return boundedfile.Read(path, max, "MaxArchiveBytes")
}

// unpack unpacks an archive file's bytes. A .json or .md file that is not
// a gzip stream is a plugin's file given for the plugin: the user is told
// which directory to give instead, and not how the gzip reader failed,
// which would only suggest that the archive is damaged.
func unpack(path string, b []byte, limits archive.Limits) (*snapshot.Snapshot, error) {
	if !bytes.HasPrefix(b, gzipMagic) && (strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".md")) {
		give := "the plugin's directory"
		if dir, ok := pluginDirOf(path); ok {
			give += " " + dir
		}
		return nil, fmt.Errorf("%s: %w: give %s", path, ErrPluginFile, give)
	}
	snap, err := archive.Unpack(b, archive.UnpackOptions{Limits: limits})
	if err != nil {
		return nil, ArchiveFileError(path, err)
	}
	return snap, nil
}

// gzipMagic starts every gzip stream (RFC 1952), and so every archive.
var gzipMagic = []byte{0x1f, 0x8b}

// pluginDirOf is the nearest directory above the file path that holds a
// plugin.json, as path names it.
func pluginDirOf(path string) (string, bool) {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(filepath.Join(dir, "plugin.json")); err == nil && fi.Mode().IsRegular() {
			return dir, true
		}
		if dir == filepath.Dir(dir) {
			return "", false
		}
	}
}

// ArchiveFileError words archive.Unpack's refusal of the archive file at
// path for its user: it names the file, and an archive made by another
// tool (tar czf writes GNU headers, modification times, owners) is told
// what plugkit reads. A limit hit keeps its own error; any other refusal
// also matches ErrArchive.
func ArchiveFileError(path string, err error) error {
	if errors.Is(err, snapshot.ErrLimit) {
		return fmt.Errorf("%s: %w", path, err)
	}
	hint := ""
	if strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz") {
		hint = " (plugkit reads the deterministic archives that `plugkit pack` writes)"
	}
	return fmt.Errorf("%w: %s: %w%s", ErrArchive, path, err, hint)
}

func openRegistry(ctx context.Context, src Source, opts Options) (*Plugin, error) {
	var c distribution.Client
	if opts.Client != nil {
		c = *opts.Client
	}
	c.BaseURL = strings.TrimSuffix(src.Registry, "/")
	c.Limits, c.LoadOptions = opts.Limits, opts.Load
	// Fetch also checks that the registry answered the plugin and release
	// asked for, with an artifact whose manifest agrees.
	rel, art, err := c.Fetch(ctx, distribution.ResolveQuery{PluginID: src.Name, Channel: src.Channel, ReleaseID: src.Release})
	if err != nil {
		return nil, err
	}
	return &Plugin{Source: src, Package: art.Package, Archive: art.Bytes, Identity: art.Digest, Release: rel}, nil
}
