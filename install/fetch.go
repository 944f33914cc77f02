package install

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/source"
)

// fetched is a plugin read from its source, loaded and packed: everything
// an installation needs except consent.
type fetched struct {
	src           Source
	pkg           *agentplugin.Package
	identity      string
	archiveDigest string
	// release is the Backplane release resolved, for reports.
	release *distribution.Release
	// archive is the archive as read (an archive file, a download, an OCI
	// layer), nil for a directory; oci is the OCI artifact read. They are
	// the evidence a trust policy looks at.
	archive []byte
	oci     *oci.Plugin
}

// fetch reads src, refuses a plugin with error diagnostics, and computes
// its identity and archive digest. plainHTTP reaches an OCI registry over
// HTTP even when the home's options do not say so (a lock records it).
func (h *Home) fetch(ctx context.Context, src source.Source, plainHTTP bool) (*fetched, error) {
	opts := h.opts.Source
	opts.Remote.PlainHTTP = opts.Remote.PlainHTTP || plainHTTP
	p, err := source.Open(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	norm, err := normalSource(src, p.Dir != "", opts.Remote.PlainHTTP)
	if err != nil {
		return nil, err
	}
	f, err := prepare(norm, p.Package, p.Identity, p.Release)
	if err != nil {
		return nil, err
	}
	f.archive, f.oci = p.Archive, p.OCI
	return f, nil
}

// prepare packs a loaded plugin to find its archive digest (the identity
// too, for a directory).
func prepare(src Source, pkg *agentplugin.Package, identity string, rel *distribution.Release) (*fetched, error) {
	if agentplugin.HasErrors(pkg.Diagnostics) {
		return nil, &InvalidError{Name: pkg.Name, Diagnostics: pkg.Diagnostics}
	}
	b, err := archive.Pack(pkg.Snapshot, archive.PackOptions{})
	if err != nil {
		return nil, err
	}
	f := &fetched{src: src, pkg: pkg, identity: identity, archiveDigest: archive.Digest(b), release: rel}
	if f.identity == "" {
		f.identity = f.archiveDigest
	}
	return f, nil
}

// fetchIdentity reads exactly what the lock entry e records: by digest
// where the source can be asked for one (a Backplane registry, an OCI
// registry or layout, whatever tag the lock names), else from its source,
// refusing other bytes than the identity.
func (h *Home) fetchIdentity(ctx context.Context, e *Entry) (*fetched, error) {
	var f *fetched
	var err error
	src := e.Source.parsed()
	if src.Kind == source.OCI || src.Kind == source.OCILayout {
		src.OCI.Tag, src.OCI.Digest = "", e.Identity
	}
	if e.Source.Kind == KindRegistry {
		var c distribution.Client
		if h.opts.Source.Client != nil {
			c = *h.opts.Source.Client
		}
		c.BaseURL, c.Limits, c.LoadOptions = e.Source.Registry, h.opts.Source.Limits, h.opts.Source.Load
		art, err := c.Download(ctx, e.Identity)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
		if f, err = prepare(e.Source, art.Package, art.Digest, nil); err != nil {
			return nil, err
		}
		f.archive = art.Bytes
	} else if f, err = h.fetch(ctx, src, e.Source.PlainHTTP); err != nil {
		return nil, fmt.Errorf("%s: %w", e.Name, err)
	}
	if f.identity != e.Identity || f.archiveDigest != e.ArchiveDigest {
		return nil, fmt.Errorf("%s: %w: %s now gives %s, the lock records %s; refusing it",
			e.Name, ErrSourceChanged, e.Source, f.identity, e.Identity)
	}
	return f, nil
}

// entry is the lock entry of the fetched plugin, installed at now.
func (f *fetched) entry(now time.Time) *Entry {
	return &Entry{
		Name:          f.pkg.Name,
		Version:       f.pkg.Version,
		Source:        f.src,
		Identity:      f.identity,
		ArchiveDigest: f.archiveDigest,
		InstalledAt:   now.UTC().Format(time.RFC3339),
		Skills:        skillNames(f.pkg),
		Servers:       Surface(f.pkg),
	}
}

// warnings are the package's warning diagnostics.
func (f *fetched) warnings() []agentplugin.Diagnostic {
	var out []agentplugin.Diagnostic
	for _, d := range f.pkg.Diagnostics {
		if d.Severity == agentplugin.Warning {
			out = append(out, d)
		}
	}
	return out
}

// codeChanges lists the files that differ between the stored tree of old
// and the fetched plugin under the paths of either's "./" commands.
func (h *Home) codeChanges(old *Entry, f *fetched, servers []Server) []string {
	code := codePaths(append(append([]Server(nil), old.Servers...), servers...))
	if len(code) == 0 {
		return nil
	}
	was := map[string]FileInfo{}
	if list, err := h.readFileList(old.ArchiveDigest); err == nil {
		for _, fi := range list.Files {
			was[fi.Path] = fi
		}
	}
	now := newFileList(f.pkg.Snapshot, f.archiveDigest)
	var out []string
	for _, fi := range now.Files {
		if underCode(fi.Path, code) && was[fi.Path] != fi {
			out = append(out, fi.Path)
		}
		delete(was, fi.Path)
	}
	for p := range was {
		if underCode(p, code) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
