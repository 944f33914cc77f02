package distribution

import (
	"time"

	"github.com/plugkit/plugkit/agentplugin"
)

// Prefix is the path under a registry's base URL where the protocol lives.
const Prefix = "/plugin-protocol/v1"

// DefaultChannel is the channel that resolve and publish use when none is
// named.
const DefaultChannel = "stable"

// Catalog is the response of GET /catalog: one page of plugins, sorted by
// ID. Client.Catalog follows the pages and returns them as one Catalog.
type Catalog struct {
	Plugins []CatalogPlugin `json:"plugins"`
	// NextCursor, when not empty, is the cursor of the next page: pass it
	// as the cursor query parameter. The last page has none.
	NextCursor string `json:"next_cursor,omitempty"`
	// Extra holds members this client does not know.
	Extra Extra `json:"-"`
}

// CatalogPlugin is one plugin in the catalog.
type CatalogPlugin struct {
	// ID is the plugin's identifier: its manifest name.
	ID string `json:"id"`
	// Name is the manifest name (the same as ID today; kept apart so IDs
	// may become namespaced without changing what clients display).
	Name string `json:"name"`
	// Description is the description of the plugin's latest release.
	Description string `json:"description"`
	// Channels maps each channel name to the ID of its release. A channel
	// whose release is yanked is left out, as resolve does.
	Channels map[string]string `json:"channels"`
	// Releases are every release of the plugin, yanked ones included,
	// newest first.
	Releases []Release `json:"releases"`
	// Extra holds members this client does not know.
	Extra Extra `json:"-"`
}

// Release is one immutable published version of a plugin. It is the
// response of GET /resolve.
type Release struct {
	// ID identifies the release: "PLUGIN@VERSION", or "PLUGIN@DIGEST" for a
	// plugin whose manifest has no version.
	ID       string `json:"id"`
	PluginID string `json:"plugin_id"`
	// Version is the manifest version, "" when the manifest has none.
	Version     string `json:"version"`
	Description string `json:"description"`
	// ArtifactDigest is the sha256 of the archive: "sha256:" and 64
	// lowercase hex digits.
	ArtifactDigest string `json:"artifact_digest"`
	// Size is the archive's length in bytes.
	Size int64 `json:"size"`
	// Yanked releases are hidden from resolve by channel but stay
	// downloadable by digest, so pinned installations keep working.
	Yanked      bool      `json:"yanked"`
	PublishedAt time.Time `json:"published_at"`
	// Extra holds members this client does not know.
	Extra Extra `json:"-"`
}

// ResolveQuery selects one release: PluginID, and either ReleaseID or
// Channel. With neither, Channel is DefaultChannel.
type ResolveQuery struct {
	PluginID  string
	ReleaseID string
	Channel   string
}

// PublishResult is the response of POST /publish.
type PublishResult struct {
	Release Release `json:"release"`
	// Channel is the channel now pointing at the release.
	Channel string `json:"channel"`
	// Created is false when the same plugin version had already been
	// published with the same digest: publishing is idempotent.
	Created bool `json:"created"`
}

// ChannelUpdate is the body of PUT /channels: point Channel of PluginID at
// ReleaseID.
type ChannelUpdate struct {
	PluginID  string `json:"plugin_id"`
	Channel   string `json:"channel"`
	ReleaseID string `json:"release_id"`
}

// YankUpdate is the body of POST /yank: set whether ReleaseID is yanked.
type YankUpdate struct {
	ReleaseID string `json:"release_id"`
	Yanked    bool   `json:"yanked"`
}

// Installation is one installation of a plugin that a client reports with
// POST /installations and lists with GET /installations.
type Installation struct {
	// ID is chosen by the reporting client and stable for one
	// installation; reporting the same ID again replaces the record.
	ID             string `json:"id"`
	PluginID       string `json:"plugin_id"`
	ReleaseID      string `json:"release_id"`
	ArtifactDigest string `json:"artifact_digest"`
	// Status is "installed", "updated", "removed" or "failed".
	Status string `json:"status"`
	// Host names the reporting machine or agent host; free text.
	Host string `json:"host,omitempty"`
	// Reporter is the identity of the token that reported it, set by the
	// server: a report can only replace one of the same reporter.
	Reporter string `json:"reporter,omitempty"`
	// ReportedAt is set by the server.
	ReportedAt time.Time `json:"reported_at"`
}

// Installations is the response of GET /installations: one page of
// reports, sorted by plugin, reporter and ID.
type Installations struct {
	Installations []Installation `json:"installations"`
	// NextCursor, when not empty, is the cursor of the next page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail describes one error. Code is stable and listed in
// docs/protocol.md; Message is for people. Diagnostics are set on a 422 for
// a plugin the loader rejected.
type ErrorDetail struct {
	Code        string                   `json:"code"`
	Message     string                   `json:"message"`
	Diagnostics []agentplugin.Diagnostic `json:"diagnostics,omitempty"`
}

// Owners is the response of GET and POST /admin/owners: the identities
// that may publish to, move the channels of and yank a plugin. A plugin
// without owners is admin-only.
type Owners struct {
	PluginID string   `json:"plugin_id"`
	Owners   []string `json:"owners"`
}

// OwnerUpdate is the body of POST /admin/owners (admin tokens only).
// Action is "grant" (add Identity to the owners), "revoke" (remove it) or
// "transfer" (make it the only owner).
type OwnerUpdate struct {
	PluginID string `json:"plugin_id"`
	Action   string `json:"action"`
	Identity string `json:"identity"`
}
