// Package shcheck finds, in bash source, the commands bash 5.2 cannot
// interrupt safely: those that expand a second command substitution after a
// first.
//
// Bash 5.2 (Debian 12's 5.2.15) finds where a `$(...)` ends, at expansion
// time, by running its parser over the text (xparse_dolparen). A trap that
// is pending then (the signal came during the command's first substitution,
// whose child the shell was waiting for) runs inside that parse, with the
// parser still looking for the `)`: the trap fails with "unexpected EOF
// while looking for matching `)'", and the signal is lost; the shell goes
// on. One substitution per command is safe: the pending trap runs once the
// command is done. So a runner's command holds at most one `$(...)` or
// `<(...)`/`>(...)`; the others are set in commands of their own before it
// (or avoided: csb_quote_to sets a variable without a substitution).
//
// The scanner is a lexer, not a parser: it follows quotes, comments,
// here-documents (whose bodies are expanded by another path and are not
// counted), arithmetic `$((`, and nested substitutions (run by a child whose
// traps are reset: not counted), and it ends a command at a newline, `;`,
// `&`, `|`, `(` or `)` outside quotes.
package shcheck

import (
	"fmt"
	"strings"
)

// Finding is one command with a second substitution.
type Finding struct {
	Line int // the line of the second substitution
	Col  int // its byte column, from 1
}

func (f Finding) String() string { return fmt.Sprintf("%d:%d", f.Line, f.Col) }

type scanner struct {
	src      string
	i        int
	line     int
	lineAt   int // index where the current line starts
	count    int // substitutions in the current command
	heredocs []heredoc
	found    []Finding
}

type heredoc struct {
	delim string
	tabs  bool // <<-: leading tabs stripped
}

// Scan returns the commands of src that expand more than one command
// substitution, in the order found.
func Scan(src string) []Finding {
	s := &scanner{src: src, line: 1}
	s.script(0)
	return s.found
}

func (s *scanner) peek(k int) byte {
	if s.i+k < len(s.src) {
		return s.src[s.i+k]
	}
	return 0
}

func (s *scanner) newline() {
	s.line++
	s.lineAt = s.i + 1
}

// script scans commands until the end, or (depth > 0) the `)` that closes
// a substitution opened before.
func (s *scanner) script(depth int) {
	wordStart := true
	open := 0  // ( opened inside this substitution
	cases := 0 // case commands open: a pattern's ) closes nothing
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '\\':
			if s.peek(1) == '\n' {
				s.i++
				s.newline()
			}
			s.i += 2
			wordStart = false
			continue
		case c == '#' && wordStart:
			for s.i < len(s.src) && s.src[s.i] != '\n' {
				s.i++
			}
			continue
		case c == '\n':
			s.endCommand(depth)
			s.newline()
			s.i++
			s.bodies()
			wordStart = true
			continue
		case c == ';' || c == '&' || c == '|':
			s.endCommand(depth)
			s.i++
			wordStart = true
			continue
		case c == '(':
			s.endCommand(depth)
			open++
			s.i++
			wordStart = true
			continue
		case wordStart && s.keyword("case"):
			cases++
			s.i += 4
		case wordStart && s.keyword("esac"):
			cases--
			s.i += 4
		case c == ')' && cases > 0 && open == 0:
			s.i++
			wordStart = true
			continue
		case c == ')':
			if depth > 0 && open == 0 {
				s.i++
				return
			}
			open--
			s.endCommand(depth)
			s.i++
			wordStart = true
			continue
		case c == ' ' || c == '\t':
			s.i++
			wordStart = true
			continue
		case c == '\'':
			s.single()
		case c == '"':
			s.double(depth)
		case c == '$':
			s.dollar(depth)
		case c == '`':
			s.backquote()
		case (c == '<' || c == '>') && s.peek(1) == '(':
			s.substitution(depth, 2)
		case c == '<' && s.peek(1) == '<' && s.peek(2) == '<':
			s.i += 3
		case c == '<' && s.peek(1) == '<':
			s.heredocOp()
		default:
			s.i++
		}
		wordStart = false
	}
}

// keyword reports whether the word at the cursor is w.
func (s *scanner) keyword(w string) bool {
	if !strings.HasPrefix(s.src[s.i:], w) {
		return false
	}
	switch s.peek(len(w)) {
	case 0, ' ', '\t', '\n', ';', ')':
		return true
	}
	return false
}

