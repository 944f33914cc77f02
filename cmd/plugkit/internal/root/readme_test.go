//go:build unix

package root

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plugkit/plugkit/internal/testbin"
)

// The README's console blocks are tested: each one runs, as a user would
// paste it, with the real plugkit binary first on PATH, in a new temporary
// directory holding a copy of examples/, and what it prints (stdout and
// stderr, as a terminal shows them) must be what the README shows.
//
// A console block is a fenced block of type "console". Lines starting
// with "$ " are commands (a line ending in '\' continues on the next
// line); the lines after a command, up to the next command, are its
// expected output. An expected line "..." matches any number of lines.
// Before comparing, the temporary directory's path is replaced by
// "/tmp/x", so that outputs naming it compare.
//
// A block that cannot run here (it needs a network service the test does
// not start, say) is marked on the line before its fence:
//
//	<!-- readme-test: skip: REASON -->
//
// Every other console block runs: running and comparing is the default. A
// block that starts a server on a fixed port (as a user would, on
// 127.0.0.1:8080) is marked
//
//	<!-- readme-test: free-port 8080 -->
//
// and runs with a free port in place of 8080 (in what plugkit prints, it
// is put back), so that a busy port on the test machine cannot fail it.
//
// The walkthroughs promise that pasting them writes nothing into the
// clone: after each block, the directory it started in must hold the copy
// of examples/ and nothing else, unchanged.
const (
	readmeMarkSkip = "<!-- readme-test: skip:"
	readmeMarkPort = "<!-- readme-test: free-port"
)

// readmeBlock is one console block of the README.
type readmeBlock struct {
	line     int // line of the opening fence, 1-based
	skip     string
	port     string // the fixed port the block uses, replaced by a free one
	commands []readmeCommand
}

type readmeCommand struct {
	cmd  string
	want []string
}

