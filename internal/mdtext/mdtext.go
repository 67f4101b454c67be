// Package mdtext escapes text that came from a user or a tool (a path, a
// run directory's name, RESULTS_ROOT, a server's banner or command, a
// setting's value, argv) for the Markdown of a report, so that it prints as
// the text it is: it cannot open a link, an HTML tag or emphasis, split a
// table row or close the code span or link it sits in.
//
// Names made of letters, digits and -_./: print unchanged, so reports of
// ordinary runs read as they did before escaping.
//
//	Text("a|b")        a\|b              inline text, also a table cell
//	Label("[x]")       \[x\]             a link's label
//	Code("x")          `x`               a code span in prose
//	CodeCell("a|b")    `a\|b`            a code span in a table cell
//	Target("../r/x.md") ../r/x.md        a link's target, relative path
//	Link("x", "x.md")  [x](x.md)
package mdtext

import (
	"fmt"
	"strings"
)

// oneLine replaces each control character (a newline, a tab, CR, DEL)
// with a space: a newline would end a table row or a paragraph.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, s)
}

func isPunct(b byte) bool { return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", b) >= 0 }

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// Text is s as inline Markdown text that reads as s: on one line, every
// character that could start markup escaped with a backslash: a code span,
// emphasis, HTML or an autolink (<), an entity (&), a table's cell
// boundary (|), and a closing bracket that a link, an image or a reference
// would need (one followed by "(", "[" or ":", or ending s). A bracket
// that can open nothing prints as it is ("wrk 4.1.0 [epoll]"), and so does
// an underscore between two letters or digits
// (2026-12-01_040843_http-baseline), and a backslash before anything but
// punctuation ('\x00'). Safe in a table cell; a link's label
// is Label.
func Text(s string) string { return escape(s, false) }

// Label is Text for a link's label: every bracket escaped, so that the
// label cannot hold a link of its own or end early.
func Label(s string) string { return escape(s, true) }

func escape(s string, brackets bool) string {
	s = oneLine(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '`', '*', '<', '>', '|', '&':
			b.WriteByte('\\')
		case '\\':
			// A backslash escapes only the punctuation after it.
			if i == len(s)-1 || isPunct(s[i+1]) {
				b.WriteByte('\\')
			}
		case '[':
			if brackets {
				b.WriteByte('\\')
			}
		case ']':
			if brackets || i == len(s)-1 || strings.IndexByte("([:", s[i+1]) >= 0 {
				b.WriteByte('\\')
			}
		case '_':
			if i == 0 || i == len(s)-1 || !isAlnum(s[i-1]) || !isAlnum(s[i+1]) {
				b.WriteByte('\\')
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Code is s as a code span in prose: `s`, or, when s holds backticks, a
// span delimited by one backtick more than its longest run of them, with a
// space inside each end. Nothing inside a code span is markup.
func Code(s string) string {
	s = oneLine(s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest == 0 {
		return "`" + s + "`"
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}

// CodeCell is Code for a table cell: a pipe ends a cell even inside a code
// span, unless it follows an odd number of backslashes (GFM), which the
// table then removes. A pipe after an odd run of backslashes in s gets two
// more, so it prints with one backslash extra: the row stays whole.
func CodeCell(s string) string {
	c := Code(s)
	if !strings.Contains(c, "|") {
		return c
	}
	var b strings.Builder
	slashes := 0
	for i := 0; i < len(c); i++ {
		switch c[i] {
		case '\\':
			slashes++
		case '|':
			if slashes%2 == 0 {
				b.WriteString(`\`)
			} else {
				b.WriteString(`\\`)
			}
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(c[i])
	}
	return b.String()
}

// Target is a relative path as a link's target: every byte but letters,
// digits and -_./~: percent-encoded (a space, a parenthesis, angle
// brackets, a pipe cannot end the link or the row), and a path whose first
// segment holds a colon ("javascript:alert(1)") led by "./", so that no
// path is read as a URL with a scheme.
func Target(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if isAlnum(c) || strings.IndexByte("-_./~:", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	t := b.String()
	first, _, _ := strings.Cut(t, "/")
	if strings.Contains(first, ":") {
		t = "./" + t
	}
	return t
}

// Link is an inline link [label](target): label as Label, target as
// Target.
func Link(label, target string) string {
	return "[" + Label(label) + "](" + Target(target) + ")"
}
