package host

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/internal/jsonl"
	"github.com/plugkit/plugkit/mcprun"
)

// IOTransport is the gateway's transport over a pair of streams, such as
// stdin and stdout: mcp.IOTransport over r and w, except that a tool call
// is relayed to its server as JSON, without the SDK decoding it, running
// it through the middleware and encoding the answer, and without its
// client session to the server doing the same again (see
// mcprun.Conn.Call). Everything else (initialization, lists, prompts,
// resources, pings, notifications, batches) is the SDK's, and so is every
// tool call the relay is not sure to answer as the SDK would: before the
// session is initialized, with a sessionless client's _meta the SDK has
// not accepted yet, or with an ID the relay is answering already.
//
// Relayed calls count for Drain like any other; a call the client
// cancels (notifications/cancelled), or that is in flight when r ends, is
// cancelled on its server and gets no answer.
func (g *Gateway) IOTransport(r io.ReadCloser, w io.WriteCloser) mcp.Transport {
	rl := &relay{g: g, out: jsonl.NewWriter(w), calls: map[string]context.CancelFunc{},
		probes: map[string]string{}, accepted: map[string]bool{}}
	rl.in = jsonl.NewFilter(r, mcp.DefaultMaxLineLength, rl.take)
	return &mcp.IOTransport{Reader: relayInput{rl, r}, Writer: rl}
}

// Bounds of what a relay remembers of a sessionless client's _meta: the
// SDK's clients send the same _meta with every request, so a few
// suffice, and a client that varies it gets the SDK's path.
const (
	maxProbes   = 16
	maxAccepted = 16
)

// relay takes tool calls out of a client's stream (see IOTransport).
type relay struct {
	g   *Gateway
	in  *jsonl.Filter
	out *jsonl.Writer // shared by the SDK's messages and the relay's answers

	mu          sync.Mutex
	initialized bool                          // the client sent notifications/initialized
	ended       bool                          // the input ended: relay no more
	calls       map[string]context.CancelFunc // relayed calls in flight, by the client's ID
	probes      map[string]string             // sessionless calls left to the SDK: ID → _meta
	accepted    map[string]bool               // sessionless _meta the SDK answered a call with
}

// relayInput is the client's stream as the SDK reads it.
type relayInput struct {
	rl *relay
	r  io.Closer
}

// Read implements io.Reader. At the end of the input the relayed calls
// in flight are cancelled, as the SDK cancels its own.
func (in relayInput) Read(p []byte) (int, error) {
	n, err := in.rl.in.Read(p)
	if err != nil {
		in.rl.end()
	}
	return n, err
}

// Close closes the client's stream.
func (in relayInput) Close() error { return in.r.Close() }

// envelope is what the relay reads of a notification, or of the SDK's
// answers.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

// take takes a message out of the client's stream when the relay
// answers it.
func (rl *relay) take(line []byte) bool {
	switch {
	case bytes.Contains(line, []byte(`"tools/call"`)):
		return rl.call(line)
	case bytes.Contains(line, []byte(`"notifications/cancelled"`)):
		return rl.cancel(line)
	case bytes.Contains(line, []byte(`"notifications/initialized"`)):
		var msg envelope
		if json.Unmarshal(line, &msg) == nil && msg.Method == "notifications/initialized" && msg.ID == nil {
			rl.mu.Lock()
			rl.initialized = true
			rl.mu.Unlock()
		}
	}
	return false
}

