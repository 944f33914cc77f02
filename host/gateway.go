package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SkillScheme is the URI scheme of skill files served by a Gateway:
// skill://PLUGIN/SKILL/PATH.
const SkillScheme = "skill"

// DefaultPageSize is how many items a Gateway puts in one page of a list.
const DefaultPageSize = 1000

// GatewayOptions configure a Gateway.
type GatewayOptions struct {
	// Name and Version identify the gateway to clients; default
	// "plugkit-gateway" and "1.0.0".
	Name, Version string
	// PageSize is the number of items per page of a list; default
	// DefaultPageSize.
	PageSize int
	// Ready, when not nil, holds every request that needs the host's
	// plugins (lists, calls, prompts, reads) until it is closed, so that
	// the gateway answers the MCP handshake while the plugins are still
	// being verified and loaded: start-up does not grow with the number
	// of plugins. Give the host its plugins (Host.Set), then close Ready;
	// that first Set is no news to clients, who have seen no list yet.
	Ready <-chan struct{}
}

// Gateway serves a Host as one MCP server, so that any MCP client gets
// every plugin through one entry:
//
//   - every tool of every server, under its ToolName;
//   - every skill as a prompt named by its canonical ID PLUGIN/SKILL,
//     whose message is the skill's instructions and the list of its files;
//   - every file of every skill as a resource skill://PLUGIN/SKILL/PATH;
//   - the servers' own prompts (named like tools) and resources and
//     resource templates (under ResourceURI).
//
// Connect the Host's OnChange to Notify so that clients hear of plugins
// installed, updated or removed (notifications/tools/list_changed and the
// prompts and resources equivalents).
type Gateway struct {
	h          *Host
	srv        *mcp.Server
	serverInfo json.RawMessage // the gateway's mcp.Implementation, for relayed results
	pageSize   int
	ready      <-chan struct{}
	inFlight   atomic.Int64 // requests being answered
}

// NewGateway returns the gateway of h.
func NewGateway(h *Host, opts GatewayOptions) *Gateway {
	if opts.Name == "" {
		opts.Name = "plugkit-gateway"
	}
	if opts.Version == "" {
		opts.Version = "1.0.0"
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	g := &Gateway{h: h, pageSize: opts.PageSize, ready: opts.Ready}
	if g.ready == nil {
		ready := make(chan struct{})
		close(ready)
		g.ready = ready
	}
	impl := &mcp.Implementation{Name: opts.Name, Version: opts.Version}
	g.serverInfo, _ = json.Marshal(impl) // two strings always marshal
	g.srv = mcp.NewServer(impl, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
		},
	})
	// The lists change with the plugins and start servers lazily, so the
	// gateway answers them itself rather than registering items with the
	// SDK, which would need every server started up front.
	g.srv.AddReceivingMiddleware(g.middleware)
	return g
}

// Server is the MCP server, to run on any transport (mcp.StdioTransport,
// mcp.NewStreamableHTTPHandler, ...).
func (g *Gateway) Server() *mcp.Server { return g.srv }

// drainPoll is how often Drain looks whether the requests in flight are
// done.
const drainPoll = 10 * time.Millisecond

