package skill

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checker accumulates the problems found while decoding and validating
// one frontmatter.
type checker struct {
	opts     Options
	dirName  string
	problems []Problem
	// budget is the work still allowed: every node visited (through
	// aliases too), every mapping key and every problem costs one, so that
	// an alias multiplying a mapping's repeated keys multiplies nothing
	// past the budget.
	budget, limit int
	exhausted     bool
	// maxDepth is Limits.MaxFrontmatterDepth: a list or mapping nested
	// deeper ends the decoding, as an exhausted budget does.
	maxDepth int
	// maxProblems is Limits.MaxProblems; dropped counts the problems past
	// it, and droppedErr tells
	// whether one of them was an error.
	maxProblems int
	dropped     int
	droppedErr  bool
	// open holds the anchored collections being decoded, to catch an alias
	// nested in its own anchor, which would otherwise recurse forever.
	open map[*yaml.Node]bool
	// path leads down to the node being decoded; it is turned into a key
	// path only for a problem that is kept.
	path []step
}

// step is one level of a key path: a mapping key, or a sequence index
// when index >= 0.
type step struct {
	key   string
	index int
}

func (c *checker) push(key string, index int) { c.path = append(c.path, step{key, index}) }
func (c *checker) pop()                       { c.path = c.path[:len(c.path)-1] }

// here is the key path of the node being decoded, with JSON pointer
// escaping.
func (c *checker) here() string {
	var b strings.Builder
	for _, s := range c.path {
		b.WriteByte('/')
		if s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			pointerEscaper.WriteString(&b, s.key)
		}
	}
	return b.String()
}

// spend charges one unit of work at node n and reports whether the budget
// allows it. The first unit past the budget ends the decoding with
// skill-frontmatter-too-complex.
func (c *checker) spend(n *yaml.Node) bool {
	if c.exhausted {
		return false
	}
	if c.budget--; c.budget >= 0 {
		return true
	}
	c.exhausted = true
	// Kept past MaxProblems too: it is why decoding stopped.
	c.problems = append(c.problems, problemAt(Error, "skill-frontmatter-too-complex", c.here(), n,
		fmt.Sprintf("the frontmatter expands to more than %d YAML nodes (through aliases)", c.limit)))
	return false
}

// add reports a problem with key path key at node n, charged to the
// budget. The message is formatted only when the problem is kept, so that
// problems past MaxProblems cost next to nothing.
func (c *checker) add(sev Severity, code, key string, n *yaml.Node, format string, args ...any) {
	if c.spend(n) && !c.drop(sev) {
		c.problems = append(c.problems, problemAt(sev, code, key, n, fmt.Sprintf(format, args...)))
	}
}

// addHere is add for the node being decoded, whose key path is built only
// when the problem is kept.
func (c *checker) addHere(sev Severity, code string, n *yaml.Node, format string, args ...any) {
	if c.spend(n) && !c.drop(sev) {
		c.problems = append(c.problems, problemAt(sev, code, c.here(), n, fmt.Sprintf(format, args...)))
	}
}

// keep appends p, unless MaxProblems are kept.
func (c *checker) keep(p Problem) {
	if !c.drop(p.Severity) {
		c.problems = append(c.problems, p)
	}
}

// drop reports whether MaxProblems problems are kept, counting the one of
// severity sev the caller was about to add.
func (c *checker) drop(sev Severity) bool {
	if len(c.problems) < c.maxProblems {
		return false
	}
	c.dropped++
	c.droppedErr = c.droppedErr || sev == Error
	return true
}

// result returns the problems, with a last one counting those dropped.
func (c *checker) result() []Problem {
	if c.dropped == 0 {
		return c.problems
	}
	sev := Warning
	if c.droppedErr {
		sev = Error
	}
	return append(c.problems, Problem{Severity: sev, Code: "skill-problems-truncated", Line: 1, Column: 1,
		Message: fmt.Sprintf("%d more problems were not reported (limit MaxProblems %d)", c.dropped, c.maxProblems)})
}

