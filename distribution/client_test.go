package distribution

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestBaseURLMustBeSecure(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://plugins.example.com": true,
		"http://127.0.0.1:8080":       true,
		"http://[::1]:8080/prefix":    true,
		"http://localhost":            true,
		"http://plugins.example.com":  false,
		"http://10.0.0.1":             false,
		"ftp://127.0.0.1":             false,
		"https://user:pw@example.com": false,
		"https://example.com/?q=1":    false,
		"127.0.0.1:8080":              false,
		"":                            false,
	} {
		_, err := parseBaseURL(url)
		if (err == nil) != ok {
			t.Errorf("parseBaseURL(%q) = %v, want ok=%v", url, err, ok)
		}
		if err != nil && !errors.Is(err, ErrInsecureURL) {
			t.Errorf("parseBaseURL(%q) = %v, want ErrInsecureURL", url, err)
		}
	}
}

// TestRedirectDropsCredentials follows a redirect from the registry to
// another origin: neither the bearer token nor a header from Auth may
// follow it, while a same-origin redirect keeps them.
func TestRedirectDropsCredentials(t *testing.T) {
	seen := make(chan http.Header, 2)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Write([]byte(`{"plugins":[]}`))
	}))
	defer other.Close()
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Prefix+"/catalog" {
			// 127.0.0.1 and localhost are distinct origins.
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/elsewhere", http.StatusFound)
			return
		}
		seen <- r.Header.Clone()
		w.Write([]byte(`{}`))
	}))
	defer reg.Close()
	c := &Client{
		BaseURL: reg.URL,
		Token:   "secret",
		Auth: func(context.Context) (http.Header, error) {
			return http.Header{"X-Api-Key": {"key"}}, nil
		},
		Header: http.Header{"X-Trace": {"t1"}},
	}
	if _, err := c.Catalog(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := <-seen
	if h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
		t.Fatalf("credentials crossed origins: %v", h)
	}
	if h.Get("X-Trace") != "t1" {
		t.Fatalf("extra header lost: %v", h)
	}
	if err := c.Request(context.Background(), "GET", "/installations", nil, nil); err != nil {
		t.Fatal(err)
	}
	if h := <-seen; h.Get("Authorization") != "Bearer secret" || h.Get("X-Api-Key") != "key" {
		t.Fatalf("credentials missing on the registry itself: %v", h)
	}
}

func TestRedirectToInsecureOriginRefused(t *testing.T) {
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://plugins.example.com/catalog", http.StatusFound)
	}))
	defer reg.Close()
	_, err := (&Client{BaseURL: reg.URL}).Catalog(context.Background())
	if !errors.Is(err, ErrInsecureURL) {
		t.Fatalf("redirect to plain http off loopback: %v", err)
	}
}

func TestStatusErrorCarriesNoBody(t *testing.T) {
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error":{"code":"forbidden","message":"SECRET INTERNAL DETAIL"}}`))
	}))
	defer reg.Close()
	_, err := (&Client{BaseURL: reg.URL}).Catalog(context.Background())
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 403 || se.Code != CodeForbidden || !errors.Is(err, ErrStatus) {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("error repeats the body: %v", err)
	}
	// A code that is not a code is dropped.
	reg2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte(`{"error":{"code":"\u001b[31mevil"}}`))
	}))
	defer reg2.Close()
	_, err = (&Client{BaseURL: reg2.URL, HTTPClient: &http.Client{}}).Catalog(context.Background())
	if !errors.As(err, &se) || se.Code != "" {
		t.Fatalf("got %v", err)
	}
}

func TestResponseSizeLimited(t *testing.T) {
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"plugins":[` + strings.Repeat(" ", 2000) + `]}`))
	}))
	defer reg.Close()
	_, err := (&Client{BaseURL: reg.URL, MaxResponseBytes: 1000}).Catalog(context.Background())
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
}

func TestContextCancels(t *testing.T) {
	block := make(chan struct{})
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-block
	}))
	defer reg.Close()
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := (&Client{BaseURL: reg.URL}).Catalog(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("got %v after %v", err, time.Since(start))
	}
}

func TestDownloadRefusesBadDigest(t *testing.T) {
	c := &Client{BaseURL: "http://127.0.0.1:1"}
	for _, d := range []string{"", "sha256:abc", "SHA256:" + strings.Repeat("a", 64), "sha512:" + strings.Repeat("a", 64)} {
		if _, err := c.Download(context.Background(), d); err == nil || errors.Is(err, ErrStatus) {
			t.Errorf("Download(%q) = %v", d, err)
		}
	}
}

// TestRetries: a request that fails with a transient status is sent again
// with the policy of RetryTransport, the default; one that fails for good
// (400) is not; a caller's own client decides for itself.
func TestRetries(t *testing.T) {
	var calls atomic.Int32
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := calls.Add(1); {
		case r.URL.Query().Get("cursor") == "bad":
			w.WriteHeader(http.StatusBadRequest)
		case n <= 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.Write([]byte(`{"plugins": []}`))
		}
	}))
	defer reg.Close()
	if _, err := (&Client{BaseURL: reg.URL}).CatalogPage(context.Background(), ""); err != nil || calls.Load() != 3 {
		t.Fatalf("after two 503s: %v, %d calls", err, calls.Load())
	}
	calls.Store(0)
	if _, err := (&Client{BaseURL: reg.URL}).CatalogPage(context.Background(), "bad"); err == nil || calls.Load() != 1 {
		t.Fatalf("a 400: %v, %d calls", err, calls.Load())
	}
	calls.Store(0)
	if _, err := (&Client{BaseURL: reg.URL, HTTPClient: &http.Client{}}).CatalogPage(context.Background(), ""); err == nil || calls.Load() != 1 {
		t.Fatalf("a client of the caller's: %v, %d calls", err, calls.Load())
	}
}