// call starts relaying a tools/call request, unless the SDK is to
// answer it.
func (rl *relay) call(line []byte) bool {
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  *struct {
			Name      *string         `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || req.JSONRPC != "2.0" || req.Method != "tools/call" || !isID(req.ID) ||
		req.Params == nil || req.Params.Name == nil {
		return false
	}
	params := req.Params
	sessionless := isSessionless(params.Meta)
	id := string(req.ID)
	rl.mu.Lock()
	defer rl.mu.Unlock()
	switch {
	case rl.ended || rl.calls[id] != nil:
		return false
	case sessionless && !rl.accepted[string(params.Meta)]:
		// The SDK validates this _meta; once it has answered a call
		// carrying it, the relay takes the next ones.
		if len(rl.probes) < maxProbes {
			rl.probes[id] = string(params.Meta)
		}
		return false
	case !sessionless && !rl.initialized:
		return false // the SDK refuses it, as the protocol asks
	}
	ctx, cancel := context.WithCancel(context.Background())
	rl.calls[id] = cancel
	rl.g.inFlight.Add(1)
	go rl.serve(ctx, req.ID, *params.Name, params.Arguments, sessionless)
	return true
}

// isID reports whether a request's ID is one the relay answers with the
// same bytes the SDK would: a string, or an integer written plainly (the
// SDK writes 1e3 back as 1000).
func isID(id json.RawMessage) bool {
	if len(id) > 0 && id[0] == '"' {
		return true
	}
	// Up to 15 digits, which a float64 (the SDK's way in) holds exactly;
	// no leading zeros, no -0.
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) == 0 || len(digits) > 15 || digits[0] == '0' && (len(digits) > 1 || len(digits) < len(id)) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isSessionless reports whether a request's _meta makes it one of the
// sessionless protocol, as the SDK judges it.
func isSessionless(meta json.RawMessage) bool {
	// A version that is not a string fails to decode: the SDK takes the
	// request for one of a session then, too.
	var m struct {
		Version string `json:"io.modelcontextprotocol/protocolVersion"`
	}
	return meta != nil && json.Unmarshal(meta, &m) == nil && m.Version >= mcprun.SessionlessProtocol
}

// serve answers one relayed call.
func (rl *relay) serve(ctx context.Context, id json.RawMessage, name string, arguments json.RawMessage, sessionless bool) {
	defer rl.g.inFlight.Add(-1)
	defer rl.done(string(id))
	select {
	case <-rl.g.ready:
	case <-ctx.Done():
		return
	}
	var serverInfo json.RawMessage
	if sessionless {
		serverInfo = rl.g.serverInfo
	}
	res, err := rl.g.h.callToolJSON(ctx, name, arguments, serverInfo)
	if ctx.Err() != nil {
		return // cancelled: the client expects no answer
	}
	if err != nil {
		failed, rpcErr := toolFailure(name, err)
		if rpcErr != nil {
			rl.answer(id, "error", rpcErr)
			return
		}
		if res, err = marshalResult(failed, serverInfo); err != nil {
			rl.answer(id, "error", internalError(err))
			return
		}
	}
	rl.answer(id, "result", res)
}

// internalError is the JSON-RPC error for an answer the gateway could not
// make.
func internalError(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// answer writes the response to the client's request id, its result or
// error (key) being v.
func (rl *relay) answer(id json.RawMessage, key string, v any) {
	body, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return // a *jsonrpc.Error always marshals
		}
	}
	msg := make([]byte, 0, len(body)+len(id)+40)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, id...)
	msg = append(msg, `,"`...)
	msg = append(msg, key...)
	msg = append(msg, `":`...)
	msg = append(msg, body...)
	msg = append(msg, "}\n"...)
	rl.out.Write(msg) // a failed write ends the session, which the SDK sees
}

// done forgets a relayed call that ended.
func (rl *relay) done(id string) {
	rl.mu.Lock()
	cancel := rl.calls[id]
	delete(rl.calls, id)
	rl.mu.Unlock()
	cancel()
}

// cancel takes a client's notifications/cancelled for a relayed call and
// cancels it; one for another request is the SDK's.
func (rl *relay) cancel(line []byte) bool {
	var msg envelope
	var params struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != "notifications/cancelled" || msg.ID != nil ||
		json.Unmarshal(msg.Params, &params) != nil {
		return false
	}
	rl.mu.Lock()
	cancel := rl.calls[string(params.RequestID)]
	rl.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	return true
}

// end cancels every relayed call once the input has ended.
func (rl *relay) end() {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.ended = true
	for _, cancel := range rl.calls {
		cancel()
	}
}

// Write implements io.Writer for the SDK's messages to the client.
func (rl *relay) Write(p []byte) (int, error) {
	rl.learn(p)
	return rl.out.Write(p)
}

// Close closes the stream to the client.
func (rl *relay) Close() error { return rl.out.Close() }

// learn notes the SDK's answer to a sessionless call it was left: a
// result means the SDK accepted the call's _meta.
func (rl *relay) learn(p []byte) {
	rl.mu.Lock()
	n := len(rl.probes)
	rl.mu.Unlock()
	if n == 0 {
		return
	}
	var msg envelope
	if json.Unmarshal(p, &msg) != nil || msg.ID == nil {
		return
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	meta, ok := rl.probes[string(msg.ID)]
	if !ok {
		return
	}
	delete(rl.probes, string(msg.ID))
	if msg.Result != nil && len(rl.accepted) < maxAccepted {
		rl.accepted[meta] = true
	}
}
