package skill

import (
	"bytes"
	"fmt"
)

// DefaultMaxFrontmatterBytes is the default of Limits.MaxFrontmatterBytes,
// which bounds the YAML handed to the parser. Real frontmatter is a few
// hundred bytes; the bound keeps hostile files cheap to refuse.
const DefaultMaxFrontmatterBytes = 64 << 10

// utf8BOM is the byte order mark some editors put before the first line.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// split is a SKILL.md cut at its frontmatter delimiters.
type split struct {
	yaml []byte // the lines between the delimiters
	body []byte // everything after the closing line and its line ending
}

// splitFrontmatter finds the frontmatter. It scans at most maxBytes past
// the opening line, so its work is bounded whatever the file size.
func splitFrontmatter(content []byte, maxBytes int) (split, []Problem) {
	var problems []Problem
	if bytes.HasPrefix(content, utf8BOM) {
		content = content[len(utf8BOM):]
		problems = append(problems, Problem{Severity: Warning, Code: "skill-bom-stripped", Line: 1, Column: 1,
			Message: "a UTF-8 byte order mark precedes the frontmatter; it was ignored"})
	}
	first, rest, ok := nextLine(content)
	if !isDelimiter(first) {
		return split{}, append(problems, Problem{Severity: Error, Code: "skill-frontmatter-missing", Line: 1, Column: 1,
			Message: `SKILL.md must start with a "---" line opening the YAML frontmatter`})
	}
	if !ok {
		return split{}, append(problems, unterminated())
	}
	for off := 0; ; {
		line, after, ok := nextLine(rest[off:])
		if isDelimiter(line) {
			return split{yaml: rest[:off], body: after}, problems
		}
		if !ok {
			return split{}, append(problems, unterminated())
		}
		off += len(rest[off:]) - len(after)
		if off > maxBytes {
			return split{}, append(problems, Problem{Severity: Error, Code: "skill-frontmatter-too-large", Line: 1, Column: 1,
				Message: fmt.Sprintf("the frontmatter is larger than %d bytes", maxBytes)})
		}
	}
}

// nextLine returns the first line of b without its line ending, and what
// follows that ending. ok is false when b holds no line ending, in which
// case line is all of b.
func nextLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return bytes.TrimSuffix(b[:i], []byte{'\r'}), b[i+1:], true
}

// isDelimiter reports whether line is "---", trailing blanks allowed as
// most frontmatter readers allow them.
func isDelimiter(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	return ok && len(bytes.TrimRight(rest, " \t")) == 0
}

func unterminated() Problem {
	return Problem{Severity: Error, Code: "skill-frontmatter-unterminated", Line: 1, Column: 1,
		Message: `the frontmatter opened on line 1 has no closing "---" line`}
}
