package mcprun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/plugkit/plugkit/agentplugin"
)

// recorder is an HTTP server on 127.0.0.1 that remembers every request's
// method, request URI and headers before handing it to next.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newRecorder(t *testing.T, next http.Handler) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, &http.Request{Method: req.Method, RequestURI: req.RequestURI, Header: req.Header.Clone()})
		r.mu.Unlock()
		next.ServeHTTP(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.reqs...)
}

// mcpServer is a minimal in-process MCP server with one tool.
func mcpServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return nil, struct{}{}, nil
	})
	return s
}

// streamable serves MCP over Streamable HTTP and sets a cookie on every
// response, so the tests can see that no cookie comes back.
func streamable() http.Handler {
	s := mcpServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "track", Value: "me"})
		h.ServeHTTP(w, r)
	})
}

// redirectTo answers every request with a 307 to the same path on base.
func redirectTo(base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, base+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
}

func startRemote(t *testing.T, typ agentplugin.Transport, url string, headers map[string]string, opts StartOptions) (*Runtime, ServerStatus) {
	t.Helper()
	srv := agentplugin.Server{ID: "p/h", Name: "h", Type: typ, URL: url, Headers: headers}
	if opts.Root == "" {
		opts.PlanOptions = baseOptions(t, newRoot(t))
	}
	rt := startPlugin(t, &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{srv}}, opts)
	return rt, status(t, rt, "p/h")
}

var configuredHeaders = map[string]string{
	"x-tenant":             "public-tenant",
	"X-Literal":            "${PLUGIN_ROOT} $HOME",
	"authorization":        "configured",
	"accept":               "text/plain",
	"Content-Type":         "text/plain",
	"Mcp-Protocol-Version": "1999-01-01",
	"MCP-SESSION-ID":       "configured-session",
}

func TestSpec721_HeaderPrecedenceAndLiteralURL(t *testing.T) {
	rec := newRecorder(t, streamable())
	const path = "/mcp/a%20b?q=1&r=%24HOME"
	opts := StartOptions{}
	opts.PlanOptions = baseOptions(t, newRoot(t))
	opts.HostHeaders = map[string]http.Header{"p/h": {"AUTHORIZATION": {"Bearer host"}}}
	rt, st := startRemote(t, agentplugin.StreamableHTTP, rec.URL+path, configuredHeaders, opts)
	if st.Status != StatusReady {
		t.Fatalf("status %s: %s", st.Status, st.Reason)
	}
	if _, err := rt.Session("p/h").CallTool(context.Background(), &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if len(reqs) < 3 {
		t.Fatalf("only %d requests recorded", len(reqs))
	}
	for i, r := range reqs {
		h := r.Header
		where := fmt.Sprintf("request %d (%s)", i, r.Method)
		if r.RequestURI != path {
			t.Errorf("%s: URI %q, want %q as written", where, r.RequestURI, path)
		}
		for k, want := range map[string]string{"X-Tenant": "public-tenant", "X-Literal": "${PLUGIN_ROOT} $HOME", "Authorization": "Bearer host"} {
			if got := h.Values(k); len(got) != 1 || got[0] != want {
				t.Errorf("%s: %s = %q, want %q", where, k, got, want)
			}
		}
		if a := h.Get("Accept"); !strings.Contains(a, "text/event-stream") {
			t.Errorf("%s: Accept %q, want the SDK's", where, a)
		}
		if r.Method == http.MethodPost && h.Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type %q, want the SDK's", where, h.Get("Content-Type"))
		}
		if v := h.Get("Mcp-Protocol-Version"); v == "1999-01-01" {
			t.Errorf("%s: configured Mcp-Protocol-Version won", where)
		}
		if v := h.Get("Mcp-Session-Id"); v == "configured-session" {
			t.Errorf("%s: configured Mcp-Session-Id was sent", where)
		}
		if c := h.Get("Cookie"); c != "" {
			t.Errorf("%s: cookie %q sent back", where, c)
		}
	}
}

func TestSpec721_CrossOriginRedirectRefusedByDefault(t *testing.T) {
	other := newRecorder(t, streamable())
	front := newRecorder(t, redirectTo(other.URL))
	_, st := startRemote(t, agentplugin.StreamableHTTP, front.URL+"/mcp", configuredHeaders, StartOptions{})
	if st.Status != StatusFailed || !errors.Is(st.Err, ErrCrossOrigin) {
		t.Fatalf("status %s (%v), want failed with ErrCrossOrigin", st.Status, st.Err)
	}
	if n := len(other.requests()); n != 0 {
		t.Fatalf("the other origin received %d requests", n)
	}
}

