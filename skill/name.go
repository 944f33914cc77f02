package skill

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// MaxNameLength is the most characters a skill name may have.
const MaxNameLength = 64

// name validates the name key against the specification's rules and the
// directory name, both compared after NFKC normalisation so that
// compatibility forms (such as full-width letters) of the same name agree.
// A name with lowercase letters or digits outside ASCII is valid, as the
// reference validator has it, with a warning (an error with
// Options.Strict).
func (c *checker) name(v *yaml.Node, s *Skill) {
	raw, ok := c.scalar("name", "skill-name-invalid", v)
	if !ok {
		return
	}
	name := norm.NFKC.String(raw)
	why, ascii := nameError(name)
	if why != "" {
		c.add(Error, "skill-name-invalid", "/name", v, "%s", why)
		return
	}
	if c.dirName != "" {
		if dir := norm.NFKC.String(c.dirName); dir != name {
			c.add(Error, "skill-name-mismatch", "/name", v,
				"name %q does not match the skill's directory name %q", name, c.dirName)
			return
		}
	}
	if !ascii {
		sev := Warning
		if c.opts.Strict {
			sev = Error
		}
		c.add(sev, "skill-name-not-ascii", "/name", v,
			"name %q has characters outside a-z, 0-9 and hyphens: the Agent Skills reference validator accepts lowercase letters and digits of any script, but some hosts accept only ASCII names", name)
		if sev == Error {
			return
		}
	}
	s.Name = name
}

// nameError explains why a normalised name breaks the rules, or returns ""
// when it keeps them; ascii tells whether it keeps them with the letters
// a-z and digits 0-9 alone. Like the reference validator, it takes the
// specification's "unicode lowercase alphanumeric characters" to mean any
// letter or digit that lowercasing leaves unchanged.
func nameError(name string) (why string, ascii bool) {
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return "name must not be empty", true
	case n > MaxNameLength:
		return fmt.Sprintf("name has %d characters; at most %d are allowed", n, MaxNameLength), true
	}
	ascii = true
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-':
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsNumber(r)) && unicode.ToLower(r) == r && !unicode.IsTitle(r):
			ascii = false
		default:
			return fmt.Sprintf("name %q contains %q at byte %d; only lowercase letters, digits and hyphens are allowed", name, r, i), ascii
		}
	}
	switch {
	case name[0] == '-' || name[len(name)-1] == '-':
		return fmt.Sprintf("name %q must not start or end with a hyphen", name), ascii
	case strings.Contains(name, "--"):
		return fmt.Sprintf("name %q must not contain consecutive hyphens", name), ascii
	}
	return "", ascii
}
