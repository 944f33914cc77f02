package agentplugin_test

import (
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/snapshot"
)

// checkLinear fails t unless loadLarge, which loads large bytes, costs at
// most linearly more than loadSmall, which loads small bytes, and takes
// under a minute: a generous cap, far below what the quadratic loader
// took (64 s for 848 KiB).
func checkLinear(t *testing.T, name string, small, large int, loadSmall, loadLarge func()) {
	t.Helper()
	_, l := hostile.Linear(t, name, float64(large)/float64(small), loadSmall, loadLarge)
	if l.CPU > time.Minute {
		t.Errorf("%d KiB took %v", large>>10, l.CPU)
	}
}

// loader returns a function that loads the plugin of one hostile shape of
// size bytes, counting its diagnostics into diags.
func loader(t *testing.T, sh hostile.Shape, size int, diags *int) func() {
	s, err := snapshot.FromFiles(sh.Files(size))
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		pkg, err := agentplugin.Load(s, agentplugin.Options{})
		ds, rejected := agentplugin.Diagnostics(err)
		switch {
		case err != nil && !rejected:
			t.Fatalf("%s: %v", sh.Name, err)
		case rejected != sh.Rejected:
			t.Fatalf("%s: rejected %v, want %v", sh.Name, rejected, sh.Rejected)
		case pkg != nil:
			ds = pkg.Diagnostics
		}
		*diags = len(ds)
	}
}

// TestHostileJSONCostLinear: whatever the shape of plugin.json or mcp.json
// (a wide object, a long array, deep nesting, one diagnostic per element
// past MaxDiagnostics), loading it costs linearly in its size, in CPU time
// and in allocations (hostile.Linear), from 1 MiB to 16 MiB (128 KiB to
// 2 MiB under the race detector or -short): a quadratic cost grows 256
// times, a linear one 16. Past MaxDiagnostics diagnostics are counted,
// not kept.
func TestHostileJSONCostLinear(t *testing.T) {
	small, large := 1<<20, 16<<20
	if testing.Short() || raceEnabled {
		small, large = 128<<10, 2<<20
	}
	for _, sh := range hostile.Shapes {
		t.Run(sh.Name, func(t *testing.T) {
			var diags int
			checkLinear(t, sh.Name, small, large, loader(t, sh, small, &diags), loader(t, sh, large, &diags))
			if diags > 1001 {
				t.Errorf("%d diagnostics past MaxDiagnostics", diags)
			}
		})
	}
}

// TestHostileJSONHeap: loading plugin.json or mcp.json of any shape holds
// at most about ten times the file's size in heap at once (it was 60
// times). The ratio hardly depends on the size past a
// megabyte (below, fixed costs weigh), so one size is measured: 4 MiB
// (2 MiB under the race detector, which slows every allocation).
func TestHostileJSONHeap(t *testing.T) {
	size := 4 << 20
	if raceEnabled {
		size = 2 << 20
	}
	for _, sh := range hostile.Shapes {
		t.Run(sh.Name, func(t *testing.T) {
			var diags int
			peak, _ := hostile.Heap(loader(t, sh, size, &diags))
			ratio := float64(peak) / float64(size)
			t.Logf("%s: peak heap %.1fx the file's %d KiB", sh.Name, ratio, size>>10)
			// "About ten times": a manifest of a million unknown fields
			// keeps each in Package.Manifest, a map that alone costs
			// five to six times the file.
			if ratio > 11 {
				t.Errorf("peak heap %.1f times the file's size, want about 10 at most", ratio)
			}
		})
	}
}

// TestHostileSkillsCostLinear, at the scale of a plugin: skills whose
// frontmatter amplifies (aliases of mappings with repeated keys, alias
// bombs) cost linearly in the plugin's size, because each frontmatter's
// work is bounded by its own size (package skill tests every shape one
// SKILL.md at a time). From 128 KiB to 2 MiB of 4 KiB frontmatters (32 KiB
// to 512 KiB under the race detector or -short).
func TestHostileSkillsCostLinear(t *testing.T) {
	small, large := 128<<10, 2<<20
	if testing.Short() || raceEnabled {
		small, large = 32<<10, 512<<10
	}
	for _, sh := range hostile.SkillShapes {
		if !strings.HasPrefix(sh.Name, "alias-") {
			continue
		}
		t.Run(sh.Name, func(t *testing.T) {
			load := func(size int) func() {
				s, err := snapshot.FromFiles(sh.Files(size, 4<<10))
				if err != nil {
					t.Fatal(err)
				}
				return func() {
					if _, err := agentplugin.Load(s, agentplugin.Options{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			checkLinear(t, sh.Name, small, large, load(small), load(large))
		})
	}
}

// TestDroppedDiagnosticsCostNothing: a diagnostic past
// MaxDiagnostics is counted, never built, so that ten thousand more of them
// allocate nothing more (a few chunks of the JSON tree aside).
func TestDroppedDiagnosticsCostNothing(t *testing.T) {
	for _, name := range []string{"manifest-keyword-errors", "mcp-arg-errors", "mcp-unknown-server-fields"} {
		var sh hostile.Shape
		for _, s := range hostile.Shapes {
			if s.Name == name {
				sh = s
			}
		}
		allocs := func(size int) (float64, int) {
			var diags int
			load := loader(t, sh, size, &diags)
			return testing.AllocsPerRun(3, load), diags
		}
		a1, d1 := allocs(64 << 10)
		a2, d2 := allocs(256 << 10)
		if d1 != 1001 || d2 != 1001 {
			t.Fatalf("%s: %d and %d diagnostics, want the 1,000 kept and the count of the rest", name, d1, d2)
		}
		// 192 KiB more hold tens of thousands more dropped diagnostics:
		// one allocation each would add as many. The slack is the noise of
		// the kept thousand, whose fmt printers come from a sync.Pool that
		// each collection empties (counts of one size vary by about 200).
		t.Logf("%s: %.0f allocations for 64 KiB, %.0f for 256 KiB", name, a1, a2)
		if extra := a2 - a1; extra > 512 {
			t.Errorf("%s: %.0f allocations for 64 KiB, %.0f for 256 KiB: dropped diagnostics allocate", name, a1, a2)
		}
	}
}