// Drain waits until no call, list, prompt or read is being answered, or
// ctx ends: a server that stops (on a signal) drains before it closes its
// transport, so that the calls in flight get their answers.
func (g *Gateway) Drain(ctx context.Context) error {
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for g.inFlight.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// The sentinel items Notify adds and removes at once.
const (
	sentinelName = "plugkit-gateway-list-changed"
	sentinelURI  = "plugkit-gateway:list-changed"
)

// Notify tells every connected client that the lists c names changed.
func (g *Gateway) Notify(c Change) {
	// The SDK sends list_changed notifications (to sessions of every
	// protocol version, debounced) when items are added or removed, and
	// offers no other way to send them: a sentinel added and removed at
	// once is that change. The middleware answers every list and call, so
	// clients never see it.
	if c.Tools {
		g.srv.AddTool(&mcp.Tool{Name: sentinelName, InputSchema: json.RawMessage(`{"type":"object"}`)}, nil)
		g.srv.RemoveTools(sentinelName)
	}
	if c.Prompts {
		g.srv.AddPrompt(&mcp.Prompt{Name: sentinelName}, nil)
		g.srv.RemovePrompts(sentinelName)
	}
	if c.Resources {
		g.srv.AddResource(&mcp.Resource{Name: sentinelName, URI: sentinelURI}, nil)
		g.srv.RemoveResources(sentinelURI)
	}
}

// middleware answers the methods whose answers come from the host.
func (g *Gateway) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch req.(type) {
		case *mcp.ListToolsRequest, *mcp.CallToolRequest, *mcp.ListPromptsRequest, *mcp.GetPromptRequest,
			*mcp.ListResourcesRequest, *mcp.ListResourceTemplatesRequest, *mcp.ReadResourceRequest:
			// What Drain waits for: the requests that end with an answer
			// (not those a client keeps open to listen).
			g.inFlight.Add(1)
			defer g.inFlight.Add(-1)
			select {
			case <-g.ready:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			return g.listTools(ctx, next, method, r)
		case *mcp.CallToolRequest:
			return g.callTool(ctx, r)
		case *mcp.ListPromptsRequest:
			return g.listPrompts(ctx, next, method, r)
		case *mcp.GetPromptRequest:
			return g.getPrompt(ctx, r)
		case *mcp.ListResourcesRequest:
			return g.listResources(ctx, next, method, r)
		case *mcp.ListResourceTemplatesRequest:
			return g.listTemplates(ctx, next, method, r)
		case *mcp.ReadResourceRequest:
			return g.readResource(ctx, r)
		}
		return next(ctx, method, req)
	}
}

// page cuts one page out of items at the opaque cursor, and returns the
// cursor of the next page ("" for the last).
func page[T any](items []T, cursor string, size int) ([]T, string, error) {
	start := 0
	if cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(cursor, "o"))
		if err != nil || !strings.HasPrefix(cursor, "o") || n < 0 || n > len(items) {
			return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
		}
		start = n
	}
	end := min(start+size, len(items))
	next := ""
	if end < len(items) {
		next = "o" + strconv.Itoa(end)
	}
	return items[start:end], next, nil
}

// answerList answers one page of a list: the SDK builds the (empty)
// result, so that its fields are filled as for any list, and the page of
// items goes in. cursor points at the request's cursor, nil when the
// request has no params; the cursor is the gateway's, so the SDK gets
// none.
func answerList[T any, R mcp.Result](ctx context.Context, g *Gateway, next mcp.MethodHandler, method string, req mcp.Request,
	cursor *string, items []T, fill func(R, []T, string)) (mcp.Result, error) {
	at := ""
	if cursor != nil {
		at, *cursor = *cursor, ""
	}
	items, nextCursor, err := page(items, at, g.pageSize)
	if err != nil {
		return nil, err
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, err
	}
	fill(res.(R), items, nextCursor)
	return res, nil
}

func (g *Gateway) listTools(ctx context.Context, next mcp.MethodHandler, method string, r *mcp.ListToolsRequest) (mcp.Result, error) {
	tools, err := g.h.Tools(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*mcp.Tool, len(tools))
	for i, t := range tools {
		def := *t.Def
		def.Name, def.Meta = t.Name, origin(def.Meta, t.ServerID, t.Def.Name)
		out[i] = &def
	}
	var cursor *string
	if r.Params != nil {
		cursor = &r.Params.Cursor
	}
	return answerList(ctx, g, next, method, r, cursor, out, func(res *mcp.ListToolsResult, items []*mcp.Tool, next string) {
		res.Tools, res.NextCursor = items, next
	})
}

