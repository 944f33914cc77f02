// Package skill parses and validates Agent Skills (SKILL.md).
package skill

// Skill is a parsed, valid SKILL.md. (API contract; the implementation is in progress.)
type Skill struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	AllowedTools  string
	Metadata      map[string]string
	// Frontmatter is every frontmatter key as decoded, unknown keys included.
	Frontmatter map[string]any
	Body        string // Markdown after the frontmatter
	Raw         []byte // the whole SKILL.md
}
