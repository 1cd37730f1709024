// Package includes finds the header lookups of a C/C++ file without
// running the preprocessor (Scan): every #include, #include_next, #import
// and __has_include(_next), in every #if branch, and whether the file
// names the clock (__DATE__, __TIME__). It is a pure function of the
// file's bytes; compile's include graph (which files the compiler can
// reach, for the cache key) and the translated trees build on it.
package includes

import (
	"bytes"
	"strings"
)

// Ref is one header lookup written in a file: an #include,
// #include_next or #import directive, or a __has_include(_next) test.
type Ref struct {
	Line   int
	Next   bool   // #include_next or __has_include_next: search after the includer's directory
	Has    bool   // __has_include: only existence matters
	Angled bool   // <name>, not "name"
	Name   string // the header name; "" when it is not a literal (a macro)
	// InMacro: a __has_include in a #define body, evaluated wherever the
	// macro is expanded (so its quoted or _next form has no fixed includer).
	InMacro bool
}

// File is what the scan needs of one file.
type File struct {
	Refs  []Ref
	Clock bool // the file names __DATE__, __TIME__ or __TIMESTAMP__: its output depends on the clock
}

// Scan finds the header lookups of a C/C++ file. Comments and string
// literals are skipped; line splices (backslash-newline) are honoured.
func Scan(src []byte) File {
	var s scanner
	s.src, s.lines.joins = removeSplices(src)
	var fs File
	atLineStart, inDefine := true, false
	src = s.src
	for s.pos < len(src) {
		c := src[s.pos]
		switch {
		case c == '\n':
			s.pos++
			atLineStart, inDefine = true, false
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			s.pos++
		case c == '/' && s.at(1) == '/':
			s.skipLineComment()
		case c == '/' && s.at(1) == '*':
			s.skipBlockComment()
		case c == '#' && atLineStart:
			line := s.line()
			s.pos++
			atLineStart = false
			switch name := s.directiveName(); name {
			case "include", "import", "include_next":
				ref := Ref{Line: line, Next: name == "include_next"}
				ref.Angled, ref.Name = s.headerName()
				fs.Refs = append(fs.Refs, ref)
			case "define":
				inDefine = true
			}
		case c == '"' || c == '\'':
			atLineStart = false
			s.skipQuoted(c)
		case c >= '0' && c <= '9':
			atLineStart = false
			s.skipNumber()
		case isIdentStart(c):
			atLineStart = false
			start := s.pos
			id := s.ident()
			if len(id) > 0 && id[0] == '_' {
				switch string(id) {
				case "__has_include", "__has_include_next":
					line := s.lines.at(s.src, start)
					if ref, ok := s.hasInclude(line, string(id) == "__has_include_next", inDefine); ok {
						fs.Refs = append(fs.Refs, ref)
					}
				case "__DATE__", "__TIME__", "__TIMESTAMP__":
					fs.Clock = true
				}
				continue
			}
			// A literal's prefix (u8"...", L'x', R"(...)") is part of the literal.
			if q := s.at(0); (q == '"' || q == '\'') && isLiteralPrefix(string(id)) {
				if id[len(id)-1] == 'R' && q == '"' {
					s.skipRawString()
				} else {
					s.skipQuoted(q)
				}
			}
		default:
			atLineStart = false
			s.pos++
		}
	}
	return fs
}

// removeSplices deletes backslash-newlines, the preprocessor's first step,
// and returns where (offsets in the result) lines were joined.
func removeSplices(src []byte) ([]byte, []int) {
	if !bytes.Contains(src, []byte("\\\n")) && !bytes.Contains(src, []byte("\\\r\n")) {
		return src, nil
	}
	out := make([]byte, 0, len(src))
	var joins []int
	rest := src
	for {
		i := bytes.IndexByte(rest, '\\')
		if i < 0 {
			return append(out, rest...), joins
		}
		out = append(out, rest[:i]...)
		switch {
		case i+1 < len(rest) && rest[i+1] == '\n':
			joins = append(joins, len(out))
			rest = rest[i+2:]
		case i+2 < len(rest) && rest[i+1] == '\r' && rest[i+2] == '\n':
			joins = append(joins, len(out))
			rest = rest[i+3:]
		default:
			out = append(out, '\\')
			rest = rest[i+1:]
		}
	}
}

// lineCounter turns offsets in the spliced text into physical line numbers.
// Offsets are asked in increasing order, so it counts incrementally.
type lineCounter struct {
	joins []int // offsets where a line was joined
	pos   int   // offset counted up to
	line  int   // newlines before pos
	join  int   // joins at or before pos
}

func (l *lineCounter) at(text []byte, pos int) int {
	l.line += bytes.Count(text[l.pos:pos], []byte{'\n'})
	l.pos = pos
	for l.join < len(l.joins) && l.joins[l.join] <= pos {
		l.join++
	}
	return l.line + l.join + 1
}

// scanner walks a file's text with splices removed.
type scanner struct {
	src   []byte
	pos   int
	lines lineCounter
}

func (s *scanner) line() int { return s.lines.at(s.src, s.pos) }