// The _meta keys that tell which server an item the gateway renamed
// comes from, and its name there.
const (
	MetaServer = "plugkit/server" // the server's ID, PLUGIN/SERVER
	MetaName   = "plugkit/name"   // the item's name on that server
)

// origin is the _meta of a tool or prompt the gateway renamed: the
// server's own _meta, plus where the item comes from, so that every
// client can see the mapping.
func origin(meta mcp.Meta, serverID, name string) mcp.Meta {
	out := make(mcp.Meta, len(meta)+2)
	maps.Copy(out, meta)
	out[MetaServer], out[MetaName] = serverID, name
	return out
}

func (g *Gateway) callTool(ctx context.Context, r *mcp.CallToolRequest) (mcp.Result, error) {
	var args any
	if len(r.Params.Arguments) > 0 {
		args = r.Params.Arguments
	}
	res, err := g.h.CallTool(ctx, r.Params.Name, args)
	if err != nil {
		failed, rpcErr := toolFailure(r.Params.Name, err)
		if rpcErr != nil {
			return nil, rpcErr
		}
		return failed, nil
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return res, nil
}

// toolFailure is the gateway's answer to a call of the tool name that
// failed with err: a protocol error for a tool it does not have, else a
// result with IsError set.
func toolFailure(name string, err error) (*mcp.CallToolResult, *jsonrpc.Error) {
	if errors.Is(err, ErrNotFound) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
	}
	// A server that is down or too slow is the tool failing, which the
	// model should see, not a protocol error.
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
}

func (g *Gateway) listPrompts(ctx context.Context, next mcp.MethodHandler, method string, r *mcp.ListPromptsRequest) (mcp.Result, error) {
	var out []*mcp.Prompt
	for _, s := range g.h.Skills() {
		out = append(out, &mcp.Prompt{Name: s.ID, Title: s.ID, Description: s.Description})
	}
	prompts, err := g.h.Prompts(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range prompts {
		def := *p.Def
		def.Name, def.Meta = p.Name, origin(def.Meta, p.ServerID, p.Def.Name)
		out = append(out, &def)
	}
	var cursor *string
	if r.Params != nil {
		cursor = &r.Params.Cursor
	}
	return answerList(ctx, g, next, method, r, cursor, out, func(res *mcp.ListPromptsResult, items []*mcp.Prompt, next string) {
		res.Prompts, res.NextCursor = items, next
	})
}

func (g *Gateway) getPrompt(ctx context.Context, r *mcp.GetPromptRequest) (mcp.Result, error) {
	name := r.Params.Name
	if !strings.Contains(name, "/") {
		res, err := g.h.GetPrompt(ctx, name, r.Params.Arguments)
		if errors.Is(err, ErrNotFound) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
		}
		return res, err
	}
	s, err := g.h.Skill(name)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
	}
	var b strings.Builder
	b.WriteString(s.Body)
	b.WriteString("\n\n---\nThe files of skill " + s.ID + " can be read as MCP resources:\n")
	for _, f := range s.Files {
		b.WriteString("- " + SkillURI(s.ID, f) + "\n")
	}
	return &mcp.GetPromptResult{Description: s.Description, Messages: []*mcp.PromptMessage{
		{Role: "user", Content: &mcp.TextContent{Text: b.String()}},
	}}, nil
}

func (g *Gateway) listResources(ctx context.Context, next mcp.MethodHandler, method string, r *mcp.ListResourcesRequest) (mcp.Result, error) {
	var out []*mcp.Resource
	for _, info := range g.h.Skills() {
		s, err := g.h.Skill(info.ID)
		if err != nil {
			continue // removed meanwhile
		}
		for _, f := range s.Files {
			b, err := g.h.ReadResource(s.ID, f)
			if err != nil {
				continue
			}
			out = append(out, &mcp.Resource{URI: SkillURI(s.ID, f), Name: s.ID + "/" + f,
				MIMEType: mimeType(f, b), Size: int64(len(b))})
		}
	}
	resources, err := g.h.Resources(ctx)
	if err != nil {
		return nil, err
	}
	for _, res := range resources {
		def := *res.Def
		def.URI = res.URI
		out = append(out, &def)
	}
	var cursor *string
	if r.Params != nil {
		cursor = &r.Params.Cursor
	}
	return answerList(ctx, g, next, method, r, cursor, out, func(res *mcp.ListResourcesResult, items []*mcp.Resource, next string) {
		res.Resources, res.NextCursor = items, next
	})
}

