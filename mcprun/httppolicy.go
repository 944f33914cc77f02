package mcprun

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/plugkit/plugkit/agentplugin"
)

// checkURL applies section 7.2.1's URL rules (agentplugin.CheckEndpoint)
// as mcprun errors. It runs on the configured URL and again on every
// request and redirect, because a redirect can change all of them.
func checkURL(u *url.URL) error {
	err := agentplugin.CheckEndpoint(u)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, agentplugin.ErrInsecureURL):
		return fmt.Errorf("%w: %s", ErrInsecureURL, u.Host)
	default:
		return fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
}

// origin is the RFC 6454 origin of u: scheme, host and port, with the
// default port made explicit so that "https://a" and "https://a:443" match.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// mergeHeaders checks the configured headers and lays the host's over
// them: names are compared case-insensitively, and a host header replaces
// a configured one of the same name. Values are used literally.
func mergeHeaders(configured map[string]string, host http.Header) (http.Header, error) {
	h := make(http.Header, len(configured)+len(host))
	for _, k := range slices.Sorted(maps.Keys(configured)) {
		ck := http.CanonicalHeaderKey(k)
		if err := agentplugin.CheckHeader(k, configured[k]); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidHeader, err)
		}
		if _, dup := h[ck]; dup {
			return nil, fmt.Errorf("%w: %q appears twice under different casing", ErrInvalidHeader, k)
		}
		h[ck] = []string{configured[k]}
	}
	for k, vs := range host {
		h[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
	}
	return h, nil
}

// policy is the RoundTripper and redirect check that every request to a
// remote server goes through. It adds the configured and host headers only
// to requests for the configured origin, and only where the HTTP and MCP
// layers have not set the same name themselves (they win, section 7.2.1).
type policy struct {
	origin string
	header http.Header
	// follow allows requests to other origins, always without header.
	follow bool
	base   http.RoundTripper
	// refused is the first request the policy refused, kept because the
	// SDK reports some transport errors (legacy SSE posts) only as text.
	refused atomic.Pointer[error]
}

// RoundTrip implements http.RoundTripper.
func (p *policy) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := p.check(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close() // RoundTrip must close the body, even on error
		}
		return nil, err
	}
	if origin(req.URL) == p.origin && len(p.header) > 0 {
		// A RoundTripper must not modify the caller's request.
		req = req.Clone(req.Context())
		for k, vs := range p.header {
			if _, generated := req.Header[k]; !generated && !layerOwned(k) {
				req.Header[k] = vs
			}
		}
	}
	return p.base.RoundTrip(req)
}

// layerOwned reports the canonical header names that only the HTTP and
// MCP layers may set. They win even on a request where they happen to be
// absent: a configured Mcp-Session-Id on the initialize request, or a
// configured Content-Length, would break the protocol, not extend it.
func layerOwned(k string) bool {
	switch k {
	case "Accept", "Content-Type", "Content-Length", "Content-Encoding", "Host", "Connection",
		"Transfer-Encoding", "Te", "Trailer", "Upgrade", "Keep-Alive", "Proxy-Connection",
		"Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id", "Mcp-Method", "Mcp-Name":
		return true
	}
	return strings.HasPrefix(k, "Mcp-Param-")
}

// checkRedirect is the http.Client's CheckRedirect. It refuses a hop to
// another origin unless following is allowed (the RoundTripper then sends
// no configured header there), and checks the URL rules again.
func (p *policy) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return p.check(req.URL)
}

func (p *policy) check(u *url.URL) error {
	err := checkURL(u)
	if err == nil && origin(u) != p.origin && !p.follow {
		err = fmt.Errorf("%w: %s is not %s", ErrCrossOrigin, origin(u), p.origin)
	}
	if err != nil {
		p.refused.CompareAndSwap(nil, &err)
	}
	return err
}

// explain makes the policy's refusal matchable with errors.Is in err,
// which reports a failed connection, when the SDK kept only its text.
func explain(err error, c *http.Client) error {
	p, ok := c.Transport.(*policy)
	if !ok || err == nil {
		return err
	}
	if ref := p.refused.Load(); ref != nil && !errors.Is(err, *ref) {
		return &refusalError{err, *ref}
	}
	return err
}

// refusalError is a connection error whose cause is a policy refusal.
type refusalError struct{ err, cause error }

func (e *refusalError) Error() string   { return e.err.Error() }
func (e *refusalError) Unwrap() []error { return []error{e.err, e.cause} }

// newHTTPClient returns the client for one remote server: our policy over
// base, no cookie jar (section 7.2.1 headers must not be joined by cookies
// the server sets), redirects checked hop by hop.
func newHTTPClient(u *url.URL, header http.Header, follow bool, base http.RoundTripper) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	p := &policy{origin: origin(u), header: header, follow: follow, base: base}
	return &http.Client{Transport: p, CheckRedirect: p.checkRedirect, Jar: nil}
}
