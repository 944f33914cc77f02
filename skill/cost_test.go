package skill

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/plugkit/plugkit/internal/hostile"
)

// TestAliasRepeatedKeysBounded: an anchored mapping with many repeated
// keys, referenced by many aliases, would give a problem per key per
// reference, a number that grows with the square of the frontmatter's
// size. Every problem and every alias expansion is charged to the
// frontmatter's budget and the problems kept are capped, so Parse returns
// a bounded list at once, in bounded memory.
func TestAliasRepeatedKeysBounded(t *testing.T) {
	for _, size := range []int{5 << 10, 15 << 10, 60 << 10} {
		content := hostile.SkillShapes[0].Document(size)
		var s *Skill
		var problems []Problem
		peak, _ := hostile.Heap(func() { s, problems = Parse(content, "demo", Options{}) })
		if s != nil {
			t.Fatalf("%d bytes: accepted", size)
		}
		if len(problems) > DefaultMaxProblems+2 {
			t.Errorf("%d bytes: %d problems, want at most %d", size, len(problems), DefaultMaxProblems+2)
		}
		codes := map[string]int{}
		for _, p := range problems {
			codes[p.Code]++
		}
		if codes["skill-frontmatter-too-complex"] != 1 || codes["skill-yaml-duplicate-key"] == 0 || codes["skill-problems-truncated"] != 1 {
			t.Errorf("%d bytes: problems %v", size, codes)
		}
		// yaml.v3's node tree is most of it: a few hundred bytes a node.
		if peak > 64<<20 {
			t.Errorf("%d bytes: peak heap %d MiB", size, peak>>20)
		}
	}
}

// TestProblemsCapped: past MaxProblems, one last problem counts the rest,
// as an error when one of them is, so that a skill is refused exactly when
// a problem, kept or not, is an error.
func TestProblemsCapped(t *testing.T) {
	lines := []string{"name: demo", "description: d"}
	for i := range DefaultMaxProblems + 50 {
		lines = append(lines, "x"+string(rune('a'+i%26))+string(rune('a'+i/26))+": v")
	}
	s, problems := Parse([]byte(doc(lines...)), "demo", Options{})
	last := problems[len(problems)-1]
	if s == nil || len(problems) != DefaultMaxProblems+1 || last.Code != "skill-problems-truncated" || last.Severity != Warning {
		t.Fatalf("skill %v, %d problems, last %+v", s, len(problems), last)
	}
	s, problems = Parse([]byte(doc(append(lines, "compatibility: [x]")...)), "demo", Options{})
	last = problems[len(problems)-1]
	if s != nil || last.Code != "skill-problems-truncated" || last.Severity != Error {
		t.Fatalf("an error past the cap: skill %v, last %+v", s, last)
	}
}

// TestAliasFreeWithinBudget: no frontmatter without aliases reaches its
// budget, however dense: the budget only stops amplification.
func TestAliasFreeWithinBudget(t *testing.T) {
	for _, sh := range hostile.SkillShapes {
		if sh.Name == "alias-repeated-keys" || sh.Name == "alias-bomb" {
			continue
		}
		for _, size := range []int{300, 4 << 10, DefaultMaxFrontmatterBytes - 100} {
			_, problems := Parse(sh.Document(size), "demo", Options{})
			for _, p := range problems {
				if p.Code == "skill-frontmatter-too-complex" {
					t.Errorf("%s, %d bytes: %s", sh.Name, size, p.Message)
				}
			}
		}
	}
}

// TestFrontmatterCostLinear: parsing a frontmatter of any shape costs
// linearly in its size, in CPU time and allocations (hostile.Linear, from
// 4 KiB to 60 KiB, within the DefaultMaxFrontmatterBytes every SKILL.md is
// held to), and bounded heap.
func TestFrontmatterCostLinear(t *testing.T) {
	small, large := 4<<10, 60<<10
	for _, sh := range hostile.SkillShapes {
		t.Run(sh.Name, func(t *testing.T) {
			parse := func(size int) func() {
				content := sh.Document(size)
				return func() { Parse(content, "demo", Options{}) }
			}
			_, l := hostile.Linear(t, sh.Name, float64(large)/float64(small), parse(small), parse(large))
			peak, _ := hostile.Heap(parse(large))
			t.Logf("%s: peak heap %d KiB for %d KiB", sh.Name, peak>>10, large>>10)
			if l.CPU > 2*time.Second || peak > 64<<20 {
				t.Errorf("%d KiB: %v, peak heap %d MiB", large>>10, l.CPU, peak>>20)
			}
		})
	}
}

