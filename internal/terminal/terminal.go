// Package terminal makes untrusted text safe to print to a terminal.
//
// Plugin names, versions, descriptions, paths, server names, commands and
// tool names come from plugins and registries that plugkit does not trust.
// Printed raw, an escape sequence in them can rewrite what the user sees
// (move the cursor, recolour, retitle the window, hide a line), and a
// bidirectional override can reorder it. Every text output of plugkit that
// shows such a value passes it through Safe; JSON output stays exact.
package terminal

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Safe returns s with every character that a terminal would interpret
// instead of showing replaced by a visible escape: C0 and C1 controls
// (newline and tab included, so one value stays on one line), DEL,
// bidirectional formatting characters, and each byte of invalid UTF-8.
// Text without such characters is returned unchanged, without copying.
func Safe(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstUnsafe is the index of the first byte Safe must replace, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			return i
		}
		i += n
	}
	return -1
}

// unsafeRune reports whether a terminal would act on r rather than show it.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0: // C0, DEL, C1
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // bidi marks
		return true
	case r >= 0x202a && r <= 0x202e: // bidi embeddings and overrides
		return true
	case r >= 0x2066 && r <= 0x2069: // bidi isolates
		return true
	}
	return false
}

func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	default:
		if r < 0x100 {
			fmt.Fprintf(b, `\x%02x`, r)
		} else {
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}
