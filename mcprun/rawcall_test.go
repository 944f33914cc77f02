package mcprun

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/agentplugin"
)

// connectTestServer starts the test server with env and returns its Conn
// and the file it logs its messages to.
func connectTestServer(t *testing.T, env map[string]string) (*Conn, string) {
	t.Helper()
	root := newRoot(t)
	installServer(t, root, "bin/server")
	logFile := filepath.Join(t.TempDir(), "messages.log")
	srv := stdioServer("p", "s")
	srv.Env = map[string]string{"TESTSERVER_LOG": logFile}
	for k, v := range env {
		srv.Env[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := Connect(ctx, &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{srv}}, srv,
		StartOptions{PlanOptions: baseOptions(t, root)})
	t.Cleanup(func() { c.Close() })
	if st := c.Status(); st.Status != StatusReady {
		t.Fatalf("not ready: %+v", st)
	}
	return c, logFile
}

// Call relays requests as raw JSON beside the SDK session, on the
// sessionless protocol (the SDK's own _meta added) and on a session
// opened by initialize, while the SDK session keeps working.
func TestCallBesideTheSession(t *testing.T) {
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			env := map[string]string{}
			if protocol != "" {
				env["TESTSERVER_PROTOCOL"] = protocol
			}
			c, logFile := connectTestServer(t, env)
			got := c.Session().InitializeResult().ProtocolVersion
			if (protocol == "") != (got >= SessionlessProtocol) {
				t.Fatalf("negotiated %s", got)
			}
			ctx := context.Background()
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Go(func() {
					if i%2 == 0 {
						res, err := c.Session().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"i": i}})
						if err != nil || res.IsError {
							t.Errorf("the SDK session: %v %+v", err, res)
						}
						return
					}
					raw, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"i":`+strconv.Itoa(i)+`}}`))
					var res struct {
						StructuredContent struct{ Arguments map[string]int }
					}
					if err != nil || json.Unmarshal(raw, &res) != nil || res.StructuredContent.Arguments["i"] != i {
						t.Errorf("Call: %v %s", err, raw)
					}
				})
			}
			wg.Wait()
			// The server logs what it reads before it answers.
			log, _ := os.ReadFile(logFile)
			if n := strings.Count(string(log), `read: {"jsonrpc":"2.0","id":"plugkit-`); n != 10 {
				t.Errorf("the server read %d requests with Call's IDs, want 10:\n%s", n, log)
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	c, logFile := connectTestServer(t, nil)
	ctx := context.Background()

	_, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"nosuch"}`))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("an unknown tool: %v, want the server's JSON-RPC error", err)
	}
	if _, err := c.Call(ctx, "tools/call", json.RawMessage(`["not an object"]`)); err == nil {
		t.Error("params that are not an object were sent")
	}

	// A call whose ctx ends is cancelled on the server.
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err = c.Call(tctx, "tools/call", json.RawMessage(`{"name":"sleep","arguments":{"ms":60000}}`))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(begin) > 10*time.Second {
		t.Errorf("a call past its deadline: %v after %v", err, time.Since(begin))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		log, _ := os.ReadFile(logFile)
		if strings.Contains(string(log), `"method":"notifications/cancelled","params":{"requestId":"plugkit-`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never heard of the cancellation:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A server that dies fails the call in flight at once.
	answered := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"sleep","arguments":{"ms":60000}}`))
		answered <- err
	}()
	time.Sleep(200 * time.Millisecond)
	syscall.Kill(c.proc.pid(), syscall.SIGKILL)
	select {
	case err := <-answered:
		if !errors.Is(err, mcp.ErrConnectionClosed) {
			t.Errorf("the call in flight when the server died: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight when the server died was never answered")
	}
	if _, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo"}`)); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("a call after the server died: %v", err)
	}
}

// A remote server has no pipe to relay on: the caller uses the session.
func TestCallRemoteServer(t *testing.T) {
	ts := httptest.NewServer(streamable())
	t.Cleanup(ts.Close) // after the Conn's, which ends the client's event stream
	rt, st := startRemote(t, agentplugin.StreamableHTTP, ts.URL, nil, StartOptions{})
	if st.Status != StatusReady {
		t.Fatalf("%+v", st)
	}
	if _, err := rt.conns[0].Call(context.Background(), "tools/call", json.RawMessage(`{"name":"ping"}`)); !errors.Is(err, ErrNoRawCall) {
		t.Errorf("a remote server: %v, want ErrNoRawCall", err)
	}
}