// at returns the byte k ahead, or 0 at the end.
func (s *scanner) at(k int) byte {
	if s.pos+k < len(s.src) {
		return s.src[s.pos+k]
	}
	return 0
}

func (s *scanner) skipLineComment() {
	if i := bytes.IndexByte(s.src[s.pos:], '\n'); i >= 0 {
		s.pos += i
	} else {
		s.pos = len(s.src)
	}
}

func (s *scanner) skipBlockComment() {
	if i := bytes.Index(s.src[s.pos+2:], []byte("*/")); i >= 0 {
		s.pos += 2 + i + 2
	} else {
		s.pos = len(s.src)
	}
}

// skipQuoted skips a string or character literal (an unterminated one ends
// at the end of the line, as in the preprocessor).
func (s *scanner) skipQuoted(q byte) {
	for s.pos++; s.pos < len(s.src); s.pos++ {
		switch s.src[s.pos] {
		case '\\':
			if s.at(1) != '\n' {
				s.pos++
			}
		case '\n':
			return
		case q:
			s.pos++
			return
		}
	}
}

// skipNumber skips a pp-number (1'000, 0x1p-3, 1.5e+10f).
func (s *scanner) skipNumber() {
	for s.pos++; s.pos < len(s.src); s.pos++ {
		c := s.src[s.pos]
		switch {
		case c == '.' || c >= '0' && c <= '9' || isIdentStart(c):
		case (c == '+' || c == '-') && strings.ContainsRune("eEpP", rune(s.src[s.pos-1])):
		case c == '\'' && s.pos+1 < len(s.src) && (isIdentStart(s.src[s.pos+1]) || s.src[s.pos+1] >= '0' && s.src[s.pos+1] <= '9'):
		default:
			return
		}
	}
}

// skipRawString skips R"delim( ... )delim" (the prefix already read).
func (s *scanner) skipRawString() {
	s.pos++ // "
	start := s.pos
	for s.pos < len(s.src) && s.src[s.pos] != '(' && s.src[s.pos] != '\n' && s.pos-start <= 16 {
		s.pos++
	}
	if s.pos >= len(s.src) || s.src[s.pos] != '(' {
		return // not a raw string after all
	}
	end := append(append([]byte{')'}, s.src[start:s.pos]...), '"')
	if i := bytes.Index(s.src[s.pos:], end); i >= 0 {
		s.pos += i + len(end)
	} else {
		s.pos = len(s.src)
	}
}

// skipSpace skips blanks and comments within a line.
func (s *scanner) skipSpace() {
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			s.pos++
		case c == '/' && s.at(1) == '*':
			s.skipBlockComment()
		default:
			return
		}
	}
}

func (s *scanner) ident() []byte {
	start := s.pos
	for s.pos < len(s.src) && (isIdentStart(s.src[s.pos]) || s.src[s.pos] >= '0' && s.src[s.pos] <= '9') {
		s.pos++
	}
	return s.src[start:s.pos]
}

func (s *scanner) directiveName() string {
	s.skipSpace()
	return string(s.ident())
}

// hasInclude reads the "(name)" after __has_include. ok is false when no
// "(" follows ("defined(__has_include)" makes no lookup).
func (s *scanner) hasInclude(line int, next, inDefine bool) (Ref, bool) {
	ref := Ref{Line: line, Has: true, Next: next, InMacro: inDefine}
	s.skipSpace()
	if s.at(0) != '(' {
		return ref, false
	}
	s.pos++
	ref.Angled, ref.Name = s.headerName()
	if ref.Name != "" {
		s.skipSpace()
		if s.at(0) != ')' {
			ref.Name = "" // a header name followed by more tokens: not a plain literal
		}
	}
	return ref, true
}

// headerName reads "name" or <name> on the current line. Anything else is a
// macro or an error: Name "" (the caller decides what that means).
func (s *scanner) headerName() (angled bool, name string) {
	s.skipSpace()
	closer := byte('"')
	switch s.at(0) {
	case '<':
		closer, angled = '>', true
	case '"':
	default:
		return false, ""
	}
	end := bytes.IndexAny(s.src[s.pos+1:], string([]byte{closer, '\n'}))
	if end < 0 || s.src[s.pos+1+end] != closer {
		return angled, "" // unterminated: clang reports it
	}
	name = string(s.src[s.pos+1 : s.pos+1+end])
	s.pos += end + 2
	return angled, name
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isLiteralPrefix(id string) bool {
	switch id {
	case "L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R":
		return true
	}
	return false
}

// String is the lookup as written: "#include <a.h>", "__has_include(\"b.h\")".
func (r Ref) String() string {
	open, closer := `"`, `"`
	if r.Angled {
		open, closer = "<", ">"
	}
	switch {
	case r.Has && r.Next:
		return "__has_include_next(" + open + r.Name + closer + ")"
	case r.Has:
		return "__has_include(" + open + r.Name + closer + ")"
	case r.Next:
		return "#include_next " + open + r.Name + closer
	}
	return "#include " + open + r.Name + closer
}
