package host

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/mcprun"
)

// Tool is a tool of one of the host's servers.
type Tool struct {
	// Name is the tool's name in the host: ToolName(Plugin, server, tool).
	Name     string
	Plugin   string
	ServerID string // PLUGIN/SERVER
	// Def is the tool as the server declared it; Def.Name is the server's
	// own name for it.
	Def *mcp.Tool
}

// Prompt is a prompt of one of the host's servers, named like a tool.
type Prompt struct {
	Name     string // ToolName(Plugin, server, Def.Name)
	Plugin   string
	ServerID string
	Def      *mcp.Prompt
}

// Resource is a resource of one of the host's servers.
type Resource struct {
	URI      string // ResourceURI(Plugin, server, Def.URI)
	Plugin   string
	ServerID string
	Def      *mcp.Resource
}

// ResourceTemplate is a resource template of one of the host's servers.
type ResourceTemplate struct {
	URITemplate string // ResourceURI(Plugin, server, Def.URITemplate)
	Plugin      string
	ServerID    string
	Def         *mcp.ResourceTemplate
}

// ServerTools lists the tools of one server, starting it if needed.
func (h *Host) ServerTools(ctx context.Context, id string) ([]Tool, error) {
	s, err := h.server(id)
	if err != nil {
		return nil, err
	}
	tools, err := s.tools(ctx)
	return slices.Clone(tools), err
}

// The lists of one server, each item named for the host. The slices are
// the server's cache: read them, never modify them.

func (s *server) tools(ctx context.Context) ([]Tool, error) {
	return cachedList(ctx, s, kindTools, toolsOffered, toolsPage, func(d *mcp.Tool) Tool {
		return Tool{Name: ToolName(s.plugin.Package.Name, s.def.Name, d.Name), Plugin: s.plugin.Package.Name, ServerID: s.def.ID, Def: d}
	})
}

func (s *server) prompts(ctx context.Context) ([]Prompt, error) {
	return cachedList(ctx, s, kindPrompts, promptsOffered, promptsPage, func(d *mcp.Prompt) Prompt {
		return Prompt{Name: ToolName(s.plugin.Package.Name, s.def.Name, d.Name), Plugin: s.plugin.Package.Name, ServerID: s.def.ID, Def: d}
	})
}

func (s *server) resources(ctx context.Context) ([]Resource, error) {
	return cachedList(ctx, s, kindResources, resourcesOffered, resourcesPage, func(d *mcp.Resource) Resource {
		return Resource{URI: ResourceURI(s.plugin.Package.Name, s.def.Name, d.URI), Plugin: s.plugin.Package.Name, ServerID: s.def.ID, Def: d}
	})
}

func (s *server) templates(ctx context.Context) ([]ResourceTemplate, error) {
	return cachedList(ctx, s, kindTemplates, resourcesOffered, templatesPage, func(d *mcp.ResourceTemplate) ResourceTemplate {
		return ResourceTemplate{URITemplate: ResourceURI(s.plugin.Package.Name, s.def.Name, d.URITemplate),
			Plugin: s.plugin.Package.Name, ServerID: s.def.ID, Def: d}
	})
}

// Tools lists every tool of every server under its host name, sorted by
// name, starting the servers that are not running yet (concurrently).
// A server that is skipped, fails or cannot list contributes nothing and
// is logged (its state is in Servers); two tools that would share a name
// are both withheld. The error is for the caller's ctx or a closed host.
func (h *Host) Tools(ctx context.Context) ([]Tool, error) {
	all, err := collect(ctx, h, (*server).tools)
	return unique(h, all, func(t Tool) string { return t.Name }), err
}

// Prompts lists the prompts of every server, named like tools.
func (h *Host) Prompts(ctx context.Context) ([]Prompt, error) {
	all, err := collect(ctx, h, (*server).prompts)
	return unique(h, all, func(p Prompt) string { return p.Name }), err
}

