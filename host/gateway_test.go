package host

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGatewayReadyHoldsRequests: with GatewayOptions.Ready, the gateway
// completes the MCP handshake at once, and a list waits until the host
// has its plugins and Ready is closed, then answers with them.
func TestGatewayReadyHoldsRequests(t *testing.T) {
	p := loadPlugin(t, writePlugin(t, pluginSpec{name: "p", skills: map[string]string{"guide": "Read me."}}))
	h := newHost(t, nil, Options{})
	ready := make(chan struct{})
	gw := NewGateway(h, GatewayOptions{Ready: ready})
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("handshake before ready: %v", err)
	}
	defer cs.Close()

	listed := make(chan *mcp.ListPromptsResult, 1)
	go func() {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Error(err)
		}
		listed <- res
	}()
	select {
	case res := <-listed:
		t.Fatalf("prompts/list answered before ready: %+v", res)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := h.Set([]Plugin{p}); err != nil {
		t.Fatal(err)
	}
	close(ready)
	select {
	case res := <-listed:
		if res == nil || len(res.Prompts) != 1 || res.Prompts[0].Name != "p/guide" {
			t.Errorf("prompts/list after ready: %+v", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("prompts/list still held after ready")
	}
}
