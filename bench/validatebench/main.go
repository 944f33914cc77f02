// Command validatebench measures validation for the bench/ scripts.
//
//	validatebench shapes [-runs N] [-sizes 1,4,16] [-shapes REGEXP]
//	validatebench gen DIR SKILLS FILES   write a plugin of SKILLS skills of FILES files each
//	validatebench read DIR               read every file below DIR, one after another
//
// shapes (bench/validate.sh) loads hostile inputs of growing size: for each
// shape of plugin.json, mcp.json and SKILL.md frontmatter (package
// internal/hostile) and each size, the least CPU time of RUNS loads against
// the least time of the anchor, encoding/json (or yaml.v3 for frontmatter)
// parsing the same bytes, and the peak heap of one more load; then the
// directory link fan-outs, read from disk (tree.go). gen and read
// serve bench/skills.sh: read is the floor validation is held to, a
// serial Go read of the same files.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/snapshot"
)

func main() {
	if err := dispatch(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "validatebench:", err)
		os.Exit(1)
	}
}

func dispatch(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: validatebench shapes [flags] | gen DIR SKILLS FILES | read DIR")
	}
	switch args[0] {
	case "shapes":
		fs := flag.NewFlagSet("shapes", flag.ExitOnError)
		runs := fs.Int("runs", 3, "loads per figure; the least CPU time is kept")
		sizes := fs.String("sizes", "1,4,16", "input sizes in MiB, comma-separated")
		only := fs.String("shapes", "", "measure only the shapes whose name matches this regular expression")
		fs.Parse(args[1:])
		return run(*runs, *sizes, *only)
	case "gen":
		if len(args) != 4 {
			return fmt.Errorf("usage: validatebench gen DIR SKILLS FILES")
		}
		skills, err1 := strconv.Atoi(args[2])
		files, err2 := strconv.Atoi(args[3])
		if err1 != nil || err2 != nil || skills < 1 || files < 1 {
			return fmt.Errorf("gen: SKILLS and FILES must be positive integers")
		}
		return generate(args[1], skills, files)
	case "read":
		if len(args) != 2 {
			return fmt.Errorf("usage: validatebench read DIR")
		}
		return readAll(args[1])
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// input is one plugin to load, the outcome its shape should have, and
// the anchor that parses (or reads) the same bytes.
type input struct {
	load    func() (*agentplugin.Package, error)
	size    int64 // the plugin's bytes
	outcome outcome
	anchor  func() error
}

// outcome is what loading a shape should give; another outcome stops the
// bench, which would otherwise measure something else.
type outcome int

const (
	loads    outcome = iota // the plugin loads (with diagnostics)
	rejected                // the plugin is refused: its errors are the point
	limited                 // reading stops at a snapshot limit
)

// fromFiles is the input of a plugin held in memory.
func fromFiles(files map[string][]byte, want outcome, anchor func() error) (input, error) {
	s, err := snapshot.FromFiles(files)
	if err != nil {
		return input{}, err
	}
	load := func() (*agentplugin.Package, error) { return agentplugin.Load(s, agentplugin.Options{}) }
	return input{load, s.Size(), want, anchor}, nil
}

func run(runs int, sizeList, only string) error {
	var sizes []int
	for f := range strings.SplitSeq(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad size %q", f)
		}
		sizes = append(sizes, n)
	}
	match, err := regexp.Compile(only)
	if err != nil {
		return err
	}
	fmt.Printf("%-28s %6s %11s %11s %7s %10s %7s %6s\n", "shape", "MiB", "load cpu", "anchor cpu", "ratio", "peak heap", "x size", "diags")
	for _, sh := range hostile.Shapes {
		if !match.MatchString(sh.Name) {
			continue
		}
		for _, mib := range sizes {
			files := sh.Files(mib << 20)
			doc := files[sh.File]
			want := loads
			if sh.Rejected {
				want = rejected
			}
			in, err := fromFiles(files, want, func() error {
				var v any
				return json.Unmarshal(doc, &v)
			})
			if err == nil {
				err = measure(sh.Name, mib, runs, in)
			}
			if err != nil {
				return err
			}
		}
	}
	for _, sh := range hostile.SkillShapes {
		if !match.MatchString("skills-" + sh.Name) {
			continue
		}
		for _, mib := range sizes {
			files := sh.Files(mib<<20, 4<<10)
			in, err := fromFiles(files, loads, func() error {
				for p, b := range files {
					if strings.HasSuffix(p, "/SKILL.md") {
						var n yaml.Node
						fm, _, _ := bytes.Cut(bytes.TrimPrefix(b, []byte("---\n")), []byte("\n---\n"))
						if err := yaml.Unmarshal(fm, &n); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err == nil {
				err = measure("skills-"+sh.Name, mib, runs, in)
			}
			if err != nil {
				return err
			}
		}
	}
	if match.MatchString("dir-link-fanout") {
		return fanOuts(runs, sizes)
	}
	return nil
}

// measure prints one line: the least CPU time of runs loads of in, that of
// its anchor, and the peak heap of one more load. mib 0 prints as "-".
func measure(name string, mib, runs int, in input) error {
	var diags int
	var loadErr error
	load := func() {
		pkg, err := in.load()
		ds, isRejected := agentplugin.Diagnostics(err)
		var got outcome
		switch {
		case isRejected:
			got = rejected
		case errors.Is(err, snapshot.ErrLimit):
			got = limited
		case err != nil:
			loadErr = err
			return
		default:
			ds = pkg.Diagnostics
		}
		if got != in.outcome {
			loadErr = fmt.Errorf("outcome %d, want %d (0 loads, 1 rejected, 2 limit): %v", got, in.outcome, err)
		}
		diags = len(ds)
	}
	cpu := hostile.LeastCPU(runs, load)
	if loadErr != nil {
		return fmt.Errorf("%s: %v", name, loadErr)
	}
	var anchorErr error
	anchor := hostile.LeastCPU(runs, func() { anchorErr = in.anchor() })
	if anchorErr != nil {
		return fmt.Errorf("%s: anchor: %v", name, anchorErr)
	}
	peak, _ := hostile.Heap(load)
	size := "-"
	if mib > 0 {
		size = strconv.Itoa(mib)
	}
	fmt.Printf("%-28s %6s %10.3fs %10.3fs %7.2f %9.1fM %7.1f %6d\n", name, size, cpu.Seconds(), anchor.Seconds(),
		float64(cpu)/float64(anchor), float64(peak)/(1<<20), float64(peak)/float64(in.size), diags)
	return nil
}
