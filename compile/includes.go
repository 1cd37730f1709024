package compile

// The include scan: every header lookup a source and its headers can make,
// found without running the preprocessor. The cache key covers, for each
// lookup in a file the compiler read, the candidates the compiler tried
// before the file it used (see docs/cache.md, "Include search"). The scan
// does not evaluate #if: it takes every directive in every branch, so it
// finds a superset of the lookups the compiler makes, which can only add
// misses. A hand-written scanner because it needs only the header names of
// directives, and Go has no C preprocessor library that follows clang's
// search rules.

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/toolchain"
)

// includeRef is one header lookup written in a file: an #include,
// #include_next or #import directive, or a __has_include(_next) test.
type includeRef struct {
	Line   int
	Next   bool   // #include_next or __has_include_next: search after the includer's directory
	Has    bool   // __has_include: only existence matters
	Angled bool   // <name>, not "name"
	Name   string // the header name; "" when it is not a literal (a macro)
	// InMacro: a __has_include in a #define body, evaluated wherever the
	// macro is expanded (so its quoted or _next form has no fixed includer).
	InMacro bool
}

// fileScan is what the scan needs of one file.
type fileScan struct {
	Refs  []includeRef
	Clock bool // the file names __DATE__, __TIME__ or __TIMESTAMP__: its output depends on the clock
}

// scanIncludes finds the header lookups of a C/C++ file. Comments and string
// literals are skipped; line splices (backslash-newline) are honoured.
func scanIncludes(src []byte) fileScan {
	var s scanner
	s.src, s.lines.joins = removeSplices(src)
	var fs fileScan
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
				ref := includeRef{Line: line, Next: name == "include_next"}
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
func (s *scanner) hasInclude(line int, next, inDefine bool) (includeRef, bool) {
	ref := includeRef{Line: line, Has: true, Next: next, InMacro: inDefine}
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

// inclusion is a file as the compiler entered it: its name (relative to the
// base directory, or absolute) and the index in the search list where it
// was found (-1: not through the search list: the source, a path relative
// to its includer, or an absolute name). A file entered two ways is scanned
// both ways: its quoted includes and #include_next depend on them.
type inclusion struct {
	name string
	idx  int
}

// commandLine is the pseudo-file whose "#include"s are the -include files:
// clang looks them up from the current directory (the base directory).
var commandLine = inclusion{name: "", idx: -1}

// lookup is one header lookup and its outcome when scanned.
type lookup struct {
	from   inclusion
	ref    includeRef
	cands  []string   // candidate names in search order, up to the one used
	states []string   // headerState of each candidate when scanned
	infos  []pathInfo // and its stat data: the file the compiler will read
	found  bool       // the last candidate is the one used
	// opaque: the name is not a literal (#include MACRO), or the lookup
	// has no fixed includer (a quoted __has_include in a macro body).
	opaque bool
}

// includeGraph is everything a job's include scan found.
type includeGraph struct {
	src     pathInfo               // the source when scanned
	files   map[inclusion]fileID   // every file entered
	scans   map[inclusion]fileScan // what each one contains
	lookups []lookup
}

// maxScanSize bounds how much of a source or header rocmk reads, and
// maxObjectSize how much of a code object the compiler wrote.
const (
	maxScanSize   = 512 << 20
	maxObjectSize = toolchain.MaxObjectSize
)

// refusedIncludeError is a lookup that would make the compiler open a FIFO
// or a device: it would block, or read forever.
type refusedIncludeError struct {
	Pos, Ref, Path, Kind string
}

func (e *refusedIncludeError) Error() string {
	return fmt.Sprintf("%s: %s: %s is a %s, not a regular file: not compiled (the compiler would block or read forever)", e.Pos, e.Ref, e.Path, e.Kind)
}

// scanMemo remembers each file's scan while its stat data is unchanged, so
// the headers shared by many jobs are read once.
type scanMemo struct {
	mu sync.Mutex
	m  map[string]scanned
}

type scanned struct {
	size, mtime, ctime int64
	ino                uint64
	scan               fileScan
}

func (s *scanMemo) get(abs string, pi pathInfo) (fileScan, error) {
	s.mu.Lock()
	v, ok := s.m[abs]
	s.mu.Unlock()
	if ok && v.size == pi.Size && v.mtime == pi.MTime && v.ctime == pi.CTime && v.ino == pi.Ino {
		return v.scan, nil
	}
	data, err := safefile.Read(abs, maxScanSize)
	if err != nil {
		return fileScan{}, err
	}
	fs := scanIncludes(data)
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]scanned{}
	}
	s.m[abs] = scanned{pi.Size, pi.MTime, pi.CTime, pi.Ino, fs}
	s.mu.Unlock()
	return fs, nil
}

