// Package skill parses and validates Agent Skills (SKILL.md files, as the
// Agent Skills specification defines them) and renders the
// <available_skills> prompt block. It knows nothing of plugins: Parse works
// on bytes and LoadDir on a lone skill directory.
//
// # Format
//
// A SKILL.md starts with a YAML mapping between two lines that are exactly
// "---" (trailing spaces and tabs allowed), followed by the Markdown body,
// which is kept verbatim. Lines may end in LF or CRLF. The closing "---"
// must be a line of its own, so "description: a --- b" does not close the
// frontmatter. A frontmatter larger than Limits.MaxFrontmatterBytes (64 KiB
// by default) is refused without being parsed.
//
// A UTF-8 byte order mark before the opening "---" is accepted and
// stripped, with the warning skill-bom-stripped: editors on Windows add it
// silently, the skill is still unambiguous, and rejecting it would punish
// the author for an invisible character. Skill.Raw keeps the mark; line
// and column numbers are unaffected by it.
//
// # Values
//
// Scalars are taken as written, as the reference validator does: in
// metadata "version: 1.0" is the string "1.0", "n: 007" is "007" and
// "flag: true" is "true". This applies to every key: "license: ~" is the
// license "~" and an empty value is the empty string. Skill.Frontmatter
// therefore holds only strings, map[string]any and []any. Aliases are
// expanded, but the work of decoding is bounded: every node visited,
// expansions included, every mapping key and every problem costs one unit
// of a budget of four units a byte of frontmatter plus 256, at most
// Limits.MaxFrontmatterNodes (100,000 by default). This defeats alias
// bombs ("billion laughs") and aliases that multiply a mapping's problems,
// keeps the cost of a skill proportional to its size, and no alias-free
// frontmatter can reach it. At most Limits.MaxProblems problems (100 by
// default) are returned; a last one counts the rest. Duplicate keys are an error at every level, because YAML leaves their
// meaning undefined and tools disagree on which value wins.
//
// The name is normalised with Unicode NFKC and must then hold at most 64
// characters, lowercase letters, digits and single inner hyphens. The
// specification speaks of "unicode lowercase alphanumeric characters" and
// lists a-z and 0-9; the reference validator (skills-ref) accepts
// lowercase letters and digits of any script, so this package does too:
// "技能", "мой-навык" and "café" are valid names. As some hosts accept only
// ASCII names, such a name gets the warning skill-name-not-ascii, an error
// with Options.Strict. Uppercase and titlecase letters, symbols, marks
// NFKC cannot compose and spaces are refused. The directory name is
// normalised the same way before the comparison. Lengths are counted in
// characters (runes), never in bytes. A description or compatibility made only of white space
// counts as empty.
//
// # Problem codes
//
// Every Problem carries one of these stable codes. All are errors unless
// noted.
//
//	skill-bom-stripped             warning: a UTF-8 BOM preceded the opening "---" and was ignored
//	skill-frontmatter-missing      the file does not start with a "---" line
//	skill-frontmatter-unterminated no closing "---" line follows the opening one
//	skill-frontmatter-too-large    the frontmatter exceeds Limits.MaxFrontmatterBytes
//	skill-frontmatter-too-complex  decoding the YAML, aliases expanded, exceeds its budget (see Values)
//	skill-frontmatter-too-deep     lists and mappings nest deeper than Limits.MaxFrontmatterDepth (64 by default)
//	skill-problems-truncated       more than Limits.MaxProblems problems: the count of the rest (an error when one of them is)
//	skill-yaml-invalid             the frontmatter is not well-formed YAML
//	skill-yaml-not-mapping         the frontmatter is empty or not a YAML mapping
//	skill-yaml-duplicate-key       a mapping repeats a key
//	skill-key-invalid              a mapping key is not a scalar (a list or a mapping)
//	skill-unknown-field            warning (error with Options.Strict): a top-level key the specification does not list
//	skill-name-missing             the required name key is absent
//	skill-name-invalid             name is not a string of 1-64 lowercase letters, digits and single inner hyphens
//	skill-name-not-ascii           warning (error with Options.Strict): name has letters or digits outside a-z and 0-9
//	skill-name-mismatch            name differs from the skill's directory name
//	skill-description-missing      the required description key is absent
//	skill-description-invalid      description is not a non-blank string of 1-1024 characters
//	skill-compatibility-invalid    compatibility is not a non-blank string of 1-500 characters
//	skill-license-invalid          license is a list or a mapping
//	skill-allowed-tools-invalid    allowed-tools is a list or a mapping
//	skill-metadata-invalid         metadata is not a mapping, or one of its values is a list or a mapping
//	skill-link-escapes             LoadDir: a link resolves outside the skill directory (error for SKILL.md, warning otherwise: the file is not read)
//	skill-file-skipped             LoadDir, warning: a special file, a dangling link or a link cycle was not read
//
// Problems from Parse come in the order of the source, the missing
// required keys last.
package skill