// Resources lists the resources of every server under their host URIs.
func (h *Host) Resources(ctx context.Context) ([]Resource, error) {
	all, err := collect(ctx, h, (*server).resources)
	return unique(h, all, func(r Resource) string { return r.URI }), err
}

// ResourceTemplates lists the resource templates of every server under
// their host URI templates.
func (h *Host) ResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	all, err := collect(ctx, h, (*server).templates)
	return unique(h, all, func(r ResourceTemplate) string { return r.URITemplate }), err
}

// collect gathers one list from every server that is not skipped.
func collect[T any](ctx context.Context, h *Host, list func(*server, context.Context) ([]T, error)) ([]T, error) {
	if err := h.open(); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var all []T
	eachServer(h.servers(), func(s *server) {
		items, err := list(s, ctx)
		if err != nil {
			if ctx.Err() == nil && !s.skipped() {
				h.opts.Logger.Warn("server not listed", "server", s.def.ID, "reason", err.Error())
			}
			return
		}
		mu.Lock()
		all = append(all, items...)
		mu.Unlock()
	})
	return all, ctx.Err()
}

// unique sorts items by key and withholds every key that two items share.
func unique[T any](h *Host, items []T, key func(T) string) []T {
	slices.SortStableFunc(items, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	out := items[:0]
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && key(items[j]) == key(items[i]) {
			j++
		}
		if j-i == 1 {
			out = append(out, items[i])
		} else {
			h.opts.Logger.Error("name withheld: several servers' items map to it", "name", key(items[i]))
		}
		i = j
	}
	return out
}

// skipped reports whether the server was skipped, which is reported once
// where it happened and not again at every list.
func (s *server) skipped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Status == mcprun.StatusSkipped
}

// open reports ErrClosed after Close.
func (h *Host) open() error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return ErrClosed
	}
	return nil
}

// find returns the one server item named name. A name ToolName made
// without a hash spells its plugin and server: only that server's list is
// searched. Another is searched for in the lists cached already, and only
// when it is not found there by listing every server.
func find[T any](ctx context.Context, h *Host, name string, k kind, list func(*server, context.Context) ([]T, error), key func(T) string) (*server, T, error) {
	var zero T
	notFound := func() error { return fmt.Errorf("%w: no tool or prompt named %q", ErrNotFound, name) }
	if err := h.open(); err != nil {
		return nil, zero, err
	}
	if p, sv, plain := splitPlainName(name); plain {
		s := h.serverNamed(p, sv)
		if s == nil {
			return nil, zero, notFound()
		}
		items, err := list(s, ctx)
		if err != nil {
			return nil, zero, err // that server is down: say why
		}
		// Plain names are distinct by construction: the first is the one.
		for _, it := range items {
			if key(it) == name {
				return s, it, nil
			}
		}
		return nil, zero, notFound()
	}
	var mu sync.Mutex
	var found *server
	var item T
	n := 0
	match := func(s *server) {
		items, err := list(s, ctx)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, it := range items {
			if key(it) == name {
				found, item, n = s, it, n+1
			}
		}
	}
	all := h.servers()
	// Lists already cached cost no request: look there first, and list
	// every server only for a name not found there.
	for _, s := range all {
		if s.cached(k) {
			match(s)
		}
	}
	if n == 0 {
		eachServer(all, match)
	}
	switch {
	case ctx.Err() != nil:
		return nil, zero, ctx.Err()
	case n == 0:
		return nil, zero, notFound()
	case n > 1:
		return nil, zero, fmt.Errorf("%w: %q is withheld: several servers' items map to it", ErrNotFound, name)
	}
	return found, item, nil
}

// cached reports whether the server is ready with its list k cached, so
// that searching it costs no request.
func (s *server) cached(k kind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists[k].conn != nil && s.lists[k].conn == s.conn
}