func TestSpec721_CrossOriginRedirectFollowedWithoutHeaders(t *testing.T) {
	other := newRecorder(t, streamable())
	front := newRecorder(t, redirectTo(other.URL))
	opts := StartOptions{}
	opts.PlanOptions = baseOptions(t, newRoot(t))
	opts.FollowCrossOrigin = true
	opts.HostHeaders = map[string]http.Header{"p/h": {"Authorization": {"Bearer host"}}}
	_, st := startRemote(t, agentplugin.StreamableHTTP, front.URL+"/mcp", configuredHeaders, opts)
	if st.Status != StatusReady {
		t.Fatalf("status %s: %s", st.Status, st.Reason)
	}
	if len(front.requests()) == 0 || front.requests()[0].Header.Get("X-Tenant") != "public-tenant" {
		t.Errorf("the configured origin must still get its headers")
	}
	reqs := other.requests()
	if len(reqs) == 0 {
		t.Fatal("the redirect was not followed")
	}
	for _, r := range reqs {
		if r.Header.Get("X-Tenant") != "" || r.Header.Get("Authorization") != "" || r.Header.Get("X-Literal") != "" {
			t.Errorf("%s to the other origin carried configured or host headers: %v", r.Method, r.Header)
		}
	}
}

func TestSpec721_SameOriginRedirectKeepsHeaders(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable())
	mux.Handle("/old", http.RedirectHandler("/mcp", http.StatusPermanentRedirect))
	rec := newRecorder(t, mux)
	_, st := startRemote(t, agentplugin.StreamableHTTP, rec.URL+"/old", configuredHeaders, StartOptions{})
	if st.Status != StatusReady {
		t.Fatalf("status %s: %s", st.Status, st.Reason)
	}
	for _, r := range rec.requests() {
		if r.Header.Get("X-Tenant") != "public-tenant" {
			t.Errorf("%s %s lost the configured header", r.Method, r.RequestURI)
		}
	}
}

func TestSpec721_RedirectToPlainHTTPOffLoopbackRefused(t *testing.T) {
	front := newRecorder(t, redirectTo("http://mcp.example.com"))
	opts := StartOptions{}
	opts.PlanOptions = baseOptions(t, newRoot(t))
	opts.FollowCrossOrigin = true
	_, st := startRemote(t, agentplugin.StreamableHTTP, front.URL+"/mcp", nil, opts)
	if st.Status != StatusFailed || !errors.Is(st.Err, ErrInsecureURL) {
		t.Fatalf("status %s (%v), want failed with ErrInsecureURL", st.Status, st.Err)
	}
}

func TestSpec721_LegacySSESendsHeadersToItsOrigin(t *testing.T) {
	s := mcpServer()
	rec := newRecorder(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	rt, st := startRemote(t, agentplugin.SSE, rec.URL+"/sse", map[string]string{"X-Tenant": "public-tenant"}, StartOptions{})
	if st.Status != StatusReady {
		t.Fatalf("status %s: %s", st.Status, st.Reason)
	}
	if _, err := rt.Session("p/h").CallTool(context.Background(), &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{}
	for _, r := range rec.requests() {
		methods[r.Method] = true
		if r.Header.Get("X-Tenant") != "public-tenant" {
			t.Errorf("%s %s without the configured header", r.Method, r.RequestURI)
		}
	}
	if !methods["GET"] || !methods["POST"] {
		t.Errorf("requests %v, want the event stream and posts", methods)
	}
}

func TestSpec721_SSEEndpointEventToOtherOriginRefused(t *testing.T) {
	other := newRecorder(t, http.NotFoundHandler())
	front := newRecorder(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message?session=1\n\n", other.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	_, st := startRemote(t, agentplugin.SSE, front.URL+"/sse", map[string]string{"X-Tenant": "public-tenant"}, StartOptions{})
	if st.Status != StatusFailed || !errors.Is(st.Err, ErrCrossOrigin) {
		t.Fatalf("status %s (%s), want failed: %v", st.Status, st.Reason, ErrCrossOrigin)
	}
	if n := len(other.requests()); n != 0 {
		t.Fatalf("the endpoint's origin received %d requests", n)
	}
}
