// Command testserver is the MCP server mcprun's tests launch as a real
// process. It reports what it was started with, so the tests can check the
// launch rules from the server's side:
//
//   - tool "info": argv, environment and working directory;
//   - tool "write": writes a file in $PLUGIN_DATA and returns its path;
//   - tool "spawn": starts a long-sleeping child (this program with
//     TESTSERVER_SLEEP=1) in the server's process group and returns its
//     pid, to prove the group is killed on close;
//   - tool "echo": returns the arguments object it received.
//
// Environment switches: TESTSERVER_CRASH=MSG writes MSG to stderr and
// exits 3 before serving; TESTSERVER_DELAY=DURATION waits before serving,
// to stand in for a slow start-up.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type info struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Cwd  string   `json:"cwd"`
}

type writeIn struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

type writeOut struct {
	Path string `json:"path"`
}

type spawnOut struct {
	PID int `json:"pid"`
}

type echoOut struct {
	Arguments map[string]any `json:"arguments"`
}

func main() {
	if os.Getenv("TESTSERVER_SLEEP") != "" {
		time.Sleep(5 * time.Minute)
		return
	}
	if msg := os.Getenv("TESTSERVER_CRASH"); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(3)
	}
	if d, err := time.ParseDuration(os.Getenv("TESTSERVER_DELAY")); err == nil {
		time.Sleep(d)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "info", Description: "argv, env and cwd"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, info, error) {
			wd, err := os.Getwd()
			return nil, info{Args: os.Args, Env: os.Environ(), Cwd: wd}, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "write a file in PLUGIN_DATA"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, writeOut, error) {
			p := filepath.Join(os.Getenv("PLUGIN_DATA"), in.Name)
			return nil, writeOut{Path: p}, os.WriteFile(p, []byte(in.Content), 0o600)
		})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "start a sleeping child"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, spawnOut, error) {
			// The child is this program sleeping; it inherits the process
			// group and no stdio, so only the group kill can end it.
			self, err := os.Executable()
			if err != nil {
				return nil, spawnOut{}, err
			}
			c := exec.Command(self)
			c.Env = append(os.Environ(), "TESTSERVER_SLEEP=1")
			if err := c.Start(); err != nil {
				return nil, spawnOut{}, err
			}
			go c.Wait()
			return nil, spawnOut{PID: c.Process.Pid}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "return the arguments"},
		func(ctx context.Context, req *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut{Arguments: in}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
