package distribution

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
)

// DefaultMaxResponseBytes bounds a JSON response when
// Client.MaxResponseBytes is zero. It is twice the page budget of
// plugkit serve (4 MiB), so that every page a conforming server sends
// fits.
const DefaultMaxResponseBytes = 8 << 20

// DefaultMaxListingBytes bounds all the pages of one listing (Catalog,
// Installations) together when Client.MaxListingBytes is zero.
const DefaultMaxListingBytes = 128 << 20

// maxErrorBody bounds how much of an error response is read to find its
// code.
const maxErrorBody = 64 << 10

// defaultHTTPClient is used when Client.HTTPClient is nil: the default
// transport with the retries of RetryTransport, and a timeout so that a
// stalled registry cannot hang a caller that passed a context without a
// deadline.
var defaultHTTPClient = &http.Client{Timeout: 5 * time.Minute, Transport: RetryTransport(nil)}

// RetryTransport wraps base (nil: http.DefaultTransport) with plugkit's one
// retry policy, which its OCI client (package oci) follows too: oras-go's
// default, up to 5 retries of a request that failed with a network error
// or got 408, 429 or a 5xx status, waiting 250 ms doubled at each attempt
// (10% jitter), between 200 ms and 3 s, or what a 429's Retry-After asks.
// A request whose body cannot be sent again (no GetBody) is not retried.
// Every request of the protocol may be retried: publishing the same
// archive again, reporting the same installation again, yanking a yanked
// release change nothing.
func RetryTransport(base http.RoundTripper) http.RoundTripper { return retry.NewTransport(base) }

// Client talks to one registry. The zero value is not usable until BaseURL
// is set; every other field has a sane zero value. A Client is safe for
// concurrent use once configured.
type Client struct {
	// BaseURL is the registry's origin, optionally with a path prefix
	// ("https://plugins.example.com" or "https://example.com/registry"). It
	// must be https, except on a loopback address.
	BaseURL string
	// Token, when set, is sent as "Authorization: Bearer TOKEN".
	Token string
	// Auth, when set, returns credential headers for each request (a
	// token that refreshes, say). It is called after Token is applied, so
	// its headers win.
	Auth func(ctx context.Context) (http.Header, error)
	// Header holds extra headers for every request.
	Header http.Header
	// HTTPClient sends the requests; nil means a client with the default
	// transport, the retries of RetryTransport and a 5 minute timeout. Its CheckRedirect, if any, still
	// runs, after the Client's own redirect policy.
	HTTPClient *http.Client
	// MaxResponseBytes bounds a JSON response (default 8 MiB).
	MaxResponseBytes int64
	// MaxListingBytes bounds the pages of one listing together (default
	// 128 MiB): Catalog and Installations follow the server's cursors
	// until the last page or this bound, which is ErrTooLarge.
	MaxListingBytes int64
	// Limits bound a downloaded artifact: MaxArchiveBytes bounds the
	// response, the others its unpacking. Zero fields take archive's
	// defaults.
	Limits archive.Limits
	// LoadOptions are passed to agentplugin.Load by Download.
	LoadOptions agentplugin.Options
}

// Catalog returns the registry's whole catalog: it follows the pages of
// GET /catalog to the last one, within MaxListingBytes. The result's Extra
// holds the unknown members of the first page.
func (c *Client) Catalog(ctx context.Context) (*Catalog, error) {
	var all *Catalog
	err := c.listAll(ctx, "/catalog", url.Values{}, func(b []byte) (string, int, error) {
		var page Catalog
		if err := decodeResponse(b, &page); err != nil {
			return "", 0, err
		}
		if all == nil {
			all = &page
		} else {
			all.Plugins = append(all.Plugins, page.Plugins...)
		}
		return page.NextCursor, len(page.Plugins), nil
	})
	if err != nil {
		return nil, err
	}
	all.NextCursor = ""
	if all.Plugins == nil {
		all.Plugins = []CatalogPlugin{}
	}
	return all, nil
}

// CatalogPage returns one page of the catalog: the first for cursor "",
// otherwise the page after the one whose NextCursor it is.
func (c *Client) CatalogPage(ctx context.Context, cursor string) (*Catalog, error) {
	v := url.Values{}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	var cat Catalog
	if err := c.call(ctx, http.MethodGet, "/catalog", v, nil, "", &cat); err != nil {
		return nil, err
	}
	return &cat, nil
}