func (s *scanner) endCommand(depth int) {
	if depth == 0 {
		s.count = 0
	}
}

func (s *scanner) single() {
	s.i++
	for s.i < len(s.src) && s.src[s.i] != '\'' {
		if s.src[s.i] == '\n' {
			s.newline()
		}
		s.i++
	}
	s.i++
}

// dollarSingle scans $'...', where a backslash escapes the next byte.
func (s *scanner) dollarSingle() {
	s.i += 2
	for s.i < len(s.src) && s.src[s.i] != '\'' {
		if s.src[s.i] == '\\' {
			s.i++
		}
		if s.i < len(s.src) && s.src[s.i] == '\n' {
			s.newline()
		}
		s.i++
	}
	s.i++
}

func (s *scanner) double(depth int) {
	s.i++
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '"':
			s.i++
			return
		case c == '\\':
			if s.peek(1) == '\n' {
				s.newline()
			}
			s.i += 2
		case c == '$':
			s.dollar(depth)
		case c == '`':
			s.backquote()
		case c == '\n':
			s.newline()
			s.i++
		default:
			s.i++
		}
	}
}

// backquote skips `...`: bash finds its end by a plain string scan, never
// the parser, so it is not counted.
func (s *scanner) backquote() {
	s.i++
	for s.i < len(s.src) && s.src[s.i] != '`' {
		if s.src[s.i] == '\\' {
			s.i++
		} else if s.src[s.i] == '\n' {
			s.newline()
		}
		s.i++
	}
	s.i++
}

func (s *scanner) dollar(depth int) {
	switch s.peek(1) {
	case '\'':
		s.dollarSingle()
	case '(':
		if s.peek(2) == '(' {
			// $(( arithmetic )): its text is part of this command.
			s.i += 3
			s.arith(depth)
			return
		}
		s.substitution(depth, 2)
	default:
		s.i++
	}
}

// arith scans to the `))` closing an arithmetic expansion; substitutions
// in it count for this command.
func (s *scanner) arith(depth int) {
	open := 0
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '(':
			open++
			s.i++
		case c == ')':
			if open == 0 {
				s.i += 2
				return
			}
			open--
			s.i++
		case c == '$':
			s.dollar(depth)
		case c == '"':
			s.double(depth)
		case c == '\n':
			s.newline()
			s.i++
		default:
			s.i++
		}
	}
}

// substitution counts a `$(` (or `<(`, `>(`) of this command, and skips
// what it runs: its own child shell runs that.
func (s *scanner) substitution(depth, open int) {
	if depth == 0 {
		s.count++
		if s.count == 2 {
			s.found = append(s.found, Finding{Line: s.line, Col: s.i - s.lineAt + 1})
		}
	}
	s.i += open
	saved := s.count
	s.script(depth + 1)
	s.count = saved
}

// heredocOp reads a here-document operator and its delimiter; the body
// starts after the end of the line.
func (s *scanner) heredocOp() {
	s.i += 2
	h := heredoc{}
	if s.peek(0) == '-' {
		h.tabs = true
		s.i++
	}
	for s.peek(0) == ' ' || s.peek(0) == '\t' {
		s.i++
	}
	var b strings.Builder
	for s.i < len(s.src) {
		c := s.src[s.i]
		if c == '\'' || c == '"' {
			s.i++
			continue
		}
		if c == '\\' {
			s.i++
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == ')' || c == '<' || c == '>' {
			break
		}
		b.WriteByte(c)
		s.i++
	}
	if b.Len() > 0 {
		h.delim = b.String()
		s.heredocs = append(s.heredocs, h)
	}
}

// bodies skips the bodies of the here-documents opened on the line that
// just ended.
func (s *scanner) bodies() {
	for _, h := range s.heredocs {
		for s.i < len(s.src) {
			end := strings.IndexByte(s.src[s.i:], '\n')
			var line string
			if end < 0 {
				line = s.src[s.i:]
				s.i = len(s.src)
			} else {
				line = s.src[s.i : s.i+end]
				s.i += end
				s.newline()
				s.i++
			}
			if h.tabs {
				line = strings.TrimLeft(line, "\t")
			}
			if line == h.delim {
				break
			}
		}
	}
	s.heredocs = s.heredocs[:0]
}