// CallTool calls the tool named name (its host name) with arguments
// (anything that marshals to a JSON object; nil sends none) under
// CallTimeout. Resource URIs in the result are rewritten to the host's.
// A tool that reports a failure is a result with IsError set, not an
// error; the error is for a tool not found, a server unavailable (see
// ErrUnavailable) or a request that failed or timed out.
func (h *Host) CallTool(ctx context.Context, name string, arguments any) (*mcp.CallToolResult, error) {
	s, t, err := find(ctx, h, name, kindTools, (*server).tools, func(t Tool) string { return t.Name })
	if err != nil {
		return nil, err
	}
	return s.call(ctx, t.Def.Name, arguments)
}

// CallServerTool calls the tool a server names tool, on the server with
// the given ID, without listing its tools first; otherwise as CallTool.
func (h *Host) CallServerTool(ctx context.Context, serverID, tool string, arguments any) (*mcp.CallToolResult, error) {
	s, err := h.server(serverID)
	if err != nil {
		return nil, err
	}
	return s.call(ctx, tool, arguments)
}

// callToolJSON calls the tool named name (its host name) as CallTool
// does, with arguments as a client sent them (a JSON value; nil for
// none), and returns the result as JSON. A stdio server's result is
// relayed as the server wrote it (mcprun.Conn.Call), neither decoded nor
// encoded again, unless it needs what CallTool does to results: resource
// URIs rewritten, a missing content list given, an unknown content type
// refused, a request for input answered by the SDK. serverInfo, when not
// nil, goes into the result's _meta unless the server named itself there,
// which is what the SDK does for a sessionless client.
func (h *Host) callToolJSON(ctx context.Context, name string, arguments, serverInfo json.RawMessage) (json.RawMessage, error) {
	s, t, err := find(ctx, h, name, kindTools, (*server).tools, func(t Tool) string { return t.Name })
	if err != nil {
		return nil, err
	}
	_, conn, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	if len(arguments) == 0 || string(arguments) == "null" {
		arguments = json.RawMessage("{}")
	}
	toolName, err := json.Marshal(t.Def.Name)
	if err != nil {
		return nil, err
	}
	params := slices.Concat([]byte(`{"name":`), toolName, []byte(`,"arguments":`), arguments, []byte(`}`))
	var raw json.RawMessage
	err = withTimeout(ctx, s.h.opts.CallTimeout, "tools/call", func(ctx context.Context) (err error) {
		raw, err = conn.Call(ctx, "tools/call", params)
		return err
	})
	if errors.Is(err, mcprun.ErrNoRawCall) {
		return s.callJSON(ctx, t.Def.Name, arguments, serverInfo)
	}
	if err != nil {
		return nil, fmt.Errorf("server %s: tool %s: %w", s.def.ID, t.Def.Name, err)
	}
	var scan struct {
		Content []struct {
			Type string `json:"type"`
		} `json:"content"`
		ResultType string          `json:"resultType"`
		Meta       json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &scan); err != nil {
		return nil, fmt.Errorf("server %s: tool %s: result: %w", s.def.ID, t.Def.Name, err)
	}
	if scan.ResultType != "" && scan.ResultType != "complete" {
		// The server asks for input first: the SDK's client answers that
		// (see mcp.MultiRoundTripOptions) and calls again.
		return s.callJSON(ctx, t.Def.Name, arguments, serverInfo)
	}
	plain := scan.Content != nil
	for _, c := range scan.Content {
		plain = plain && (c.Type == "text" || c.Type == "image" || c.Type == "audio")
	}
	switch {
	case plain && (serverInfo == nil || namesServer(scan.Meta)):
		return raw, nil
	case plain && scan.Meta == nil:
		// No _meta at all: the gateway's goes first, the rest as it was.
		out := slices.Concat([]byte(`{"_meta":{"`+mcp.MetaKeyServerInfo+`":`), serverInfo, []byte(`}`))
		if rest := bytes.TrimSpace(raw[1:]); len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, raw[1:]...), nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("server %s: tool %s: result: %w", s.def.ID, t.Def.Name, err)
	}
	s.rewrite(res.Content)
	return marshalResult(&res, serverInfo)
}

