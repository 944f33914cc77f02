package distribution

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// SetChannel points a channel at a release; it needs a publisher token
// that owns the plugin, or an admin token.
func (c *Client) SetChannel(ctx context.Context, u ChannelUpdate) (*Release, error) {
	var rel Release
	if err := c.Request(ctx, http.MethodPut, "/channels", u, &rel); err != nil {
		return nil, err
	}
	return &rel, nil
}

// Yank marks a release yanked (or, with yanked false, restores it); it
// needs a publisher token that owns the plugin, or an admin token.
func (c *Client) Yank(ctx context.Context, releaseID string, yanked bool) (*Release, error) {
	var rel Release
	if err := c.Request(ctx, http.MethodPost, "/yank", YankUpdate{ReleaseID: releaseID, Yanked: yanked}, &rel); err != nil {
		return nil, err
	}
	return &rel, nil
}

// Owners returns the identities that own a plugin; it needs a publisher
// or admin token.
func (c *Client) Owners(ctx context.Context, pluginID string) (*Owners, error) {
	var o Owners
	if err := c.call(ctx, http.MethodGet, "/admin/owners", url.Values{"plugin_id": {pluginID}}, nil, "", &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// ChangeOwners grants, revokes or transfers the ownership of a plugin; it
// needs an admin token.
func (c *Client) ChangeOwners(ctx context.Context, u OwnerUpdate) (*Owners, error) {
	var o Owners
	if err := c.Request(ctx, http.MethodPost, "/admin/owners", u, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// ReportInstallation records an installation report and returns it as
// stored (with Reporter and ReportedAt set by the server). It needs a
// token unless the registry takes anonymous reports.
func (c *Client) ReportInstallation(ctx context.Context, in Installation) (*Installation, error) {
	var out Installation
	if err := c.Request(ctx, http.MethodPost, "/installations", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Installations lists the installation reports, of one plugin when
// pluginID is not "", following the pages within MaxListingBytes.
func (c *Client) Installations(ctx context.Context, pluginID string) ([]Installation, error) {
	q := url.Values{}
	if pluginID != "" {
		q.Set("plugin_id", pluginID)
	}
	all := []Installation{}
	err := c.listAll(ctx, "/installations", q, func(b []byte) (string, int, error) {
		var page Installations
		if err := json.Unmarshal(b, &page); err != nil {
			return "", 0, err
		}
		all = append(all, page.Installations...)
		return page.NextCursor, len(page.Installations), nil
	})
	return all, err
}
