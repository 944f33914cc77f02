// Command testserver is the MCP server mcprun's (and host's) tests launch
// as a real process. It reports what it was started with, so the tests can
// check the launch rules from the server's side:
//
//   - tool "info": argv, environment, working directory and pid;
//   - tool "write": writes a file in $PLUGIN_DATA and returns its path;
//   - tool "spawn": starts a long-sleeping child (this program with
//     TESTSERVER_SLEEP=1) and returns its pid. With {"setsid": true} the
//     child leaves the server's session and process group; with
//     {"orphan": true} an intermediate child starts a setsid grandchild and
//     exits, so the grandchild is orphaned at once (a daemon's double fork);
//   - tool "echo": returns the arguments object it received;
//   - tool "sleep": waits {"ms": N} milliseconds, or until cancelled;
//   - tool "fail": returns a tool error (isError) with the given text;
//   - prompt "greet" (argument "name"), resource "test://static" and the
//     resource template "test://echo/{value}".
//
// Environment switches: TESTSERVER_CRASH=MSG writes MSG to stderr and
// exits 3 before serving; TESTSERVER_DELAY=DURATION waits before serving,
// to stand in for a slow start-up; TESTSERVER_LIST=hang never answers
// tools/list (after a normal handshake) and TESTSERVER_LIST=endless always
// answers with another page; TESTSERVER_EXTRA_TOOLS=a,b adds tools with
// those names (any name, to test the gateway's naming);
// TESTSERVER_IGNORE_EOF=1 keeps running after its stdin closes;
// TESTSERVER_LINK=URI adds the tool "link", whose result links to URI and
// embeds a resource of that URI; TESTSERVER_PROTOCOL=VERSION speaks only
// that protocol version; TESTSERVER_LOG=FILE appends every message read
// and written to FILE.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type info struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Cwd  string   `json:"cwd"`
	PID  int      `json:"pid"`
}

type writeIn struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

type writeOut struct {
	Path string `json:"path"`
}

type spawnIn struct {
	Setsid bool `json:"setsid,omitempty"`
	Orphan bool `json:"orphan,omitempty"`
}

type spawnOut struct {
	PID int `json:"pid"`
}

type echoOut struct {
	Arguments map[string]any `json:"arguments"`
}

type sleepIn struct {
	MS int `json:"ms"`
}

type failIn struct {
	Text string `json:"text"`
}

func main() {
	switch {
	case os.Getenv("TESTSERVER_SLEEP") != "":
		time.Sleep(5 * time.Minute)
		return
	case os.Getenv("TESTSERVER_ORPHAN") != "":
		// The middle of a double fork: start the setsid grandchild, report
		// its pid on stdout, and exit so that it is orphaned.
		pid, err := sleeper(true)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pid)
		return
	}
	if msg := os.Getenv("TESTSERVER_CRASH"); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(3)
	}
	if d, err := time.ParseDuration(os.Getenv("TESTSERVER_DELAY")); err == nil {
		time.Sleep(d)
	}
	var opts mcp.ServerOptions
	if v := os.Getenv("TESTSERVER_PROTOCOL"); v != "" {
		opts.SupportedProtocolVersions = []string{v}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, &opts)
	addTools(s)
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "say hello", Arguments: []*mcp.PromptArgument{{Name: "name"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["name"]}}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "static", URI: "test://static", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "static content"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "echo", URITemplate: "test://echo/{value}"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			v := strings.TrimPrefix(req.Params.URI, "test://echo/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "echo " + v}}}, nil
		})
	switch os.Getenv("TESTSERVER_LIST") {
	case "hang":
		s.AddReceivingMiddleware(onToolsList(func(ctx context.Context) (mcp.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}))
	case "endless":
		page := 0
		s.AddReceivingMiddleware(onToolsList(func(context.Context) (mcp.Result, error) {
			page++
			return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: fmt.Sprintf("t%d", page),
				InputSchema: map[string]any{"type": "object"}}}, NextCursor: strconv.Itoa(page)}, nil
		}))
	}
	var t mcp.Transport = &mcp.StdioTransport{}
	if name := os.Getenv("TESTSERVER_LOG"); name != "" {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			log.Fatal(err)
		}
		t = &mcp.LoggingTransport{Transport: t, Writer: f}
	}
	err := s.Run(context.Background(), t)
	if os.Getenv("TESTSERVER_IGNORE_EOF") != "" {
		time.Sleep(5 * time.Minute) // a server that does not watch its stdin
	}
	if err != nil {
		log.Fatal(err)
	}
}

func addTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "info", Description: "argv, env, cwd and pid"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, info, error) {
			wd, err := os.Getwd()
			return nil, info{Args: os.Args, Env: os.Environ(), Cwd: wd, PID: os.Getpid()}, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "write a file in PLUGIN_DATA"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, writeOut, error) {
			p := filepath.Join(os.Getenv("PLUGIN_DATA"), in.Name)
			return nil, writeOut{Path: p}, os.WriteFile(p, []byte(in.Content), 0o600)
		})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "start a sleeping child"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in spawnIn) (*mcp.CallToolResult, spawnOut, error) {
			if in.Orphan {
				pid, err := orphan()
				return nil, spawnOut{PID: pid}, err
			}
			pid, err := sleeper(in.Setsid)
			return nil, spawnOut{PID: pid}, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "return the arguments"},
		func(ctx context.Context, req *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut{Arguments: in}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "wait, or until cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, struct{}, error) {
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			case <-ctx.Done():
			}
			return nil, struct{}{}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "report a tool error"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, struct{}, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, struct{}{}, nil
		})
	if uri := os.Getenv("TESTSERVER_LINK"); uri != "" {
		s.AddTool(&mcp.Tool{Name: "link", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					&mcp.ResourceLink{URI: uri, Name: "linked"},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, Text: "embedded"}},
				}}, nil
			})
	}
	for _, name := range strings.Split(os.Getenv("TESTSERVER_EXTRA_TOOLS"), ",") {
		if name == "" {
			continue
		}
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "I am " + name}}}, nil
			})
	}
}

// onToolsList answers tools/list with answer instead of the server's list.
func onToolsList(answer func(context.Context) (mcp.Result, error)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				return answer(ctx)
			}
			return next(ctx, method, req)
		}
	}
}

// sleeper starts this program sleeping, with no stdio, and returns its pid.
func sleeper(setsid bool) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	c := exec.Command(self)
	c.Env = append(os.Environ(), "TESTSERVER_SLEEP=1")
	if setsid {
		c.SysProcAttr = newSession()
	}
	if err := c.Start(); err != nil {
		return 0, err
	}
	go c.Wait()
	return c.Process.Pid, nil
}

// orphan runs the double fork and returns the orphaned grandchild's pid.
func orphan() (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	c := exec.Command(self)
	c.Env = append(os.Environ(), "TESTSERVER_ORPHAN=1")
	out, err := c.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := c.Start(); err != nil {
		return 0, err
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if err := c.Wait(); err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(line))
}
