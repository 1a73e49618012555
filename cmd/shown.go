package cmd

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// shown is s as quak prints it for people, on a terminal or in a log:
// every control character (C0, with line feed, carriage return, escape
// and tab; DEL; C1), every mark that reorders text (the bidirectional
// overrides, embeddings, isolates and marks) and the line and paragraph
// separators become a visible escape (\n, \x1b, \u202e), and a byte that
// is not UTF-8 becomes \xNN. A name someone else chose (a title, an
// album's or an account's name, a path made of them) can then neither
// move the cursor, clear the screen, forge a line of its own nor turn
// the rest of its line around. JSON output keeps every name exact.
func shown(s string) string {
	i := strings.IndexFunc(s, hidden)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case hidden(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// hidden reports a rune a terminal acts on, or that reorders the text
// around it, rather than shows.
func hidden(r rune) bool {
	switch {
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f': // Arabic letter mark, LRM, RLM
		return true
	case r >= '\u202a' && r <= '\u202e': // embeddings and overrides
		return true
	case r >= '\u2066' && r <= '\u2069': // isolates
		return true
	case r == '\u2028', r == '\u2029': // line and paragraph separators
		return true
	}
	return false
}

// shownArgs is args with every string and error among them shown, so a format of quak's own keeps its layout (its "\n" included)
// while what fills it cannot change it.
func shownArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = shown(v)
		case error:
			out[i] = shown(v.Error())
		default:
			out[i] = a
		}
	}
	return out
}

// sayf prints format on w with its arguments shown: how every line quak
// prints for people is written.
func sayf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format, shownArgs(args)...)
}

// shownf is fmt.Sprintf with its arguments shown.
func shownf(format string, args ...any) string {
	return fmt.Sprintf(format, shownArgs(args)...)
}
