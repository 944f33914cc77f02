package host

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// relayGateway serves a plugin "p" with two test servers, "s" (the SDK's
// latest protocol, sessionless) and "old" (2025-11-25, a session opened
// by initialize), over the gateway's IOTransport, and returns the
// gateway and the file each server logs its messages to.
func relayGateway(t *testing.T) (*Gateway, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	logs := map[string]string{"s": filepath.Join(dir, "s.log"), "old": filepath.Join(dir, "old.log")}
	root := writePlugin(t, pluginSpec{name: "p", servers: `{
		"s": {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_LOG": "` + logs["s"] + `", "TESTSERVER_LINK": "test://linked"}},
		"old": {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_LOG": "` + logs["old"] + `", "TESTSERVER_LINK": "test://linked", "TESTSERVER_PROTOCOL": "2025-11-25"}}}`})
	h := newHost(t, []Plugin{loadPlugin(t, root)}, Options{})
	return NewGateway(h, GatewayOptions{}), logs
}

// serveStreams runs the gateway on a pair of pipes, as on stdio, and
// returns the client's ends.
func serveStreams(t *testing.T, gw *Gateway) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := gw.Server().Connect(context.Background(), gw.IOTransport(inR, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		inW.Close()
		ss.Wait()
	})
	return inW, outR
}

// relayClient connects a go-sdk client to the gateway's IOTransport,
// asking for protocol version ("" for the SDK's latest).
func relayClient(t *testing.T, gw *Gateway, version string) *mcp.ClientSession {
	t.Helper()
	w, r := serveStreams(t, gw)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// sdkClient connects a go-sdk client to the gateway in memory, where the
// SDK answers every tool call through the gateway's middleware.
func sdkClient(t *testing.T, gw *Gateway, version string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct,
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// relayed counts the tool calls a server got from the relay.
func relayed(t *testing.T, log string) int {
	t.Helper()
	b, _ := os.ReadFile(log)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "read: ") && strings.Contains(line, `"method":"tools/call"`) && strings.Contains(line, `"id":"plugkit-`) {
			n++
		}
	}
	return n
}

// A relayed tool call is answered as the SDK answers it through the
// middleware, for clients of either protocol and servers of either:
// results, renamed resource URIs, tool errors and unknown tools.
func TestRelayAnswersAsTheSDK(t *testing.T) {
	gw, logs := relayGateway(t)
	ctx := context.Background()
	for _, version := range []string{"", "2025-11-25"} {
		relay, sdk := relayClient(t, gw, version), sdkClient(t, gw, version)
		for _, server := range []string{"s", "old"} {
			before := relayed(t, logs[server])
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"echo", map[string]any{"n": 1, "s": "ü\n\"x\""}},
				{"link", nil},
				{"fail", map[string]any{"text": "on purpose"}},
				{"nosuch", nil},
			}
			for _, c := range calls {
				name := ToolName("p", server, c.tool)
				// Twice: a sessionless client's first call teaches the
				// relay that the SDK accepts its _meta.
				for range 2 {
					got, gotErr := relay.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: c.args})
					want, wantErr := sdk.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: c.args})
					if (gotErr == nil) != (wantErr == nil) || gotErr != nil && !strings.Contains(gotErr.Error(), "unknown tool") {
						t.Errorf("%q %s: relayed %v, the SDK's %v", version, name, gotErr, wantErr)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%q %s: relayed\n%s\nthe SDK's\n%s", version, name, mustMarshal(got), mustMarshal(want))
					}
				}
			}
			// Without arguments the server gets an empty object. (The SDK's
			// client in the gateway refuses the echo tool's result then: it
			// validates an empty object against the output schema wrongly.)
			echo, err := relay.CallTool(ctx, &mcp.CallToolParams{Name: ToolName("p", server, "echo")})
			if err != nil || mustMarshal(echo.StructuredContent) != `{"arguments":{}}` {
				t.Errorf("%q: echo without arguments: %v %s", version, err, mustMarshal(echo))
			}
			link, _ := relay.CallTool(ctx, &mcp.CallToolParams{Name: ToolName("p", server, "link")})
			if l, ok := link.Content[0].(*mcp.ResourceLink); !ok || l.URI != "plugin://p/"+server+"/test://linked" {
				t.Errorf("%q: the link is not renamed for the gateway: %s", version, mustMarshal(link))
			}
			// Every call reaches the server through the relay, but a
			// sessionless client's first (its _meta not known yet) and
			// unknown tools (answered by the gateway).
			want := 2*3 + 2
			if version == "" && server == "s" {
				want--
			}
			if n := relayed(t, logs[server]) - before; n != want {
				t.Errorf("%q: server %s got %d calls from the relay, want %d", version, server, n, want)
			}
		}
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A call the client cancels is cancelled on the server, and Drain waits
// for relayed calls as for any other.
func TestRelayCancelsAndDrains(t *testing.T) {
	gw, logs := relayGateway(t)
	cs := relayClient(t, gw, "2025-11-25")
	ctx := context.Background()
	sleep := ToolName("p", "old", "sleep")
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: sleep, Arguments: map[string]any{"ms": 1}}); err != nil {
		t.Fatal(err)
	}

	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(tctx, &mcp.CallToolParams{Name: sleep, Arguments: map[string]any{"ms": 60000}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a cancelled call: %v", err)
	}
	waitFor(t, "the cancellation to reach the server", func() bool {
		b, _ := os.ReadFile(logs["old"])
		return strings.Contains(string(b), `"method":"notifications/cancelled","params":{"requestId":"plugkit-`)
	})
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	if err := gw.Drain(dctx); err != nil {
		t.Errorf("Drain after the cancelled call: %v", err)
	}

	answered := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: sleep, Arguments: map[string]any{"ms": 1000}})
		answered <- err
	}()
	time.Sleep(300 * time.Millisecond)
	short, scancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer scancel()
	if err := gw.Drain(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Drain with a relayed call in flight: %v, want it to wait", err)
	}
	if err := gw.Drain(dctx); err != nil {
		t.Errorf("Drain: %v", err)
	}
	select {
	case err := <-answered:
		if err != nil {
			t.Errorf("the drained call: %v", err)
		}
	default:
		t.Error("Drain returned before the call was answered")
	}
}

