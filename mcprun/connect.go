package mcprun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect opens the transport and runs the MCP handshake under the two
// timeouts, and returns a session that lives until Close.
//
// The connection gets its own context, canceled only by Close or a
// failure, not by the deadlines: the legacy SSE transport ties its event
// stream to the context given to Connect, so a deadline there would cut a
// healthy session later. The deadlines instead cancel the handshake's
// context, and cut the connection only while it is being opened.
func (c *Conn) connect(ctx context.Context, tr mcp.Transport, o *StartOptions) (*mcp.ClientSession, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel

	hctx, hcancel := context.WithCancelCause(ctx)
	defer hcancel(nil)
	startErr := fmt.Errorf("%w: not connected after %v", ErrTimeout, o.StartTimeout)
	timer := time.AfterFunc(o.StartTimeout, func() { hcancel(startErr) })
	lt := &lifetimeTransport{inner: tr, life: life, cancelLife: cancel, connected: func() {
		// Same goroutine as client.Connect: switching timers is race-free.
		if timer.Stop() {
			hsErr := fmt.Errorf("%w: no MCP handshake after %v", ErrTimeout, o.HandshakeTimeout)
			timer = time.AfterFunc(o.HandshakeTimeout, func() { hcancel(hsErr) })
		}
	}}
	session, err := o.Client.Connect(hctx, lt, nil)
	timer.Stop()
	if err != nil {
		if cause := context.Cause(hctx); cause != nil && !errors.Is(err, cause) {
			// Report the deadline, not the "context canceled" it caused.
			err = fmt.Errorf("%w (%v)", cause, err)
		}
		return nil, err
	}
	return session, nil
}

// lifetimeTransport opens inner with the connection's lifetime context
// instead of the handshake's (see connect).
type lifetimeTransport struct {
	inner      mcp.Transport
	life       context.Context
	cancelLife context.CancelFunc
	connected  func()
}

// Connect implements mcp.Transport.
func (t *lifetimeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	// While opening, the handshake's deadline must still abort it.
	stop := context.AfterFunc(ctx, t.cancelLife)
	conn, err := t.inner.Connect(t.life)
	if !stop() && err == nil {
		conn.Close()
		return nil, context.Cause(ctx)
	}
	if err == nil {
		t.connected()
	}
	return conn, err
}
