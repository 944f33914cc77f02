package hostile

import (
	"bytes"
	"fmt"
	"strings"
)

// SkillShape is one way of filling a SKILL.md frontmatter to a given size.
type SkillShape struct {
	Name string
	// fill writes YAML lines after name and description until the
	// frontmatter reaches size bytes.
	fill func(b *bytes.Buffer, size int)
}

// Document returns a SKILL.md of the skill "demo" whose frontmatter is
// about size bytes of the shape.
func (s SkillShape) Document(size int) []byte {
	var b bytes.Buffer
	b.WriteString("---\nname: demo\ndescription: Does demo things.\n")
	s.fill(&b, size)
	b.WriteString("\n---\n# Demo\n")
	return b.Bytes()
}

// Files returns a plugin of about size bytes made of skills whose SKILL.md
// each has a frontmatter of about each bytes of the shape.
func (s SkillShape) Files(size, each int) map[string][]byte {
	files := map[string][]byte{"plugin.json": Minimal}
	doc := s.Document(each)
	for i, total := 0, 0; total < size; i++ {
		name := fmt.Sprintf("s%d", i)
		d := bytes.Replace(doc, []byte("name: demo"), []byte("name: "+name), 1)
		files["skills/"+name+"/SKILL.md"] = d
		total += len(d)
	}
	return files
}

// SkillShapes are the frontmatter shapes: YAML that amplifies (aliases of
// mappings with repeated keys, alias bombs) and YAML that is merely large
// in one dimension.
var SkillShapes = []SkillShape{
	{Name: "alias-repeated-keys", fill: func(b *bytes.Buffer, size int) {
		// A mapping with repeated keys, referenced again and again: each
		// reference repeats every duplicate-key problem.
		keys := size / 16
		b.WriteString("x: &a {")
		for range keys {
			b.WriteString("k: 1, ")
		}
		b.WriteString("k: 1}\ny: [")
		for b.Len() < size {
			b.WriteString("*a, ")
		}
		b.WriteString("*a]")
	}},
	{Name: "alias-bomb", fill: func(b *bytes.Buffer, size int) {
		b.WriteString(`a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`)
		for i := 1; b.Len() < size; i++ {
			fmt.Fprintf(b, "\na%d: &a%d [%s*a%d]", i, i, strings.Repeat(fmt.Sprintf("*a%d,", i-1), 8), i-1)
		}
	}},
	{Name: "flow-nesting", fill: func(b *bytes.Buffer, size int) {
		depth := (size - b.Len()) / 2
		b.WriteString("x: " + strings.Repeat("[", depth) + strings.Repeat("]", depth))
	}},
	{Name: "block-nesting", fill: func(b *bytes.Buffer, size int) {
		b.WriteString("x:")
		for i := 1; b.Len() < size; i++ {
			b.WriteString("\n" + strings.Repeat(" ", i) + "y:")
		}
	}},
	{Name: "unknown-keys", fill: func(b *bytes.Buffer, size int) {
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(b, "k%d: v\n", i)
		}
	}},
	{Name: "repeated-keys", fill: func(b *bytes.Buffer, size int) {
		for b.Len() < size {
			b.WriteString("?\n")
		}
	}},
	{Name: "anchors", fill: func(b *bytes.Buffer, size int) {
		b.WriteString("metadata:\n")
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(b, "  k%d: &a%d v\n", i, i)
		}
	}},
	{Name: "long-scalar", fill: func(b *bytes.Buffer, size int) {
		b.WriteString("compatibility: >\n")
		for b.Len() < size {
			b.WriteString("  words words words words words words words words words words\n")
		}
	}},
}