// TestLimitsCanBeChanged: each of Limits' bounds is the default when zero
// and holds at the value given, lower or higher.
func TestLimitsCanBeChanged(t *testing.T) {
	codes := func(problems []Problem) map[string]int {
		m := map[string]int{}
		for _, p := range problems {
			m[p.Code]++
		}
		return m
	}
	big := []byte(doc("name: demo", "description: d", "x: "+strings.Repeat("a", 100<<10)))
	if s, problems := Parse(big, "demo", Options{}); s != nil || codes(problems)["skill-frontmatter-too-large"] != 1 {
		t.Errorf("100 KiB, default limits: %v", problems)
	}
	if s, problems := Parse(big, "demo", Options{Limits: Limits{MaxFrontmatterBytes: 128 << 10}}); s == nil {
		t.Errorf("100 KiB, MaxFrontmatterBytes 128 KiB: %v", problems)
	}
	small := []byte(doc("name: demo", "description: d", "x: "+strings.Repeat("a", 200)))
	if s, problems := Parse(small, "demo", Options{Limits: Limits{MaxFrontmatterBytes: 100}}); s != nil ||
		len(problems) != 1 || problems[0].Message != "the frontmatter is larger than 100 bytes" {
		t.Errorf("MaxFrontmatterBytes 100: %v", problems)
	}

	lines := []string{"name: demo", "description: d"}
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("x%d: v", i))
	}
	many := []byte(doc(lines...))
	s, problems := Parse(many, "demo", Options{Limits: Limits{MaxProblems: 5}})
	if last := problems[len(problems)-1]; s == nil || len(problems) != 6 ||
		last.Message != "15 more problems were not reported (limit MaxProblems 5)" {
		t.Errorf("MaxProblems 5: %d problems, last %+v", len(problems), last)
	}
	if _, problems := Parse(many, "demo", Options{}); len(problems) != 20 {
		t.Errorf("default MaxProblems: %d problems, want the 20", len(problems))
	}

	// 20 aliases of a 20-item list: about 450 nodes, far within the
	// default budget of a 300-byte frontmatter (1,456 units).
	aliased := []byte(doc("name: demo", "description: d", "metadata:",
		"  a: &a ["+strings.TrimSuffix(strings.Repeat("x, ", 20), ", ")+"]",
		"  b: ["+strings.TrimSuffix(strings.Repeat("*a, ", 20), ", ")+"]"))
	if _, problems := Parse(aliased, "demo", Options{}); codes(problems)["skill-frontmatter-too-complex"] != 0 {
		t.Errorf("default budget: %v", problems)
	}
	s, problems = Parse(aliased, "demo", Options{Limits: Limits{MaxFrontmatterNodes: 100}})
	if s != nil || !slices.ContainsFunc(problems, func(p Problem) bool {
		return p.Code == "skill-frontmatter-too-complex" && strings.Contains(p.Message, "more than 100 YAML nodes")
	}) {
		t.Errorf("MaxFrontmatterNodes 100: %v", problems)
	}
}

// TestFrontmatterDepthBounded: lists and mappings nested deeper than
// Limits.MaxFrontmatterDepth (64 by default, as for plugin.json) end the
// decoding with skill-frontmatter-too-deep, at the node that crossed it,
// so that a frontmatter of brackets is not kept as a Frontmatter tree tens
// of times its size; the hostile nesting shapes are refused so.
func TestFrontmatterDepthBounded(t *testing.T) {
	nested := func(depth int) []byte {
		return []byte(doc("name: demo", "description: d", "x: "+strings.Repeat("[", depth)+strings.Repeat("]", depth)))
	}
	if s, problems := Parse(nested(64), "demo", Options{}); s == nil {
		t.Errorf("64 levels: %v", problems)
	}
	s, problems := Parse(nested(65), "demo", Options{})
	last := problems[len(problems)-1]
	if s != nil || last.Code != "skill-frontmatter-too-deep" || last.Line != 4 || last.Column != 4+64 ||
		last.Message != "the frontmatter nests lists and mappings more than 64 levels deep" {
		t.Errorf("65 levels: skill %v, problems %+v", s, problems)
	}
	if s, problems := Parse(nested(65), "demo", Options{Limits: Limits{MaxFrontmatterDepth: 65}}); s == nil {
		t.Errorf("65 levels, MaxFrontmatterDepth 65: %v", problems)
	}
	if s, _ := Parse(nested(3), "demo", Options{Limits: Limits{MaxFrontmatterDepth: 2}}); s != nil {
		t.Errorf("3 levels, MaxFrontmatterDepth 2: accepted")
	}
	for _, sh := range hostile.SkillShapes {
		if !strings.HasSuffix(sh.Name, "-nesting") {
			continue
		}
		s, problems := Parse(sh.Document(4<<10), "demo", Options{})
		if s != nil || !slices.ContainsFunc(problems, func(p Problem) bool { return p.Code == "skill-frontmatter-too-deep" }) {
			t.Errorf("%s: skill %v, problems %v", sh.Name, s, wantsOf(problems))
		}
	}
}

// TestParseDecodesOnce: the frontmatter is decoded once, by yaml.v3 into
// its node tree, which the checks walk. Parsing a typical SKILL.md
// allocates what yaml.v3 allocates for its frontmatter and, beyond it,
// little more than the Skill and its maps: a second decoding, or
// allocations per key or per byte, would add tens.
func TestParseDecodesOnce(t *testing.T) {
	sp, problems := splitFrontmatter(typical, DefaultMaxFrontmatterBytes)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	decode := testing.AllocsPerRun(50, func() {
		var n yaml.Node
		if err := yaml.Unmarshal(sp.yaml, &n); err != nil {
			t.Fatal(err)
		}
	})
	parse := testing.AllocsPerRun(50, func() {
		if s, _ := Parse(typical, "pdf-processing", Options{}); s == nil {
			t.Fatal("invalid")
		}
	})
	t.Logf("yaml.v3 %.0f allocations, Parse %.0f", decode, parse)
	if parse > decode+24 {
		t.Errorf("Parse makes %.0f allocations, yaml.v3 decoding the frontmatter %.0f: more than 24 beyond it", parse, decode)
	}
}
