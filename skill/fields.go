package skill

import (
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// stringField is the rule for a frontmatter key whose value is a string.
type stringField struct {
	key  string
	code string // reported when the value breaks the rule
	// maxLen is the most characters allowed; 0 means no length rule. With
	// a length rule the value must also not be blank.
	maxLen int
	set    func(s *Skill, v string)
}

// stringFields are the specification's string keys, name aside: its
// character rules need more than a length (see name.go). They are few, so
// finding a key's is a comparison with each.
var stringFields = []stringField{
	{key: "description", code: "skill-description-invalid", maxLen: 1024, set: func(s *Skill, v string) { s.Description = v }},
	{key: "compatibility", code: "skill-compatibility-invalid", maxLen: 500, set: func(s *Skill, v string) { s.Compatibility = v }},
	{key: "license", code: "skill-license-invalid", set: func(s *Skill, v string) { s.License = v }},
	{key: "allowed-tools", code: "skill-allowed-tools-invalid", set: func(s *Skill, v string) { s.AllowedTools = v }},
}

// stringFieldOf returns the rule of key, if it is a string key.
func stringFieldOf(key string) (*stringField, bool) {
	for i := range stringFields {
		if stringFields[i].key == key {
			return &stringFields[i], true
		}
	}
	return nil, false
}

// requiredKeys are the keys every SKILL.md must have.
var requiredKeys = []string{"name", "description"}

// frontmatter validates the top-level mapping and fills s.
func (c *checker) frontmatter(root *yaml.Node, s *Skill) {
	s.Frontmatter = make(map[string]any, len(root.Content)/2)
	c.pairs(root, func(key string, k, v *yaml.Node) {
		c.push(key, -1)
		s.Frontmatter[key] = c.value(v)
		c.pop()
		switch f, ok := stringFieldOf(key); {
		case ok:
			c.stringField(f, v, s)
		case key == "name":
			c.name(v, s)
		case key == "metadata":
			c.metadata(v, s)
		default:
			sev := Warning
			if c.opts.Strict {
				sev = Error
			}
			c.add(sev, "skill-unknown-field", keyPath("", key), k,
				"unknown frontmatter key %q; the Agent Skills specification defines name, description, license, compatibility, metadata and allowed-tools", key)
		}
	})
	for _, key := range requiredKeys {
		if _, ok := s.Frontmatter[key]; !ok {
			c.keep(Problem{Severity: Error, Code: "skill-" + key + "-missing", Key: "/" + key, Line: 1, Column: 1,
				Message: "the frontmatter has no " + key + "; it is required"})
		}
	}
}

// scalar returns the string written for v, reporting code when v is a
// list or a mapping.
func (c *checker) scalar(key, code string, v *yaml.Node) (string, bool) {
	if resolve(v).Kind != yaml.ScalarNode {
		c.add(Error, code, keyPath("", key), v, "%s must be a string, not %s", key, kindName(v))
		return "", false
	}
	return resolve(v).Value, true
}

func (c *checker) stringField(f *stringField, v *yaml.Node, s *Skill) {
	key := f.key
	val, ok := c.scalar(key, f.code, v)
	if !ok {
		return
	}
	if f.maxLen > 0 {
		if strings.TrimSpace(val) == "" {
			c.add(Error, f.code, keyPath("", key), v, "%s must not be empty", key)
			return
		}
		// A value of no more bytes than maxLen has no more characters.
		if len(val) > f.maxLen {
			if n := utf8.RuneCountInString(val); n > f.maxLen {
				c.add(Error, f.code, keyPath("", key), v, "%s has %d characters; at most %d are allowed", key, n, f.maxLen)
				return
			}
		}
	}
	f.set(s, val)
}

// metadata checks that v maps string keys to string values. Duplicate and
// non-scalar keys were already reported while decoding the frontmatter.
func (c *checker) metadata(v *yaml.Node, s *Skill) {
	m := resolve(v)
	if m.Kind != yaml.MappingNode {
		c.add(Error, "skill-metadata-invalid", "/metadata", v, "metadata must be a mapping from string keys to string values, not %s", kindName(v))
		return
	}
	s.Metadata = make(map[string]string, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, val := resolve(m.Content[i]), m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if resolve(val).Kind != yaml.ScalarNode {
			c.add(Error, "skill-metadata-invalid", keyPath("/metadata", k.Value), val,
				"metadata value %q must be a string, not %s", k.Value, kindName(val))
			continue
		}
		s.Metadata[k.Value] = resolve(val).Value
	}
}
