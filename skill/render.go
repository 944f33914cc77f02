package skill

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// Entry is one skill in the <available_skills> prompt block: every field
// of the frontmatter, and where the skill can be read.
type Entry struct {
	Name        string
	Description string
	// Location is where the agent can read the skill's SKILL.md: a file
	// path or a URI, as the host can open it.
	Location string
	// The optional fields are rendered when not empty.
	License       string
	Compatibility string
	AllowedTools  string
	Metadata      map[string]string
}

// NewEntry returns the Entry for s read from location.
func NewEntry(s *Skill, location string) Entry {
	return Entry{Name: s.Name, Description: s.Description, Location: location, License: s.License,
		Compatibility: s.Compatibility, AllowedTools: s.AllowedTools, Metadata: s.Metadata}
}

// Render renders entries, in the order given, as the <available_skills>
// block that tells a model which skills it may activate: name,
// description and location always, then license, compatibility,
// allowed-tools and metadata (sorted by key) when set. Every value is
// XML-escaped, so a description cannot close its element or inject
// markup, and characters XML cannot carry are replaced with U+FFFD.
func Render(entries []Entry) string {
	var b strings.Builder
	b.WriteString("<available_skills>\n")
	for _, e := range entries {
		b.WriteString("  <skill>\n")
		element(&b, "name", e.Name)
		element(&b, "description", e.Description)
		element(&b, "location", e.Location)
		for _, opt := range [...]struct{ tag, text string }{
			{"license", e.License}, {"compatibility", e.Compatibility}, {"allowed-tools", e.AllowedTools},
		} {
			if opt.text != "" {
				element(&b, opt.tag, opt.text)
			}
		}
		if len(e.Metadata) > 0 {
			b.WriteString("    <metadata>\n")
			for _, k := range slices.Sorted(maps.Keys(e.Metadata)) {
				// Keys are free text, so they go in an attribute rather
				// than being used as element names.
				b.WriteString("      <entry key=\"")
				escapeText(&b, k, true)
				b.WriteString("\">")
				escapeText(&b, e.Metadata[k], false)
				b.WriteString("</entry>\n")
			}
			b.WriteString("    </metadata>\n")
		}
		b.WriteString("  </skill>\n")
	}
	b.WriteString("</available_skills>\n")
	return b.String()
}

func element(b *strings.Builder, tag, text string) {
	b.WriteString("    <" + tag + ">")
	escapeText(b, text, false)
	b.WriteString("</" + tag + ">\n")
}

// escapeText writes s as XML character data, or as an attribute value
// between double quotes. Quotes need no escaping in element content, so
// they stay readable for the model there.
func escapeText(b *strings.Builder, s string, attr bool) {
	for _, r := range s {
		switch {
		case attr && r == '"':
			b.WriteString("&quot;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case !xmlChar(r):
			b.WriteRune(utf8.RuneError)
		default:
			// An invalid UTF-8 byte arrives here as utf8.RuneError, so it
			// is written as U+FFFD too.
			b.WriteRune(r)
		}
	}
}

// xmlChar reports whether XML 1.0 allows r in a document (the Char
// production).
func xmlChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}
