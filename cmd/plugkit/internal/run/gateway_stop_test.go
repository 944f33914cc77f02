//go:build unix

package run

import (
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTPGateway starts plugkit gateway --http on a free loopback port
// with args and returns its /mcp URL.
func startHTTPGateway(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	cmd, errb := gatewayCmd(t, t.TempDir(), append([]string{"--http", "127.0.0.1:0"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	select {
	case url := <-errb.url:
		return url, errb
	case <-time.After(60 * time.Second):
		t.Fatalf("no listening address:\n%s", errb.String())
	}
	return "", nil
}

// post sends a JSON-RPC ping to url with the given headers and returns the
// status.
func post(t *testing.T, url string, header map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestGatewayHTTPLoopbackNeedsNoToken: on a loopback address the gateway
// serves without a token, as documented, to a real MCP client.
func TestGatewayHTTPLoopbackNeedsNoToken(t *testing.T) {
	alpha, _ := gatewayPlugins(t)
	url, errb := startHTTPGateway(t, alpha)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	sess, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect without a token: %v\n%s", err, errb.String())
	}
	defer sess.Close()
	if tools := listTools(t, sess); len(tools) == 0 {
		t.Fatal("no tools")
	}
	if !strings.Contains(errb.String(), "token=false") {
		t.Errorf("the gateway did not say it serves without a token:\n%s", errb.String())
	}
}

// TestGatewayHTTPOrigin: a browser's request is served from the gateway's
// own origin (http:// and the request's Host, so localhost and 127.0.0.1
// differ) or one --allow-origin names; "null" and any other Origin get
// 403, even with the token; a request without Origin is served.
func TestGatewayHTTPOrigin(t *testing.T) {
	alpha, _ := gatewayPlugins(t)
	t.Setenv(gatewayTokenEnv, "or1gin-t0ken")
	url, _ := startHTTPGateway(t, "--allow-origin", "http://localhost:6274", "--allow-origin", "HTTPS://Inspector.Example:8443", alpha)
	hostPort := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	_, port, _ := strings.Cut(hostPort, ":")
	auth := "Bearer or1gin-t0ken"
	for origin, want := range map[string]int{
		"":                                 http.StatusOK,
		"http://" + hostPort:               http.StatusOK,
		"http://localhost:6274":            http.StatusOK,
		"https://inspector.example:8443":   http.StatusOK,
		"http://localhost:" + port:         http.StatusForbidden,
		"https://" + hostPort:              http.StatusForbidden,
		"http://localhost:6275":            http.StatusForbidden,
		"null":                             http.StatusForbidden,
		"http://evil.example":              http.StatusForbidden,
		"http://" + hostPort + ".evil.com": http.StatusForbidden,
	} {
		h := map[string]string{"Authorization": auth}
		if origin != "" {
			h["Origin"] = origin
		}
		if got := post(t, url, h); got != want {
			t.Errorf("Origin %q: status %d, want %d", origin, got, want)
		}
	}
	// Refused before the token is looked at: no token, a foreign origin.
	if got := post(t, url, map[string]string{"Origin": "http://evil.example"}); got != http.StatusForbidden {
		t.Errorf("a foreign origin without the token: %d, want 403", got)
	}
	if got := post(t, url, map[string]string{"Origin": "http://" + hostPort}); got != http.StatusUnauthorized {
		t.Errorf("its own origin without the token: %d, want 401", got)
	}
	for _, bad := range []string{"localhost:6274", "http://localhost:6274/path", "ftp://x", "http://"} {
		if code, _, stderr := runCLI(t, "gateway", "--home", t.TempDir(), "--http", "127.0.0.1:0", "--allow-origin", bad, alpha); code != 2 || !strings.Contains(stderr, "--allow-origin") {
			t.Errorf("--allow-origin %q: exit %d, %s", bad, code, stderr)
		}
	}
	if code, _, _ := runCLI(t, "gateway", "--home", t.TempDir(), "--allow-origin", "http://localhost:6274", alpha); code != 2 {
		t.Errorf("--allow-origin without --http: exit %d, want 2", code)
	}
}

// TestGatewayStopsAsAServer: on SIGTERM, SIGINT or the end of its input,
// the stdio gateway answers the call in flight and exits 0.
func TestGatewayStopsAsAServer(t *testing.T) {
	alpha, _ := gatewayPlugins(t)
	for _, stop := range []string{"SIGTERM", "SIGINT", "EOF"} {
		t.Run(stop, func(t *testing.T) {
			sess, g := stdioGateway(t, t.TempDir(), nil, alpha)
			listTools(t, sess)
			answered := make(chan error, 1)
			go func() {
				res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_one_sleep", Arguments: map[string]any{"ms": 1500}})
				if err == nil && res.IsError {
					err = context.Canceled
				}
				answered <- err
			}()
			time.Sleep(500 * time.Millisecond) // the call is in flight
			switch stop {
			case "SIGTERM":
				g.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				g.cmd.Process.Signal(syscall.SIGINT)
			case "EOF":
				// Closing the session closes the gateway's stdin; the
				// answer then has nowhere to go, so it is not awaited.
			}
			if stop != "EOF" {
				select {
				case err := <-answered:
					if err != nil {
						t.Errorf("the call in flight: %v\n%s", err, g.stderr.String())
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("the call in flight was never answered\n%s", g.stderr.String())
				}
			}
			begin := time.Now()
			sess.Close() // reaps the gateway
			if d := time.Since(begin); d > 10*time.Second {
				t.Errorf("the gateway took %v to exit after %s", d, stop)
			}
			if st := g.cmd.ProcessState; st == nil || st.ExitCode() != 0 {
				t.Errorf("gateway after %s: %v (want exit 0)\n%s", stop, st, g.stderr.String())
			}
		})
	}
}
