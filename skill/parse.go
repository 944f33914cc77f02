package skill

import (
	"strconv"
	"strings"
	"unsafe"

	"go.yaml.in/yaml/v3"
)

// DefaultMaxFrontmatterNodes is the default of Limits.MaxFrontmatterNodes,
// which bounds the work of decoding one frontmatter: the YAML nodes
// visited, alias expansions included, the mapping keys and the problems
// reported. A smaller frontmatter gets a smaller budget,
// frontmatterBudget, so that the work stays proportional to its size.
// Without aliases no frontmatter reaches its budget, so the bound only
// stops alias bombs.
const DefaultMaxFrontmatterNodes = 100_000

// frontmatterBudget is the work allowed for a frontmatter of n bytes: four
// units a byte (alias-free YAML needs at most two: a node and a key or a
// problem) and a little more for aliases in a small file, at most max.
func frontmatterBudget(n, max int) int { return min(max, 256+4*n) }

// DefaultMaxFrontmatterDepth is the default of Limits.MaxFrontmatterDepth:
// frontmatter nests two levels (metadata), and a deeper tree costs tens of
// bytes of Frontmatter for each two bytes of "[]", so a plugin of deeply
// nested frontmatters would hold forty times its size.
const DefaultMaxFrontmatterDepth = 64

// DefaultMaxProblems is the default of Limits.MaxProblems, which bounds the
// problems Parse returns for one SKILL.md; past it a last problem,
// skill-problems-truncated, counts the others (an error when one of them
// was). skill-frontmatter-too-complex, which stops decoding, is kept in
// any case.
const DefaultMaxProblems = 100

// lineOffset turns a YAML line into a file line: the opening "---" is
// line 1 of the file and the first YAML line is line 2.
const lineOffset = 1

// Parse parses and validates SKILL.md content for a skill whose directory
// is named dirName. An empty dirName skips the comparison with the
// directory name, for content that has no directory yet. Parse returns the
// skill when no error Problem was found (warnings may accompany it), else
// nil. The returned Skill keeps content as Raw without copying it, and
// Body shares its memory: the caller leaves content unmodified.
func Parse(content []byte, dirName string, opts Options) (*Skill, []Problem) {
	limits := opts.Limits.withDefaults()
	sp, problems := splitFrontmatter(content, limits.MaxFrontmatterBytes)
	if hasError(problems) {
		return nil, problems
	}
	root, p := decodeMapping(sp.yaml)
	if p != nil {
		return nil, append(problems, *p)
	}
	budget := frontmatterBudget(len(sp.yaml), limits.MaxFrontmatterNodes)
	// The key path has room for the frontmatter's two levels at once:
	// grown from nothing, it took two allocations a skill.
	c := checker{opts: opts, dirName: dirName, problems: problems, budget: budget, limit: budget,
		maxDepth: limits.MaxFrontmatterDepth, maxProblems: limits.MaxProblems, path: make([]step, 0, 2)}
	// Body shares Raw's memory, which the caller leaves unmodified: a copy
	// of every body was a third of the heap of validating many skills.
	s := &Skill{Body: unsafe.String(unsafe.SliceData(sp.body), len(sp.body)), Raw: content}
	c.frontmatter(root, s)
	problems = c.result()
	if hasError(problems) {
		return nil, problems
	}
	return s, problems
}

// decodeMapping parses the frontmatter YAML and returns its top-level
// mapping, or the one Problem that makes it unusable.
func decodeMapping(src []byte) (*yaml.Node, *Problem) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		line := yamlErrorLine(err.Error())
		if line > 0 {
			line += lineOffset
			if isParserError(err.Error()) {
				line++
			}
		}
		return nil, &Problem{Severity: Error, Code: "skill-yaml-invalid", Line: line,
			Message: "the frontmatter is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(doc.Content) == 0 {
		return nil, &Problem{Severity: Error, Code: "skill-yaml-not-mapping", Line: 1, Column: 1,
			Message: "the frontmatter is empty; it must be a YAML mapping with at least name and description"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p := problemAt(Error, "skill-yaml-not-mapping", "", root, "the frontmatter must be a YAML mapping, not "+kindName(root))
		return nil, &p
	}
	return root, nil
}

// yamlErrorLine extracts the line from a yaml.v3 message such as
// "yaml: line 3: did not find expected key", as the library exposes no
// position for syntax errors; 0 when there is none.
func yamlErrorLine(msg string) int {
	_, after, ok := strings.Cut(msg, "line ")
	if !ok {
		return 0
	}
	end := 0
	for end < len(after) && after[end] >= '0' && after[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(after[:end])
	if err != nil {
		return 0
	}
	return n
}

// parserErrors start the messages of yaml.v3's parser, as opposed to its
// scanner. The parser reports a 0-based line (of the error, or of the
// construct it breaks) where the scanner reports a 1-based one. Both say
// "did not find expected", so the parser's are listed in full: the
// scanner's (a name after "&", a hexadecimal escape, a tag) end otherwise.
var parserErrors = []string{"did not find expected <", "did not find expected node content", "did not find expected '-' indicator",
	"did not find expected key", "did not find expected ',' or", "found duplicate %", "found incompatible YAML document", "found undefined tag handle"}

func isParserError(msg string) bool {
	_, msg, _ = strings.Cut(msg, "line ")
	_, msg, _ = strings.Cut(msg, ": ")
	for _, prefix := range parserErrors {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// problemAt builds a Problem positioned at node n of the frontmatter.
func problemAt(sev Severity, code, key string, n *yaml.Node, msg string) Problem {
	p := Problem{Severity: sev, Code: code, Key: key, Message: msg}
	if n != nil && n.Line > 0 {
		p.Line, p.Column = n.Line+lineOffset, n.Column
	}
	return p
}

func hasError(problems []Problem) bool {
	for _, p := range problems {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// kindName names a node's kind for messages, in the user's YAML terms.
func kindName(n *yaml.Node) string {
	switch resolve(n).Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	}
	return "a document"
}

// resolve returns the node an alias stands for; other nodes are returned
// as they are. An alias never targets another alias, so one step suffices.
func resolve(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// keyPath appends key to a YAML key path with JSON pointer escaping, so
// that a key holding "/" cannot be mistaken for two levels.
func keyPath(parent, key string) string {
	return parent + "/" + pointerEscaper.Replace(key)
}
