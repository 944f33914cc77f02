package skill

// Skill is a parsed SKILL.md that passed validation.
type Skill struct {
	// Name is the frontmatter name after NFKC normalisation; it equals the
	// directory name, so it is the form to build identifiers from.
	Name        string
	Description string
	// License, Compatibility and AllowedTools are empty when absent.
	License       string
	Compatibility string
	AllowedTools  string // the "allowed-tools" key
	// Metadata holds every metadata value as written in the YAML source.
	Metadata map[string]string
	// Frontmatter is every frontmatter key as decoded, unknown keys
	// included. Scalars are strings as written, mappings are
	// map[string]any and sequences are []any (see the package doc).
	Frontmatter map[string]any
	Body        string // Markdown after the frontmatter, verbatim
	// Raw is the whole SKILL.md as given to Parse. It is not copied, and
	// Body shares its memory: the caller must not modify the slice
	// afterwards.
	Raw []byte
	// Files are the skill's other files keyed by skill-relative,
	// slash-separated path; SKILL.md is not in it. LoadDir fills it, and
	// so does agentplugin for a plugin's skills; Parse does not.
	Files map[string][]byte
}

// Severity tells whether a Problem prevents the skill from loading.
type Severity string

// The severities of a Problem.
const (
	Error   Severity = "error"   // the skill does not load
	Warning Severity = "warning" // reported; the skill still loads
)

// Problem is one finding about a SKILL.md or, from LoadDir, about a file of
// the skill directory. Code is stable; Message is for humans and may change.
type Problem struct {
	Severity Severity
	Code     string // stable kebab-case code; see the package doc
	// Key is the YAML key path inside the frontmatter, with JSON pointer
	// escaping ("/metadata/version"); "" when the problem is about the
	// whole file.
	Key string
	// Line and Column are 1-based positions in the file, the opening
	// "---" being line 1; 0 when unknown.
	Line, Column int
	Message      string
	// File is the skill-relative path of the file concerned when it is not
	// SKILL.md (only LoadDir reports such problems); "" for SKILL.md.
	File string
}

// Options tune validation.
type Options struct {
	// Strict reports as errors instead of warnings a frontmatter key the
	// specification does not list (skill-unknown-field) and a name with
	// letters or digits outside ASCII (skill-name-not-ascii).
	Strict bool
	// Limits bound the work of parsing one SKILL.md.
	Limits Limits
}

// Limits bound the work of parsing one SKILL.md, whatever its shape. A
// zero field takes its default.
type Limits struct {
	// MaxFrontmatterBytes bounds the YAML between the delimiters
	// (default DefaultMaxFrontmatterBytes); a larger frontmatter is
	// refused without being parsed.
	MaxFrontmatterBytes int
	// MaxFrontmatterNodes bounds the work of decoding it, aliases expanded
	// (default DefaultMaxFrontmatterNodes): a frontmatter of n bytes may
	// spend the least of 4n+256 units and this (see the package doc).
	MaxFrontmatterNodes int
	// MaxFrontmatterDepth bounds how deep its lists and mappings nest
	// (default DefaultMaxFrontmatterDepth, as deep as plugin.json may).
	MaxFrontmatterDepth int
	// MaxProblems bounds the problems Parse returns (default
	// DefaultMaxProblems); past it a last problem counts the others.
	MaxProblems int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFrontmatterBytes <= 0 {
		l.MaxFrontmatterBytes = DefaultMaxFrontmatterBytes
	}
	if l.MaxFrontmatterNodes <= 0 {
		l.MaxFrontmatterNodes = DefaultMaxFrontmatterNodes
	}
	if l.MaxFrontmatterDepth <= 0 {
		l.MaxFrontmatterDepth = DefaultMaxFrontmatterDepth
	}
	if l.MaxProblems <= 0 {
		l.MaxProblems = DefaultMaxProblems
	}
	return l
}