// value decodes n into the Frontmatter representation: scalars as written,
// mappings as map[string]any, sequences as []any. It reports duplicate and
// non-scalar keys at every level, and stops once the budget is spent.
func (c *checker) value(n *yaml.Node) any {
	if !c.spend(n) {
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.AliasNode:
		if c.open[n.Alias] {
			c.addHere(Error, "skill-yaml-invalid", n, "the alias *%s is used inside the node it refers to", n.Value)
			return nil
		}
		return c.value(n.Alias)
	case yaml.SequenceNode:
		if !c.within(n) {
			return nil
		}
		defer c.enter(n)()
		out := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			c.push("", i)
			out = append(out, c.value(item))
			c.pop()
		}
		return out
	case yaml.MappingNode:
		if !c.within(n) {
			return nil
		}
		defer c.enter(n)()
		out := make(map[string]any, len(n.Content)/2)
		c.pairs(n, func(key string, _, v *yaml.Node) {
			c.push(key, -1)
			out[key] = c.value(v)
			c.pop()
		})
		return out
	}
	return nil
}

// within reports whether the collection n, being decoded, nests no
// deeper than maxDepth (the top-level mapping's values are at depth one).
// The first one deeper ends the decoding with skill-frontmatter-too-deep.
func (c *checker) within(n *yaml.Node) bool {
	if len(c.path) <= c.maxDepth {
		return true
	}
	c.exhausted = true
	// Kept past MaxProblems too: it is why decoding stopped.
	c.problems = append(c.problems, problemAt(Error, "skill-frontmatter-too-deep", c.here(), n,
		fmt.Sprintf("the frontmatter nests lists and mappings more than %d levels deep", c.maxDepth)))
	return false
}

// pairs calls fn for each entry of mapping n whose key is a scalar,
// reporting non-scalar and duplicate keys instead of passing them on.
func (c *checker) pairs(n *yaml.Node, fn func(key string, k, v *yaml.Node)) {
	var seen map[string]bool
	if len(n.Content)/2 > fewKeys {
		seen = make(map[string]bool, len(n.Content)/2)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !c.spend(k) {
			return
		}
		if resolve(k).Kind != yaml.ScalarNode {
			c.addHere(Error, "skill-key-invalid", k, "a mapping key must be a scalar, not %s", kindName(k))
			continue
		}
		key := resolve(k).Value
		if seenBefore(n.Content[:i], key, seen) {
			c.push(key, -1)
			c.addHere(Error, "skill-yaml-duplicate-key", k, "the key %q appears more than once", key)
			c.pop()
			continue
		}
		fn(key, k, v)
	}
}

// fewKeys is the most keys a mapping may have for a duplicate to be found
// by comparing each key with the ones before it, as a frontmatter's few
// keys are: cheaper than hashing each key twice into a map, which larger
// mappings use so as to stay linear.
const fewKeys = 16

// seenBefore reports whether key is the key of a pair of before, a
// mapping's children up to the pair being read. seen holds the keys read
// so far instead, and gets key, when the mapping has more than fewKeys.
func seenBefore(before []*yaml.Node, key string, seen map[string]bool) bool {
	if seen != nil {
		if seen[key] {
			return true
		}
		seen[key] = true
		return false
	}
	for i := 0; i+1 < len(before); i += 2 {
		if k := resolve(before[i]); k.Kind == yaml.ScalarNode && k.Value == key {
			return true
		}
	}
	return false
}

// enter records that the collection n is being decoded, when an alias can
// refer to it, and returns the function that records its end.
func (c *checker) enter(n *yaml.Node) func() {
	if n.Anchor == "" {
		return func() {}
	}
	if c.open == nil {
		c.open = map[*yaml.Node]bool{}
	}
	c.open[n] = true
	return func() { delete(c.open, n) }
}
