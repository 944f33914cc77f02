package skill

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// MaxNameLength is the most characters a skill name may have.
const MaxNameLength = 64

// name validates the name key against the specification's rules and the
// directory name, both compared after NFKC normalisation so that
// compatibility forms (such as full-width letters) of the same name agree.
func (c *checker) name(v *yaml.Node, s *Skill) {
	raw, ok := c.scalar("name", "skill-name-invalid", v)
	if !ok {
		return
	}
	name := norm.NFKC.String(raw)
	if msg := nameError(name); msg != "" {
		c.add(Error, "skill-name-invalid", "/name", v, "%s", msg)
		return
	}
	if c.dirName != "" {
		if dir := norm.NFKC.String(c.dirName); dir != name {
			c.add(Error, "skill-name-mismatch", "/name", v,
				"name %q does not match the skill's directory name %q", name, c.dirName)
			return
		}
	}
	s.Name = name
}

// nameError explains why a normalised name breaks the specification's
// rules, or returns "" when it keeps them.
func nameError(name string) string {
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return "name must not be empty"
	case n > MaxNameLength:
		return fmt.Sprintf("name has %d characters; at most %d are allowed", n, MaxNameLength)
	}
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Sprintf("name %q contains %q at byte %d; only lowercase letters a-z, digits 0-9 and hyphens are allowed", name, r, i)
		}
	}
	switch {
	case name[0] == '-' || name[len(name)-1] == '-':
		return fmt.Sprintf("name %q must not start or end with a hyphen", name)
	case strings.Contains(name, "--"):
		return fmt.Sprintf("name %q must not contain consecutive hyphens", name)
	}
	return ""
}
