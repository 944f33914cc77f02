package skill

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// checker accumulates the problems found while decoding and validating
// one frontmatter.
type checker struct {
	opts     Options
	dirName  string
	problems []Problem
	// budget is the number of nodes still allowed to be visited.
	budget    int
	exhausted bool
	// open holds the anchored collections being decoded, to catch an alias
	// nested in its own anchor, which would otherwise recurse forever.
	open map[*yaml.Node]bool
}

func (c *checker) add(sev Severity, code, key string, n *yaml.Node, msg string) {
	c.problems = append(c.problems, problemAt(sev, code, key, n, msg))
}

// value decodes n into the Frontmatter representation: scalars as written,
// mappings as map[string]any, sequences as []any. It reports duplicate and
// non-scalar keys at every level, and stops once the node budget is spent.
func (c *checker) value(n *yaml.Node, path string) any {
	if c.exhausted {
		return nil
	}
	if c.budget--; c.budget < 0 {
		c.exhausted = true
		c.add(Error, "skill-frontmatter-too-complex", path, n,
			fmt.Sprintf("the frontmatter expands to more than %d YAML nodes (through aliases)", MaxFrontmatterNodes))
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.AliasNode:
		if c.open[n.Alias] {
			c.add(Error, "skill-yaml-invalid", path, n, "the alias *"+n.Value+" is used inside the node it refers to")
			return nil
		}
		return c.value(n.Alias, path)
	case yaml.SequenceNode:
		defer c.enter(n)()
		out := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			out = append(out, c.value(item, path+"/"+strconv.Itoa(i)))
		}
		return out
	case yaml.MappingNode:
		defer c.enter(n)()
		out := make(map[string]any, len(n.Content)/2)
		c.pairs(n, path, func(key string, _, v *yaml.Node) {
			out[key] = c.value(v, keyPath(path, key))
		})
		return out
	}
	return nil
}

// pairs calls fn for each entry of mapping n whose key is a scalar,
// reporting non-scalar and duplicate keys instead of passing them on.
func (c *checker) pairs(n *yaml.Node, path string, fn func(key string, k, v *yaml.Node)) {
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if resolve(k).Kind != yaml.ScalarNode {
			c.add(Error, "skill-key-invalid", path, k, "a mapping key must be a scalar, not "+kindName(k))
			continue
		}
		key := resolve(k).Value
		if seen[key] {
			c.add(Error, "skill-yaml-duplicate-key", keyPath(path, key), k, fmt.Sprintf("the key %q appears more than once", key))
			continue
		}
		seen[key] = true
		fn(key, k, v)
	}
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
