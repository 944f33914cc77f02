package mcprun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/internal/jsonl"
)

// ErrNoRawCall is returned by Conn.Call for a server it cannot send raw
// requests to (a remote server, or one whose session needs what only
// the SDK knows): make the request through Conn.Session instead.
var ErrNoRawCall = errors.New("mcprun: no raw calls to this server")

// rawIDPrefix starts the ID of every request Call sends. The SDK numbers
// its own requests, so a string ID never meets one of them.
const rawIDPrefix = "plugkit-"

// rawPipe is a stdio server's stdin and stdout as the SDK session sees
// them, shared with Call: it writes whole messages to stdin between the
// SDK's, and takes the answers to its own requests out of stdout before
// the SDK reads it.
type rawPipe struct {
	in  *jsonl.Filter
	out *jsonl.Writer

	mu      sync.Mutex
	next    uint64
	pending map[string]chan rawAnswer // by request ID
	err     error                     // why stdout ended; later calls fail with it
	meta    json.RawMessage           // the _meta the SDK sends with server/discover
}

// rawAnswer is the answer to one request of Call.
type rawAnswer struct {
	result json.RawMessage
	err    error
}

func newRawPipe(stdout io.Reader, stdin io.WriteCloser) *rawPipe {
	p := &rawPipe{out: jsonl.NewWriter(stdin), pending: map[string]chan rawAnswer{}}
	p.in = jsonl.NewFilter(stdout, mcp.DefaultMaxLineLength, p.take)
	return p
}

// Read is stdout for the SDK, less the answers to Call's requests.
func (p *rawPipe) Read(b []byte) (int, error) {
	n, err := p.in.Read(b)
	if err != nil {
		p.fail(err)
	}
	return n, err
}

// Write is stdin for the SDK. The SDK writes one message per Write.
func (p *rawPipe) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte(`"server/discover"`)) {
		p.learn(b)
	}
	return p.out.Write(b)
}

// Close closes the server's stdin (see stdioProcess.Connect).
func (p *rawPipe) Close() error { return p.out.Close() }

// learn keeps the _meta of the SDK's server/discover request. In the
// sessionless protocol every request carries the client's protocol
// version, identity and capabilities; Call sends what the SDK sent, as
// the SDK does not export how it builds them.
func (p *rawPipe) learn(b []byte) {
	var req struct {
		Method string `json:"method"`
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &req) == nil && req.Method == "server/discover" {
		p.mu.Lock()
		p.meta = req.Params.Meta
		p.mu.Unlock()
	}
}

// take takes the answer to a request of Call out of the server's stdout.
func (p *rawPipe) take(line []byte) bool {
	if !bytes.Contains(line, []byte(rawIDPrefix)) || !p.waiting() {
		return false
	}
	var msg struct {
		ID     *string         `json:"id"` // the SDK's numbers do not decode
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != "" || msg.ID == nil {
		return false
	}
	p.mu.Lock()
	ch, ok := p.pending[*msg.ID]
	delete(p.pending, *msg.ID)
	p.mu.Unlock()
	if !ok {
		return false // not ours, or ours and given up: the SDK drops it
	}
	switch {
	case msg.Error != nil:
		ch <- rawAnswer{err: msg.Error}
	case msg.Result == nil:
		ch <- rawAnswer{err: errors.New("answer without a result or an error")}
	default:
		ch <- rawAnswer{result: msg.Result}
	}
	return true
}

// waiting reports whether a call waits for its answer.
func (p *rawPipe) waiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending) > 0
}

// jsonString is s as a JSON string.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// fail ends every pending call once the server's stdout has ended.
func (p *rawPipe) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = fmt.Errorf("%w: the server's output ended: %v", mcp.ErrConnectionClosed, err)
	}
	for id, ch := range p.pending {
		ch <- rawAnswer{err: p.err}
		delete(p.pending, id)
	}
}

// call sends one request and waits for its answer. newProtocol says
// that the session uses the sessionless protocol, whose requests carry
// the client's _meta; params must then be an object without one.
func (p *rawPipe) call(ctx context.Context, method string, params json.RawMessage, newProtocol bool) (json.RawMessage, error) {
	ch := make(chan rawAnswer, 1)
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return nil, p.err
	}
	meta := p.meta
	if newProtocol && meta == nil {
		p.mu.Unlock()
		return nil, ErrNoRawCall
	}
	p.next++
	id := rawIDPrefix + strconv.FormatUint(p.next, 10)
	p.pending[id] = ch
	p.mu.Unlock()

	msg := make([]byte, 0, 64+len(method)+len(params)+len(meta))
	msg = append(msg, `{"jsonrpc":"2.0","id":"`...)
	msg = append(msg, id...)
	msg = append(msg, `","method":`...)
	msg = append(msg, jsonString(method)...)
	msg = append(msg, `,"params":`...)
	if newProtocol {
		msg = append(msg, `{"_meta":`...)
		msg = append(msg, meta...)
		if rest := bytes.TrimLeft(params[1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
			msg = append(msg, ',')
		}
		msg = append(msg, params[1:]...)
	} else {
		msg = append(msg, params...)
	}
	msg = append(msg, "}\n"...)
	if _, err := p.out.Write(msg); err != nil {
		p.forget(id)
		return nil, fmt.Errorf("%w: %v", mcp.ErrConnectionClosed, err)
	}
	select {
	case a := <-ch:
		return a.result, a.err
	case <-ctx.Done():
		p.forget(id)
		// As the SDK does: the server hears that the request is
		// cancelled, without the caller waiting for that to be written.
		go p.out.Write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":%s}}`+"\n",
			jsonString(id), jsonString(ctx.Err().Error())))
		return nil, ctx.Err()
	}
}

// forget drops a request whose answer nobody waits for.
func (p *rawPipe) forget(id string) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// Call sends one JSON-RPC request to a ready stdio server on its own
// pipe, beside the SDK session, and returns the result as the server
// wrote it: neither params nor the result are decoded into SDK types or
// validated. params is a JSON object without "_meta" (a sessionless
// session gets the client's _meta, as the SDK sends it). An error answer
// is a *jsonrpc.Error; ctx ending cancels the request on the server
// (notifications/cancelled) and returns ctx.Err(). Call returns
// ErrNoRawCall for a remote server; a server that is not ready, or whose
// output ends, fails the call with mcp.ErrConnectionClosed.
func (c *Conn) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if c.proc == nil || c.proc.pipe == nil {
		return nil, ErrNoRawCall
	}
	if len(params) == 0 || params[0] != '{' {
		return nil, errors.New("mcprun: Call needs params that are a JSON object")
	}
	sess := c.Session()
	if sess == nil {
		return nil, fmt.Errorf("%w: server %s is not ready", mcp.ErrConnectionClosed, c.status.ID)
	}
	newProtocol := false
	if res := sess.InitializeResult(); res != nil {
		newProtocol = res.ProtocolVersion >= SessionlessProtocol
	}
	return c.proc.pipe.call(ctx, method, params, newProtocol)
}

// SessionlessProtocol is the first MCP protocol version whose requests
// each carry the client's protocol version, identity and capabilities in
// _meta, instead of relying on a session that initialize opened.
const SessionlessProtocol = "2026-07-28"
