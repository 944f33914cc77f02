package store

import (
	"errors"

	"github.com/plugkit/plugkit/distribution"
)

// JudgePublish decides a publish from the release already stored under
// its ID (old, or lookupErr from reading it): a new release is created; the
// same digest again is accepted without creating anything, unless yanked;
// another digest is ErrConflict. Every Store implementation decides the
// same way.
func JudgePublish(old distribution.Release, lookupErr error, digest string) (created bool, err error) {
	switch {
	case errors.Is(lookupErr, ErrNotFound):
		return true, nil
	case lookupErr != nil:
		return false, lookupErr
	case old.ArtifactDigest != digest:
		return false, ErrConflict
	case old.Yanked:
		return false, ErrYanked
	}
	return false, nil
}

// PageBuilder assembles a catalog page from the rows an implementation
// reads: its plugins first, sorted, then the releases and channels of the
// ID range they span (rows of plugins outside the page are dropped).
type PageBuilder struct {
	plugins []distribution.CatalogPlugin
	index   map[string]int
}

// AddPlugin appends a plugin to the page.
func (b *PageBuilder) AddPlugin(id, name, description string) {
	if b.index == nil {
		b.index = map[string]int{}
	}
	b.index[id] = len(b.plugins)
	b.plugins = append(b.plugins, distribution.CatalogPlugin{ID: id, Name: name, Description: description,
		Channels: map[string]string{}, Releases: []distribution.Release{}})
}

// Span returns the first and last plugin IDs of the page; ok is false for
// an empty page.
func (b *PageBuilder) Span() (first, last string, ok bool) {
	if len(b.plugins) == 0 {
		return "", "", false
	}
	return b.plugins[0].ID, b.plugins[len(b.plugins)-1].ID, true
}

// AddRelease adds a release to its plugin, in the order given.
func (b *PageBuilder) AddRelease(rel distribution.Release) {
	if i, ok := b.index[rel.PluginID]; ok {
		b.plugins[i].Releases = append(b.plugins[i].Releases, rel)
	}
}

// AddChannel records a channel of a plugin.
func (b *PageBuilder) AddChannel(plugin, channel, release string) {
	if i, ok := b.index[plugin]; ok {
		b.plugins[i].Channels[channel] = release
	}
}

// Plugins returns the page, never nil.
func (b *PageBuilder) Plugins() []distribution.CatalogPlugin {
	if b.plugins == nil {
		return []distribution.CatalogPlugin{}
	}
	return b.plugins
}

// AddPlugins adds the plugins of rows of the columns id, name,
// description, in their order.
func (b *PageBuilder) AddPlugins(rows Rows) error { return eachOfThree(rows, b.AddPlugin) }

// AddReleases adds the releases of rows of ScanRelease's columns, in
// their order.
func (b *PageBuilder) AddReleases(rows Rows) error {
	for rows.Next() {
		rel, err := ScanRelease(rows)
		if err != nil {
			return err
		}
		b.AddRelease(rel)
	}
	return rows.Err()
}

// AddChannels adds the channels of rows of the columns plugin_id, name,
// release_id.
func (b *PageBuilder) AddChannels(rows Rows) error { return eachOfThree(rows, b.AddChannel) }

// eachOfThree hands each row of three text columns to f.
func eachOfThree(rows Rows, f func(a, b, c string)) error {
	for rows.Next() {
		var a, b, c string
		if err := rows.Scan(&a, &b, &c); err != nil {
			return err
		}
		f(a, b, c)
	}
	return rows.Err()
}