// Plugin returns the catalog entry of one plugin: its channels and
// releases. A plugin the registry does not have is ErrNoPlugin.
func (c *Client) Plugin(ctx context.Context, pluginID string) (*CatalogPlugin, error) {
	if err := CheckPluginID(pluginID); err != nil {
		return nil, err
	}
	var cat Catalog
	if err := c.call(ctx, http.MethodGet, "/catalog", url.Values{"plugin_id": {pluginID}}, nil, "", &cat); err != nil {
		return nil, err
	}
	for i := range cat.Plugins {
		if cat.Plugins[i].ID == pluginID {
			return &cat.Plugins[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNoPlugin, pluginID)
}

// Resolve returns the release that q selects.
func (c *Client) Resolve(ctx context.Context, q ResolveQuery) (*Release, error) {
	v := url.Values{}
	if q.PluginID != "" {
		v.Set("plugin_id", q.PluginID)
	}
	if q.ReleaseID != "" {
		v.Set("release_id", q.ReleaseID)
	}
	if q.Channel != "" {
		v.Set("channel", q.Channel)
	}
	var rel Release
	if err := c.call(ctx, http.MethodGet, "/resolve", v, nil, "", &rel); err != nil {
		return nil, err
	}
	return &rel, nil
}

// listAll follows the pages of a listing: page decodes one and returns its
// next cursor and how many entries it held. A cursor that repeats the previous one, or a page that is
// empty yet has a successor, is ErrInvalidResponse; more than
// MaxListingBytes in all is ErrTooLarge.
func (c *Client) listAll(ctx context.Context, path string, query url.Values, page func([]byte) (string, int, error)) error {
	budget := c.MaxListingBytes
	if budget <= 0 {
		budget = DefaultMaxListingBytes
	}
	limit := c.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	cursor := ""
	for {
		if cursor != "" {
			query.Set("cursor", cursor)
		}
		b, err := c.send(ctx, http.MethodGet, path, query, nil, "", "application/json", min(limit, budget))
		if err != nil {
			if errors.Is(err, ErrTooLarge) && budget < limit {
				return fmt.Errorf("%w: GET %s: the listing is over %d bytes", ErrTooLarge, path, c.maxListing())
			}
			return err
		}
		budget -= int64(len(b))
		next, n, err := page(b)
		if err != nil {
			return fmt.Errorf("%w: GET %s: %v", ErrInvalidResponse, path, err)
		}
		switch {
		case next == "":
			return nil
		case n == 0:
			return fmt.Errorf("%w: GET %s: an empty page with a next cursor", ErrInvalidResponse, path)
		case next == cursor:
			return fmt.Errorf("%w: GET %s: the cursor %q does not advance", ErrInvalidResponse, path, next)
		}
		cursor = next
	}
}

func (c *Client) maxListing() int64 {
	if c.MaxListingBytes > 0 {
		return c.MaxListingBytes
	}
	return DefaultMaxListingBytes
}

// Publish uploads a plugin archive and points channel at its release (""
// means DefaultChannel). A plugin the server's loader rejects is a
// *StatusError with Status 422 and the diagnostics.
func (c *Client) Publish(ctx context.Context, archiveBytes []byte, channel string) (*PublishResult, error) {
	v := url.Values{}
	if channel != "" {
		v.Set("channel", channel)
	}
	var res PublishResult
	if err := c.call(ctx, http.MethodPost, "/publish", v, archiveBytes, "application/gzip", &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Request makes a JSON request to path below the protocol prefix, for the
// endpoints that have no method of their own (installation listing and
// reporting). path must start with "/" and hold no traversal, query,
// fragment, percent-escape or other origin. A non-nil body is sent as JSON;
// a 2xx response is decoded into out unless out is nil.
func (c *Client) Request(ctx context.Context, method, path string, body, out any) error {
	if err := checkRequestPath(path); err != nil {
		return err
	}
	var raw []byte
	var ctype string
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("distribution: encode request: %w", err)
		}
		raw, ctype = b, "application/json"
	}
	return c.call(ctx, method, path, nil, raw, ctype, out)
}

// checkRequestPath keeps Request below the prefix of the configured origin.
func checkRequestPath(p string) error {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return fmt.Errorf("%w: %q must start with a single /", ErrInvalidPath, p)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/-._~:@", c) >= 0
		if !ok {
			return fmt.Errorf("%w: %q holds %q", ErrInvalidPath, p, c)
		}
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: %q holds an empty, . or .. segment", ErrInvalidPath, p)
		}
	}
	return nil
}

