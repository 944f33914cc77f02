package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/mcprun"
)

// kind is one of the lists a server offers.
type kind int

const (
	kindTools kind = iota
	kindPrompts
	kindResources
	kindTemplates
	kindCount
)

func (k kind) String() string {
	return [...]string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}[k]
}

// changeOf is the Change a new list of kind k makes.
func changeOf(k kind) Change {
	switch k {
	case kindTools:
		return Change{Tools: true}
	case kindPrompts:
		return Change{Prompts: true}
	}
	return Change{Resources: true}
}

// listCache is one list of one server, valid for the session it came from
// until the server says the list changed.
type listCache struct {
	fetch gate         // one fetch at a time; the others wait and reuse it
	gen   int          // bumped by invalidate, so a fetch in flight is not kept
	conn  *mcprun.Conn // the session the items came from; nil when invalid
	items any          // []T, named for the host; shared, never modified
}

// gate is a mutex that a waiter can give up on when its ctx ends; make it
// with one slot.
type gate chan struct{}

func (g gate) enter(ctx context.Context) error {
	select {
	case g <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g gate) leave() { <-g }

// invalidate forgets list k of the server.
func (s *server) invalidate(k kind) {
	s.mu.Lock()
	s.lists[k].gen++
	s.lists[k].conn = nil
	s.mu.Unlock()
}

// pageFunc asks a session for one page of a list.
type pageFunc[T any] func(ctx context.Context, sess *mcp.ClientSession, cursor string) ([]T, string, error)

// cachedList returns list k of server s, starting it if needed, from the
// cache when it is valid for the current session. The server's items D
// are named for the host by item once per fetch, not once per request;
// the slice returned is the cache's, which nobody may modify.
func cachedList[D, T any](ctx context.Context, s *server, k kind, offered func(*mcp.ServerCapabilities) bool, page pageFunc[D], item func(D) T) ([]T, error) {
	c := &s.lists[k]
	if err := c.fetch.enter(ctx); err != nil {
		return nil, err
	}
	defer c.fetch.leave()
	sess, conn, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if c.conn == conn {
		items := c.items.([]T)
		s.mu.Unlock()
		return items, nil
	}
	gen := c.gen
	s.mu.Unlock()

	var defs []D
	if caps := sess.InitializeResult().Capabilities; caps != nil && offered(caps) {
		defs, err = paginate(ctx, s.h.opts, k, func(ctx context.Context, cursor string) ([]D, string, error) {
			return page(ctx, sess, cursor)
		})
		if err != nil {
			return nil, fmt.Errorf("server %s: %w", s.def.ID, err)
		}
	}
	items := make([]T, len(defs))
	for i, d := range defs {
		items[i] = item(d)
	}
	s.mu.Lock()
	if c.gen == gen {
		c.conn, c.items = conn, items
	}
	s.mu.Unlock()
	return items, nil
}

// paginate follows a list's cursors, each page under CallTimeout, and
// stops at Limits.MaxPages pages or Limits.MaxItems items, or at a cursor
// the server gave before: a server that always has another page costs a
// bounded amount of time and memory.
func paginate[T any](ctx context.Context, o Options, k kind, page func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	var all []T
	cursor := ""
	seen := map[string]bool{}
	for n := 0; ; n++ {
		if n == o.Limits.MaxPages {
			return nil, fmt.Errorf("%w: %s: more than %d pages", ErrListLimit, k, o.Limits.MaxPages)
		}
		var items []T
		var next string
		err := withTimeout(ctx, o.CallTimeout, k.String(), func(ctx context.Context) (err error) {
			items, next, err = page(ctx, cursor)
			return err
		})
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if len(all) > o.Limits.MaxItems {
			return nil, fmt.Errorf("%w: %s: more than %d items", ErrListLimit, k, o.Limits.MaxItems)
		}
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%w: %s: the server repeated a cursor", ErrListLimit, k)
		}
		seen[next], cursor = true, next
	}
}

// withTimeout runs one request under timeout and names it when the
// timeout, not the caller, ended it.
func withTimeout(ctx context.Context, timeout time.Duration, what string, f func(context.Context) error) error {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := f(rctx)
	if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: no answer within %v", mcprun.ErrTimeout, what, timeout)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func toolsOffered(c *mcp.ServerCapabilities) bool     { return c.Tools != nil }
func promptsOffered(c *mcp.ServerCapabilities) bool   { return c.Prompts != nil }
func resourcesOffered(c *mcp.ServerCapabilities) bool { return c.Resources != nil }

func toolsPage(ctx context.Context, sess *mcp.ClientSession, cursor string) ([]*mcp.Tool, string, error) {
	r, err := sess.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	return r.Tools, r.NextCursor, nil
}

func promptsPage(ctx context.Context, sess *mcp.ClientSession, cursor string) ([]*mcp.Prompt, string, error) {
	r, err := sess.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	return r.Prompts, r.NextCursor, nil
}

func resourcesPage(ctx context.Context, sess *mcp.ClientSession, cursor string) ([]*mcp.Resource, string, error) {
	r, err := sess.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	return r.Resources, r.NextCursor, nil
}

func templatesPage(ctx context.Context, sess *mcp.ClientSession, cursor string) ([]*mcp.ResourceTemplate, string, error) {
	r, err := sess.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	return r.ResourceTemplates, r.NextCursor, nil
}
