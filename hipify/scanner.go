package hipify

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Token is the kind of a lexical token (a byte: a file keeps one per
// token).
type Token uint8

// The token kinds.
const (
	ILLEGAL Token = iota
	EOF
	COMMENT   // // ... or /* ... */
	IDENT     // identifier or keyword
	NUMBER    // pp-number: 42, 0x1f, 1.5e-3f, 1'000
	STRING    // "..." with optional prefix (L, u8, u, U) or raw string R"d(...)d"
	CHAR      // '...' with optional prefix
	PUNCT     // operator or punctuation (one token per operator: ::, ->, <<, <=, ...)
	LAUNCH    // <<<
	ENDLAUNCH // >>>
	HASH      // the # that starts a preprocessor directive; lit is "#" + directive name (e.g. "#include")
	HEADER    // <...> header name after #include
	PPEND     // end of a preprocessor directive (the newline, or EOF); lit is ""
)

var tokNames = [...]string{ILLEGAL: "ILLEGAL", EOF: "EOF", COMMENT: "COMMENT", IDENT: "IDENT", NUMBER: "NUMBER",
	STRING: "STRING", CHAR: "CHAR", PUNCT: "PUNCT", LAUNCH: "<<<", ENDLAUNCH: ">>>", HASH: "HASH",
	HEADER: "HEADER", PPEND: "PPEND"}

func (t Token) String() string {
	if int(t) < len(tokNames) {
		return tokNames[t]
	}
	return fmt.Sprintf("Token(%d)", int(t))
}

// Pos is a position in a source file: byte offset (0-based), line and column
// (1-based, column in bytes, as go/token).
type Pos struct {
	Offset, Line, Column int
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// Position is a Pos with a file name.
type Position struct {
	Filename string
	Pos
}

func (p Position) String() string {
	if p.Filename == "" {
		return p.Pos.String()
	}
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

// Error is a positioned diagnostic.
type Error struct {
	Pos Position
	Msg string
}

func (e Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList is a list of positioned errors (go/scanner style).
type ErrorList []*Error

// Add appends an error.
func (l *ErrorList) Add(pos Position, msg string) { *l = append(*l, &Error{pos, msg}) }

// Sort sorts the list by position.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool { return l[i].Pos.Offset < l[j].Pos.Offset })
}

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Err returns the list as an error, or nil if it is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// ErrorHandler is called for each lexical error.
type ErrorHandler func(pos Position, msg string)

// Scanner tokenizes CUDA C++ source.
type Scanner struct {
	name string
	src  []byte
	eh   ErrorHandler

	off       int  // current reading offset
	line      int  // current line (1-based)
	lineStart int  // offset of the start of the current line
	bol       bool // only whitespace/comments seen since the start of the line
	inPP      bool // inside a preprocessor directive
	ppInclude bool // after #include: the next <...> is a HEADER
	noLit     bool // return no literals (a pass that only counts tokens)

	ErrorCount int
}

// bom is the UTF-8 byte order mark.
const bom = "\xef\xbb\xbf"

// Init prepares s to scan src. name is used in error positions. A leading
// byte order mark is skipped, as go/scanner does, and columns count from
// after it: the first line's tokens are seen (and translated) as in a file
// without one, and the mark stays where it is.
func (s *Scanner) Init(name string, src []byte, eh ErrorHandler) {
	*s = Scanner{name: name, src: src, eh: eh, line: 1, bol: true}
	if len(src) >= len(bom) && string(src[:len(bom)]) == bom {
		s.off, s.lineStart = len(bom), len(bom)
	}
}

func (s *Scanner) pos(off int) Pos {
	return Pos{Offset: off, Line: s.line, Column: off - s.lineStart + 1}
}

func (s *Scanner) error(p Pos, msg string) {
	s.ErrorCount++
	if s.eh != nil {
		s.eh(Position{s.name, p}, msg)
	}
}

func (s *Scanner) newline(at int) {
	s.line++
	s.lineStart = at + 1
}

func isLetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipSpace skips blanks, and newlines outside directives. Inside a
// directive a backslash-newline is a blank and a bare newline ends it.
func (s *Scanner) skipSpace() {
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			s.off++
		case c == '\n':
			if s.inPP {
				return
			}
			s.newline(s.off)
			s.off++
			s.bol = true
		case c == '\\' && s.off+1 < len(s.src) && (s.src[s.off+1] == '\n' || s.src[s.off+1] == '\r' && s.off+2 < len(s.src) && s.src[s.off+2] == '\n'):
			if s.src[s.off+1] == '\r' {
				s.off++
			}
			s.newline(s.off + 1)
			s.off += 2
		default:
			return
		}
	}
}

// Scan returns the next token, its position and its literal text (the exact
// source bytes). At the end it returns EOF (after a PPEND if a directive was
// open).
func (s *Scanner) Scan() (pos Pos, tok Token, lit string) {
	s.skipSpace()
	start := s.off
	pos = s.pos(start)
	if s.off >= len(s.src) {
		if s.inPP {
			s.inPP = false
			return pos, PPEND, ""
		}
		return pos, EOF, ""
	}
	c := s.src[s.off]
	if c == '\n' { // only reached in a directive
		s.inPP = false
		s.ppInclude = false
		s.newline(s.off)
		s.off++
		s.bol = true
		return pos, PPEND, ""
	}
	wasBOL := s.bol
	s.bol = false
	switch {
	case c == '#' && wasBOL && !s.inPP:
		s.off++
		s.inPP = true
		name := string(s.scanDirectiveName())
		s.ppInclude = name == "include" || name == "include_next" || name == "import"
		return pos, HASH, "#" + name
	case isLetter(c):
		if tok, ok := s.prefixedLiteral(); ok {
			return pos, tok, s.lit(start)
		}
		s.scanIdent()
		return pos, IDENT, s.lit(start)
	case isDigit(c) || c == '.' && s.off+1 < len(s.src) && isDigit(s.src[s.off+1]):
		s.scanNumber()
		return pos, NUMBER, s.lit(start)
	case c == '"':
		s.scanQuoted('"')
		return pos, STRING, s.lit(start)
	case c == '\'':
		s.scanQuoted('\'')
		return pos, CHAR, s.lit(start)
	case c == '/' && s.off+1 < len(s.src) && s.src[s.off+1] == '/':
		s.scanLineComment()
		s.bol = wasBOL
		return pos, COMMENT, s.lit(start)
	case c == '/' && s.off+1 < len(s.src) && s.src[s.off+1] == '*':
		s.scanBlockComment(pos)
		s.bol = wasBOL
		return pos, COMMENT, s.lit(start)
	case c == '<' && s.ppInclude:
		s.ppInclude = false
		s.scanHeaderName(pos)
		return pos, HEADER, s.lit(start)
	}
	s.ppInclude = false
	tok, lit = s.scanPunct(start)
	return pos, tok, lit
}

// scanDirectiveName scans the name of a directive after its #, possibly
// after blanks ("#  include"), and returns its bytes.
func (s *Scanner) scanDirectiveName() []byte {
	s.skipSpace()
	n := s.off
	for s.off < len(s.src) && (isLetter(s.src[s.off]) || isDigit(s.src[s.off])) {
		s.off++
	}
	return s.src[n:s.off]
}

// scanIdent scans an identifier whose first letter is at s.off.
func (s *Scanner) scanIdent() {
	s.off++
	for s.off < len(s.src) && (isLetter(s.src[s.off]) || isDigit(s.src[s.off])) {
		s.off++
	}
}

// scanLineComment scans a // comment up to (not including) its newline; a
// backslash-newline continues it.
func (s *Scanner) scanLineComment() {
	s.off += 2
	for s.off < len(s.src) && s.src[s.off] != '\n' {
		if s.src[s.off] == '\\' && s.off+1 < len(s.src) && s.src[s.off+1] == '\n' {
			s.newline(s.off + 1)
			s.off++
		}
		s.off++
	}
}

// scanBlockComment scans a /* */ comment that starts at pos.
func (s *Scanner) scanBlockComment(pos Pos) {
	s.off += 2
	for {
		if s.off >= len(s.src) {
			s.error(pos, "comment not terminated")
			return
		}
		if s.src[s.off] == '*' && s.off+1 < len(s.src) && s.src[s.off+1] == '/' {
			s.off += 2
			return
		}
		if s.src[s.off] == '\n' {
			s.newline(s.off)
		}
		s.off++
	}
}

// scanHeaderName scans the <...> header name of an #include that starts
// at pos; it ends at the line's end.
func (s *Scanner) scanHeaderName(pos Pos) {
	for s.off < len(s.src) && s.src[s.off] != '>' && s.src[s.off] != '\n' {
		s.off++
	}
	if s.off < len(s.src) && s.src[s.off] == '>' {
		s.off++
	} else {
		s.error(pos, "header name not terminated")
	}
}

// scanPunct scans the longest operator at s.off (the token at start):
// <<< and >>> are LAUNCH and ENDLAUNCH, a byte that is not ASCII starts an
// ILLEGAL rune.
func (s *Scanner) scanPunct(start int) (Token, string) {
	c := s.src[s.off]
	rest := s.src[s.off:]
	if len(rest) >= 3 {
		switch string(rest[:3]) {
		case "<<<":
			s.off += 3
			return LAUNCH, "<<<"
		case ">>>":
			s.off += 3
			return ENDLAUNCH, ">>>"
		case "<<=", ">>=", "->*", "...", "<=>":
			s.off += 3
			return PUNCT, s.lit(start)
		}
	}
	if len(rest) >= 2 {
		switch string(rest[:2]) {
		case "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
			"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*", "##":
			s.off += 2
			return PUNCT, s.lit(start)
		}
	}
	if c < utf8.RuneSelf {
		s.off++
		return PUNCT, string(rest[:1])
	}
	_, n := utf8.DecodeRune(rest)
	s.off += n
	return ILLEGAL, s.lit(start)
}

// lit returns the source text of the token that started at start.
func (s *Scanner) lit(start int) string {
	if s.noLit {
		return ""
	}
	return string(s.src[start:s.off])
}

// prefixedLiteral scans an encoding-prefixed or raw string/char literal
// (L"", u8"", u”, R"x(...)x", u8R"(...)") at s.off, if there is one.
func (s *Scanner) prefixedLiteral() (Token, bool) {
	src := s.src[s.off:]
	i := 0
	switch {
	case len(src) >= 2 && src[0] == 'u' && src[1] == '8':
		i = 2
	case src[0] == 'u' || src[0] == 'U' || src[0] == 'L':
		i = 1
	}
	raw := false
	if i < len(src) && src[i] == 'R' {
		raw = true
		i++
	}
	if i >= len(src) || i == 0 && !raw {
		return 0, false
	}
	q := src[i]
	if q != '"' && (q != '\'' || raw) {
		return 0, false
	}
	if !raw {
		s.off += i
		s.scanQuoted(q)
		if q == '"' {
			return STRING, true
		}
		return CHAR, true
	}
	// raw string: R"delim( ... )delim"
	p := s.pos(s.off)
	j := i + 1
	for j < len(src) && j-i-1 <= 16 && src[j] != '(' && src[j] != ')' && src[j] != '\\' && src[j] != ' ' && src[j] != '"' && src[j] != '\n' {
		j++
	}
	if j >= len(src) || src[j] != '(' {
		// not a valid raw string: scan as identifier R followed by a string
		return 0, false
	}
	delim := ")" + string(src[i+1:j]) + "\""
	k := j + 1
	for {
		if k+len(delim) > len(src) {
			s.error(p, "raw string literal not terminated")
			k = len(src)
			break
		}
		if src[k] == ')' && string(src[k:k+len(delim)]) == delim {
			k += len(delim)
			break
		}
		if src[k] == '\n' {
			s.newline(s.off + k)
		}
		k++
	}
	s.off += k
	return STRING, true
}

func (s *Scanner) scanQuoted(q byte) {
	p := s.pos(s.off)
	s.off++
	for {
		if s.off >= len(s.src) || s.src[s.off] == '\n' {
			if q == '\'' {
				// an apostrophe that is not a char literal (e.g. in #error text): one char
				s.off = p.Offset + 1
				return
			}
			s.error(p, "string literal not terminated")
			return
		}
		c := s.src[s.off]
		if c == q {
			s.off++
			return
		}
		if c == '\\' && s.off+1 < len(s.src) {
			if s.src[s.off+1] == '\n' {
				s.newline(s.off + 1)
			}
			s.off += 2
			continue
		}
		s.off++
	}
}

// scanNumber scans a pp-number: digits, letters, '.', digit separators and
// exponent signs (1e+5, 0x1p-3).
func (s *Scanner) scanNumber() {
	s.off++
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case isDigit(c) || isLetter(c) && c < 0x80 || c == '.':
			s.off++
		case (c == '+' || c == '-') && (s.src[s.off-1]|0x20 == 'e' || s.src[s.off-1]|0x20 == 'p'):
			s.off++
		case c == '\'' && s.off+1 < len(s.src) && (isDigit(s.src[s.off+1]) || isLetter(s.src[s.off+1])):
			s.off++
		default:
			return
		}
	}
}