// call sends a request and decodes a JSON response into out.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body []byte, ctype string, out any) error {
	limit := c.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	b, err := c.send(ctx, method, path, query, body, ctype, "application/json", limit)
	if err != nil || out == nil {
		return err
	}
	if err := decodeResponse(b, out); err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrInvalidResponse, method, path, err)
	}
	return nil
}

// send makes one request and returns the body of a 2xx response, read up
// to limit bytes.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body []byte, ctype, accept string, limit int64) ([]byte, error) {
	base, err := parseBaseURL(c.BaseURL)
	if err != nil {
		return nil, err
	}
	u := *base
	u.Path = strings.TrimSuffix(base.Path, "/") + Prefix + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	creds, err := c.headers(ctx, req)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", accept)
	resp, err := c.httpClient(base, creds).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusError(resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s %s: over %d bytes", ErrTooLarge, method, path, limit)
	}
	return b, nil
}

// headers sets the extra and credential headers on req, and returns the
// names of the credential headers, which must not follow a redirect to
// another origin.
func (c *Client) headers(ctx context.Context, req *http.Request) ([]string, error) {
	req.Header.Set("User-Agent", "plugkit")
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	creds := []string{"Authorization"}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.Auth != nil {
		h, err := c.Auth(ctx)
		if err != nil {
			return nil, fmt.Errorf("distribution: auth: %w", err)
		}
		for k, vs := range h {
			req.Header.Del(k)
			for _, v := range vs {
				req.Header.Add(k, v)
			}
			creds = append(creds, k)
		}
	}
	return creds, nil
}

// httpClient returns a shallow copy of the caller's client whose redirect
// policy refuses insecure targets and drops the credential headers on a
// redirect to another origin. net/http drops Authorization itself, but not
// the arbitrary headers an Auth function may return.
func (c *Client) httpClient(base *url.URL, creds []string) *http.Client {
	hc := defaultHTTPClient
	if c.HTTPClient != nil {
		hc = c.HTTPClient
	}
	cp := *hc
	next := hc.CheckRedirect
	origin := originOf(base)
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("distribution: stopped after 10 redirects")
		}
		if err := checkSecure(req.URL); err != nil {
			return err
		}
		if originOf(req.URL) != origin {
			for _, k := range creds {
				req.Header.Del(k)
			}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &cp
}

// originOf returns scheme://host:port with the default port made explicit,
// so that "https://a" and "https://a:443" are one origin.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// parseBaseURL checks a base URL: absolute http(s), a host, no user
// information, query or fragment, and https unless the host is loopback.
func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("%w: %q is not a base URL", ErrInsecureURL, s)
	}
	if err := checkSecure(u); err != nil {
		return nil, err
	}
	return u, nil
}

// checkSecure requires https, or http to a loopback host.
func checkSecure(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if agentplugin.IsLoopbackHost(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s://%s", ErrInsecureURL, u.Scheme, u.Host)
}

// statusError builds the error of a non-2xx response from at most
// maxErrorBody bytes of its body, keeping only a well-formed code and, on a
// 422, the diagnostics.
func statusError(resp *http.Response) error {
	se := &StatusError{Status: resp.StatusCode}
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 && n <= 24*3600 {
		se.RetryAfter = n
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var body ErrorBody
	if json.Unmarshal(b, &body) == nil {
		if isCode(body.Error.Code) {
			se.Code = body.Error.Code
		}
		if resp.StatusCode == http.StatusUnprocessableEntity {
			se.Diagnostics = body.Error.Diagnostics
		}
	}
	return se
}

// isCode reports whether s looks like a protocol error code, so that no
// arbitrary server text ends up in an error message.
func isCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < 'a' || s[i] > 'z') && s[i] != '_' {
			return false
		}
	}
	return true
}