// Before the handshake the relay takes nothing: the SDK refuses the call.
func TestRelayWaitsForTheHandshake(t *testing.T) {
	gw, logs := relayGateway(t)
	w, r := serveStreams(t, gw)
	go io.WriteString(w, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"p_old_echo"}}`+"\n")
	var res struct {
		ID    int
		Error *jsonrpc.Error
	}
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.ID != 7 || res.Error == nil || !strings.Contains(res.Error.Message, "initialization") {
		t.Errorf("a call before initialize: %+v", res)
	}
	if n := relayed(t, logs["old"]); n != 0 {
		t.Errorf("the relay forwarded %d calls before the handshake", n)
	}
}

// With GatewayOptions.Ready, a relayed call waits until the plugins are
// loaded, then is answered.
func TestRelayWaitsUntilReady(t *testing.T) {
	log := filepath.Join(t.TempDir(), "s.log")
	root := writePlugin(t, pluginSpec{name: "p", servers: `{"s": {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_LOG": "` + log + `"}}}`})
	h := newHost(t, nil, Options{})
	ready := make(chan struct{})
	cs := relayClient(t, NewGateway(h, GatewayOptions{Ready: ready}), "2025-11-25")
	answered := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "p_s_echo", Arguments: map[string]any{"n": 1}})
		if err != nil {
			t.Error(err)
		}
		answered <- res
	}()
	select {
	case res := <-answered:
		t.Fatalf("answered before ready: %s", mustMarshal(res))
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := h.Set([]Plugin{loadPlugin(t, root)}); err != nil {
		t.Fatal(err)
	}
	close(ready)
	select {
	case res := <-answered:
		if res == nil || mustMarshal(res.StructuredContent) != `{"arguments":{"n":1}}` || relayed(t, log) != 1 {
			t.Errorf("after ready: %s, %d calls relayed", mustMarshal(res), relayed(t, log))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still held after ready")
	}
}

func TestRelayTakesIDsItWritesBackAsTheSDK(t *testing.T) {
	for id, want := range map[string]bool{`1`: true, `0`: true, `-12`: true, `"a"`: true, `""`: true, `123456789012345`: true,
		`1234567890123456`: false, `1e3`: false, `1.0`: false, `01`: false, `-0`: false, `-`: false, `null`: false, `{}`: false, ``: false} {
		if isID(json.RawMessage(id)) != want {
			t.Errorf("isID(%s) = %v", id, !want)
		}
	}
}

// The end of the input cancels the relayed calls in flight on their
// servers, as the SDK cancels its own.
func TestRelayInputEndCancels(t *testing.T) {
	gw, logs := relayGateway(t)
	w, r := serveStreams(t, gw)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName("p", "old", "sleep"), Arguments: map[string]any{"ms": 60000}})
	waitFor(t, "the call to reach the server", func() bool { return relayed(t, logs["old"]) == 1 })
	w.Close()
	waitFor(t, "the cancellation to reach the server", func() bool {
		b, _ := os.ReadFile(logs["old"])
		return strings.Contains(string(b), `"method":"notifications/cancelled","params":{"requestId":"plugkit-`)
	})
	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := gw.Drain(dctx); err != nil {
		t.Errorf("Drain after the input ended: %v", err)
	}
}