// parseReadme finds the console blocks of a Markdown document.
func parseReadme(doc string) ([]readmeBlock, error) {
	var blocks []readmeBlock
	var cur *readmeBlock
	prev := ""
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```console":
			cur = &readmeBlock{line: n}
			if rest, ok := strings.CutPrefix(strings.TrimSpace(prev), readmeMarkSkip); ok {
				cur.skip = strings.TrimSpace(strings.TrimSuffix(rest, "-->"))
				if cur.skip == "" {
					return nil, fmt.Errorf("line %d: a skipped block needs a reason", n-1)
				}
			}
			if rest, ok := strings.CutPrefix(strings.TrimSpace(prev), readmeMarkPort); ok {
				cur.port = strings.TrimSpace(strings.TrimSuffix(rest, "-->"))
				if _, err := strconv.Atoi(cur.port); err != nil {
					return nil, fmt.Errorf("line %d: free-port needs the port the block uses", n-1)
				}
			}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil && strings.HasPrefix(line, "$ "):
			cur.commands = append(cur.commands, readmeCommand{cmd: line[2:]})
		case cur != nil && len(cur.commands) > 0 && strings.HasSuffix(cur.commands[len(cur.commands)-1].cmd, "\\"):
			cur.commands[len(cur.commands)-1].cmd += "\n" + line
		case cur != nil && len(cur.commands) > 0:
			c := &cur.commands[len(cur.commands)-1]
			c.want = append(c.want, line)
		case cur != nil:
			return nil, fmt.Errorf("line %d: console block output before any command", n)
		}
		prev = line
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: console block never closed", cur.line)
	}
	return blocks, nil
}

func TestREADME(t *testing.T) {
	doc, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseReadme(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal("the README has no console block")
	}
	bin := filepath.Dir(testbin.Plugkit(t))
	examples, _ := filepath.Abs("../../../../examples")
	for _, b := range blocks {
		t.Run(fmt.Sprintf("line%d", b.line), func(t *testing.T) {
			if b.skip != "" {
				t.Skipf("README line %d: %s", b.line, b.skip)
			}
			runReadmeBlock(t, b, bin, examples)
		})
	}
}

// runReadmeBlock runs a block's commands in one shell, in order, and
// compares each one's output with the README's.
func runReadmeBlock(t *testing.T, b readmeBlock, bin, examples string) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(tmp, "work")
	os.Mkdir(work, 0o755)
	if out, err := exec.Command("cp", "-R", examples, filepath.Join(work, "examples")).CombinedOutput(); err != nil {
		t.Fatalf("copying examples: %v\n%s", err, out)
	}
	before := treeListing(t, work)
	// A fixed port becomes a free one in the commands, and the README's
	// again in what they print.
	readmeAddr, addr := "127.0.0.1:"+b.port, ""
	if b.port != "" {
		addr = freeAddr(t)
	}
	// Each command's output is preceded by a marker line, so one shell
	// runs the whole block (cd and variables carry over, as when pasted).
	marker := fmt.Sprintf("--readme-test-%d--", time.Now().UnixNano())
	var script strings.Builder
	for _, c := range b.commands {
		cmdline := c.cmd
		if addr != "" {
			cmdline = strings.ReplaceAll(cmdline, readmeAddr, addr)
		}
		// The marker keeps $? for the next command ("echo $?").
		fmt.Fprintf(&script, "__status=$?; echo %s; (exit $__status)\n%s\n", marker, cmdline)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script.String()+"\n")
	cmd.Dir = work
	home := filepath.Join(tmp, "home")
	os.Mkdir(home, 0o755)
	cmd.Env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMPDIR="+tmp, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
		"NO_COLOR=1", "PLUGKIT_REGISTRY=", "PLUGKIT_TOKEN=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A command left running in the background (a server) must not
	// outlive the block: the shell gets its own process group, ended
	// when the block is done.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait() // commands may fail on purpose; their output says so
	printed := strings.ReplaceAll(out.String(), tmp, "/tmp/x")
	if addr != "" {
		printed = strings.ReplaceAll(printed, addr, readmeAddr)
	}
	got := strings.Split(printed, marker+"\n")
	if len(got) != len(b.commands)+1 {
		t.Fatalf("README line %d: the block stopped early:\n%s", b.line, out.String())
	}
	for i, c := range b.commands {
		lines := strings.Split(strings.TrimSuffix(got[i+1], "\n"), "\n")
		if got[i+1] == "" {
			lines = nil
		}
		if !matchLines(c.want, lines) {
			t.Errorf("README line %d: $ %s\n--- README shows:\n%s\n--- plugkit printed:\n%s",
				b.line, c.cmd, strings.Join(c.want, "\n"), strings.Join(lines, "\n"))
		}
	}
	if after := treeListing(t, work); after != before {
		t.Errorf("README line %d: the block wrote into the directory it was pasted in (a clone, for a user):\n--- before:\n%s--- after:\n%s",
			b.line, before, after)
	}
}

// treeListing lists every path under dir with its type, mode and size.
func treeListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		size := fi.Size()
		if d.IsDir() {
			size = 0 // a directory's size is the file system's business
		}
		fmt.Fprintf(&b, "%s %v %d\n", rel, fi.Mode(), size)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// freeAddr is a loopback address no one listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// matchLines compares lines with a pattern where a line "..." matches any
// number of lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && strings.TrimRight(want[0], " ") == strings.TrimRight(got[0], " ") && matchLines(want[1:], got[1:])
}

func TestParseReadme(t *testing.T) {
	doc := "text\n```console\n$ a \\\n  b\nout 1\n...\n$ c\n```\n\n<!-- readme-test: skip: needs a server -->\n```console\n$ d\n```\n```sh\n$ not a console block\n```\n"
	blocks, err := parseReadme(doc)
	if err != nil || len(blocks) != 2 {
		t.Fatalf("%v %+v", err, blocks)
	}
	if c := blocks[0].commands; len(c) != 2 || c[0].cmd != "a \\\n  b" || len(c[0].want) != 2 || c[1].cmd != "c" || blocks[0].skip != "" {
		t.Errorf("%+v", blocks[0])
	}
	if blocks[1].skip != "needs a server" || blocks[1].line != 11 {
		t.Errorf("%+v", blocks[1])
	}
	if blocks, err := parseReadme("<!-- readme-test: free-port 8080 -->\n```console\n$ a\n```\n"); err != nil || len(blocks) != 1 || blocks[0].port != "8080" {
		t.Errorf("free-port: %v %+v", err, blocks)
	}
	for _, bad := range []string{"```console\nout\n```\n", "```console\n$ a\n", "<!-- readme-test: skip: -->\n```console\n$ a\n```\n",
		"<!-- readme-test: free-port -->\n```console\n$ a\n```\n"} {
		if _, err := parseReadme(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if !matchLines([]string{"a", "...", "d"}, []string{"a", "b", "c", "d"}) || matchLines([]string{"a"}, []string{"a", "b"}) ||
		!matchLines([]string{"..."}, nil) || matchLines([]string{"a", "...", "d"}, []string{"a", "b"}) {
		t.Error("matchLines")
	}
}