// scanJob follows every header lookup from the source src (named as the
// compiler names it) and the command line's -include files, through every
// file found, in every #if branch. stat answers come from the build's memo.
// A lookup that would open a FIFO or a device is an error naming the file
// and line: the compiler would block or read forever.
func (b *Builder) scanJob(baseDir string, sp *toolchain.SearchPath, src string) (*includeGraph, error) {
	g := &includeGraph{files: map[inclusion]fileID{}, scans: map[inclusion]fileScan{}}
	search := append(append([]string(nil), sp.Quote...), sp.Angle...)
	nQuote := len(sp.Quote)
	var queue []inclusion
	enter := func(in inclusion, pi pathInfo) {
		if _, ok := g.files[in]; !ok {
			g.files[in] = pi.id()
			queue = append(queue, in)
		}
	}
	srcInfo := b.paths.stat(absName(baseDir, src))
	if srcInfo.Err != nil {
		return nil, srcInfo.Err
	}
	g.src = srcInfo
	enter(inclusion{name: src, idx: -1}, srcInfo)
	resolve := func(from inclusion, ref includeRef) error {
		l := lookup{from: from, ref: ref}
		if ref.Name == "" || ref.InMacro && (!ref.Angled || ref.Next) {
			l.opaque = true // decided after the compile: only a file the compiler read matters
			g.lookups = append(g.lookups, l)
			return nil
		}
		type cand struct {
			name string
			idx  int
		}
		var cands []cand
		switch {
		case strings.HasPrefix(ref.Name, "/"):
			cands = []cand{{ref.Name, -1}}
		default:
			start := 0
			if ref.Next && from.idx >= 0 {
				start = from.idx + 1 // clang: after the directory the includer was found in
			} else {
				if !ref.Angled {
					cands = append(cands, cand{joinName(includerDir(from.name), ref.Name), -1})
				} else {
					start = nQuote
				}
			}
			for i := start; i < len(search); i++ {
				cands = append(cands, cand{joinName(search[i], ref.Name), i})
			}
		}
		for _, c := range cands {
			pi := b.paths.stat(absName(baseDir, c.name))
			st := pi.headerState()
			l.cands = append(l.cands, c.name)
			l.states = append(l.states, st)
			l.infos = append(l.infos, pi)
			if st == "absent" {
				continue
			}
			if st != "present" {
				return &refusedIncludeError{Pos: fmt.Sprintf("%s:%d", displayName(from), ref.Line), Ref: refText(ref), Path: c.name, Kind: specialName(st)}
			}
			l.found = true
			if !ref.Has {
				enter(inclusion{name: c.name, idx: c.idx}, pi)
			}
			break
		}
		g.lookups = append(g.lookups, l)
		return nil
	}
	for _, name := range sp.Includes {
		if err := resolve(commandLine, includeRef{Name: name}); err != nil {
			return nil, err
		}
	}
	for len(queue) > 0 {
		in := queue[0]
		queue = queue[1:]
		abs := absName(baseDir, in.name)
		fs, err := b.scans.get(abs, b.paths.stat(abs))
		if err != nil {
			return nil, err
		}
		g.scans[in] = fs
		for _, ref := range fs.Refs {
			if err := resolve(in, ref); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

// absName resolves a name as the compiler, running in baseDir, sees it.
// No cleaning: "inc/../x.h" through a symlinked inc is not "x.h".
func absName(baseDir, name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return baseDir + "/" + name
}

// joinName is how clang forms a candidate: directory + "/" + name, with the
// current directory's "./" left off.
func joinName(dir, name string) string {
	switch {
	case dir == "" || dir == ".":
		return name
	case strings.HasSuffix(dir, "/"):
		return dir + name
	}
	for strings.HasPrefix(dir, "./") {
		dir = dir[2:]
	}
	return dir + "/" + name
}

// includerDir is the directory clang searches first for a quoted include:
// the including file's directory as named ("" = the base directory).
func includerDir(name string) string {
	i := strings.LastIndexByte(name, '/')
	switch {
	case i < 0:
		return ""
	case i == 0:
		return "/"
	}
	return name[:i]
}

func displayName(in inclusion) string {
	if in == commandLine {
		return "<command line>"
	}
	return in.name
}

func refText(r includeRef) string {
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

func specialName(state string) string {
	switch state {
	case "fifo":
		return "FIFO"
	case "chardev":
		return "character device"
	case "blockdev":
		return "block device"
	}
	return state
}