// namesServer reports whether a result's _meta names the server that
// made it.
func namesServer(meta json.RawMessage) bool {
	var m struct {
		ServerInfo json.RawMessage `json:"io.modelcontextprotocol/serverInfo"`
	}
	return json.Unmarshal(meta, &m) == nil && m.ServerInfo != nil
}

// callJSON is call with the result as JSON (see callToolJSON).
func (s *server) callJSON(ctx context.Context, tool string, arguments, serverInfo json.RawMessage) (json.RawMessage, error) {
	res, err := s.call(ctx, tool, arguments)
	if err != nil {
		return nil, err
	}
	return marshalResult(res, serverInfo)
}

// marshalResult encodes a tool's result, with an empty content list
// rather than none, which the protocol requires, and serverInfo (when
// not nil) in _meta unless the result names its server already.
func marshalResult(res *mcp.CallToolResult, serverInfo json.RawMessage) (json.RawMessage, error) {
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	if _, named := res.Meta[mcp.MetaKeyServerInfo]; serverInfo != nil && !named {
		if res.Meta == nil {
			res.Meta = mcp.Meta{}
		}
		res.Meta[mcp.MetaKeyServerInfo] = serverInfo
	}
	return json.Marshal(res)
}

func (s *server) call(ctx context.Context, tool string, arguments any) (*mcp.CallToolResult, error) {
	sess, _, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	var res *mcp.CallToolResult
	err = withTimeout(ctx, s.h.opts.CallTimeout, "tools/call", func(ctx context.Context) (err error) {
		res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("server %s: tool %s: %w", s.def.ID, tool, err)
	}
	s.rewrite(res.Content)
	return res, nil
}

// GetPrompt gets the forwarded prompt named name (see Prompts).
func (h *Host) GetPrompt(ctx context.Context, name string, arguments map[string]string) (*mcp.GetPromptResult, error) {
	s, p, err := find(ctx, h, name, kindPrompts, (*server).prompts, func(p Prompt) string { return p.Name })
	if err != nil {
		return nil, err
	}
	sess, _, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	var res *mcp.GetPromptResult
	err = withTimeout(ctx, h.opts.CallTimeout, "prompts/get", func(ctx context.Context) (err error) {
		res, err = sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Def.Name, Arguments: arguments})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("server %s: prompt %s: %w", s.def.ID, p.Def.Name, err)
	}
	for _, m := range res.Messages {
		s.rewrite([]mcp.Content{m.Content})
	}
	return res, nil
}

// ReadServerResource reads a forwarded resource by its host URI (see
// ResourceURI), from a listed resource or any expansion of a template.
func (h *Host) ReadServerResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	plugin, name, original, err := ParseResourceURI(uri)
	if err != nil {
		return nil, err
	}
	s, err := h.server(plugin + "/" + name)
	if err != nil {
		return nil, err
	}
	sess, _, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	var res *mcp.ReadResourceResult
	err = withTimeout(ctx, h.opts.CallTimeout, "resources/read", func(ctx context.Context) (err error) {
		res, err = sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: original})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("server %s: resource %s: %w", s.def.ID, original, err)
	}
	for _, c := range res.Contents {
		if c != nil {
			c.URI = ResourceURI(plugin, name, c.URI)
		}
	}
	return res, nil
}

// rewrite gives the resource URIs inside content (links and embedded
// resources) the host's names, so that a client can read them through the
// host.
func (s *server) rewrite(content []mcp.Content) {
	for _, c := range content {
		switch c := c.(type) {
		case *mcp.ResourceLink:
			c.URI = s.resourceURI(c.URI)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				c.Resource.URI = s.resourceURI(c.Resource.URI)
			}
		}
	}
}

func (s *server) resourceURI(uri string) string {
	if uri == "" {
		return uri
	}
	return ResourceURI(s.plugin.Package.Name, s.def.Name, uri)
}