func (g *Gateway) listTemplates(ctx context.Context, next mcp.MethodHandler, method string, r *mcp.ListResourceTemplatesRequest) (mcp.Result, error) {
	templates, err := g.h.ResourceTemplates(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*mcp.ResourceTemplate, len(templates))
	for i, t := range templates {
		def := *t.Def
		def.URITemplate = t.URITemplate
		out[i] = &def
	}
	var cursor *string
	if r.Params != nil {
		cursor = &r.Params.Cursor
	}
	return answerList(ctx, g, next, method, r, cursor, out, func(res *mcp.ListResourceTemplatesResult, items []*mcp.ResourceTemplate, next string) {
		res.ResourceTemplates, res.NextCursor = items, next
	})
}

func (g *Gateway) readResource(ctx context.Context, r *mcp.ReadResourceRequest) (mcp.Result, error) {
	uri := r.Params.URI
	if !strings.HasPrefix(uri, SkillScheme+"://") {
		res, err := g.h.ReadServerResource(ctx, uri)
		if errors.Is(err, ErrNotFound) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return res, err
	}
	id, file, err := ParseSkillURI(uri)
	var b []byte
	if err == nil {
		b, err = g.h.ReadResource(id, file)
	}
	switch {
	case errors.Is(err, ErrEscape):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "refused: " + err.Error()}
	case err != nil:
		return nil, mcp.ResourceNotFoundError(uri)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeType(file, b)}
	if utf8.Valid(b) {
		c.Text = string(b)
	} else {
		c.Blob = b
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// SkillURI is the URI of file (skill-relative) of the skill with canonical
// ID id: skill://PLUGIN/SKILL/PATH, each segment percent-encoded as a URI
// path needs.
func SkillURI(id, file string) string {
	plugin, name, _ := strings.Cut(id, "/")
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return SkillScheme + "://" + url.PathEscape(plugin) + "/" + url.PathEscape(name) + "/" + strings.Join(segs, "/")
}

// ParseSkillURI splits a skill:// URI into the skill's canonical ID and
// the file's skill-relative path, decoded. It does not judge the path:
// Host.ReadResource refuses those that leave the skill.
func ParseSkillURI(uri string) (id, file string, err error) {
	rest, ok := strings.CutPrefix(uri, SkillScheme+"://")
	plugin, rest, ok2 := strings.Cut(rest, "/")
	name, file, ok3 := strings.Cut(rest, "/")
	if !ok || !ok2 || !ok3 {
		return "", "", fmt.Errorf("%w: %q is not skill://PLUGIN/SKILL/PATH", ErrNotFound, uri)
	}
	var perr error
	unescape := func(s string) string {
		u, err := url.PathUnescape(s)
		if err != nil {
			perr = err
		}
		return u
	}
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = unescape(s)
	}
	id = unescape(plugin) + "/" + unescape(name)
	if perr != nil {
		return "", "", fmt.Errorf("%w: %q: %v", ErrNotFound, uri, perr)
	}
	return id, strings.Join(segs, "/"), nil
}

// mimeType guesses a skill file's type from its extension, Markdown and
// plain text for what is not known.
func mimeType(file string, b []byte) string {
	switch ext := path.Ext(file); ext {
	case ".md":
		return "text/markdown"
	case "":
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
	}
	if utf8.Valid(b) {
		return "text/plain"
	}
	return "application/octet-stream"
}
