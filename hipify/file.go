package hipify

import "strings"

// file is the read-only context every pass gets: the source, the options,
// the tokens (with their skip marks) and the facts found before any pass
// runs. Nothing writes to it once newFile returns.
type file struct {
	name string
	src  []byte
	opt  *Options
	toks []token

	rocLib   bool // the file includes a cuBLAS/cuSPARSE/cuSOLVER header
	cublasV1 bool // cublas.h (the legacy API) included without cublas_v2.h
	cublasV2 bool // cublas_v2.h included

	templKernels map[string]bool // kernels declared as templates, and macros naming template kernels
	idents       map[string]bool // identifiers of the file that compat pieces' with lists name
	defines      map[string]bool // compat names the file defines itself
	compatBlock  [2]int          // the file's own compat block [start, end), or {-1, -1}
}

// token is one scanned token. A file holds about one per 4-5 bytes, so the
// small fields come last, packed.
type token struct {
	pos    Pos
	lit    string
	pp     string // directive name when inside a preprocessor directive ("define", "include", ...)
	kind   Token
	skip   bool // in an inactive preprocessor branch (or rocmk's own block) that must be left alone
	inDefn bool // in the body of a #define
}

// newFile scans a whole file and finds its facts: the inactive branches
// (under SkipExcluded), an earlier translation's compat block, the
// template kernels, the libraries included, the names compat pieces ask
// about.
func newFile(name string, src []byte, opt *Options) *file {
	f := &file{name: name, src: src, opt: opt, toks: scanTokens(name, src)}
	f.markInactive()
	f.compatBlock = f.findCompatBlock()
	f.templKernels = f.findTemplateKernels()
	f.findFacts()
	return f
}

// newMacroFile is the expansion of a launch macro, translated alone with
// the template kernels of the file that uses it. Its compat block, should
// it need one, goes at its start (which makes it no launch to rewrite).
func newMacroFile(parent *file, body string, opt *Options) *file {
	f := &file{name: parent.name, src: []byte(body), opt: opt, toks: scanTokens(parent.name, []byte(body))}
	f.templKernels = parent.templKernels
	f.compatBlock = [2]int{0, 0}
	f.findFacts()
	return f
}

// scanTokens scans src, noting for each token the directive it is in.
func scanTokens(name string, src []byte) []token {
	// Size the token slice (the largest allocation) from a first pass that
	// builds no literals: growing it instead copied it, which made large
	// files slower per line and more than doubled their peak memory.
	var s Scanner
	s.Init(name, src, nil)
	s.noLit = true
	n := 0
	for _, tok, _ := s.Scan(); tok != EOF; _, tok, _ = s.Scan() {
		n++
	}
	s.Init(name, src, nil) // lexical errors do not stop the translation
	toks := make([]token, 0, n)
	pp := ""
	inDefn := false
	for {
		pos, tok, lit := s.Scan()
		if tok == EOF {
			break
		}
		switch tok {
		case HASH:
			pp = lit[1:]
			inDefn = false
		case PPEND:
			pp = ""
			inDefn = false
		}
		toks = append(toks, token{pos: pos, kind: tok, lit: lit, pp: pp, inDefn: inDefn})
		if tok == IDENT && pp == "define" && !inDefn {
			// the macro name; the body starts after it (and after its parameter list)
			inDefn = true
		}
	}
	return toks
}

// findFacts finds the libraries the file includes and the compat names it
// mentions or defines, once its skip marks are final.
func (f *file) findFacts() {
	f.idents, f.defines = map[string]bool{}, map[string]bool{}
	for i := range f.toks {
		tk := &f.toks[i]
		if tk.skip {
			continue
		}
		switch {
		case tk.kind == HASH && tk.lit == "#include":
			f.noteInclude(i)
		case tk.kind == IDENT && compatWith[tk.lit]:
			f.idents[tk.lit] = true
		}
		if tk.kind == IDENT && compatByIdent[tk.lit] != nil && f.definesAt(i) {
			f.defines[tk.lit] = true
		}
	}
}

// noteInclude notes the libraries an #include at i brings in.
func (f *file) noteInclude(i int) {
	h := f.next(i)
	if h >= len(f.toks) || f.toks[h].kind != HEADER && f.toks[h].kind != STRING || len(f.toks[h].lit) < 2 {
		return
	}
	lit := f.toks[h].lit
	name := lit[1 : len(lit)-1]
	if strings.HasPrefix(name, "cublas") || strings.HasPrefix(name, "cusparse") || strings.HasPrefix(name, "cusolver") {
		f.rocLib = true
	}
	switch name {
	case "cublas.h", "hipblas.h", "hipblas/hipblas.h":
		// hipblas.h: an earlier run translated cublas.h; keep the legacy
		// names alone again so the translation stays idempotent
		f.cublasV1 = f.cublasV1 || !f.cublasV2
	case "cublas_v2.h":
		f.cublasV2, f.cublasV1 = true, false
	}
}

func (f *file) position(p Pos) Position { return Position{f.name, p} }

// next returns the index of the next token after i that is not a comment, or len(toks).
func (f *file) next(i int) int {
	for i++; i < len(f.toks) && f.toks[i].kind == COMMENT; i++ {
	}
	return i
}

// prev returns the index of the previous non-comment token before i, or -1.
func (f *file) prev(i int) int {
	for i--; i >= 0 && f.toks[i].kind == COMMENT; i-- {
	}
	return i
}

func (f *file) isPunct(i int, s string) bool {
	return i >= 0 && i < len(f.toks) && f.toks[i].kind == PUNCT && f.toks[i].lit == s
}

// matching returns the index of the token closing the bracket at i ("(", "[",
// "{"), or -1. It does not cross a directive boundary when i is in one.
func (f *file) matching(i int) int {
	open := f.toks[i].lit
	var close string
	switch open {
	case "(":
		close = ")"
	case "[":
		close = "]"
	case "{":
		close = "}"
	default:
		return -1
	}
	depth := 0
	pp := f.toks[i].pp
	for j := i; j < len(f.toks); j++ {
		tk := &f.toks[j]
		if pp != "" && tk.kind == PPEND {
			return -1
		}
		if tk.kind != PUNCT {
			continue
		}
		switch tk.lit {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// splitArgs splits the tokens strictly between open and close at top-level commas.
// It returns [start, end) token index ranges.
func (f *file) splitArgs(open, close int) [][2]int {
	var args [][2]int
	depth, launches := 0, 0 // brackets; <<< ... >>> of a launch inside an argument
	start := open + 1
	for j := open + 1; j < close; j++ {
		tk := &f.toks[j]
		switch {
		case tk.kind == LAUNCH:
			launches++
			continue
		case tk.kind == ENDLAUNCH && launches > 0:
			launches--
			continue
		case tk.kind != PUNCT:
			continue
		}
		switch tk.lit {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",":
			if depth == 0 && launches == 0 {
				args = append(args, [2]int{start, j})
				start = j + 1
			}
		}
	}
	if start < close || len(args) > 0 {
		args = append(args, [2]int{start, close})
	}
	// an argument list of only comments/blanks is empty
	if len(args) == 1 && f.rangeEmpty(args[0]) {
		return nil
	}
	return args
}

func (f *file) rangeEmpty(r [2]int) bool {
	for j := r[0]; j < r[1]; j++ {
		if f.toks[j].kind != COMMENT {
			return false
		}
	}
	return true
}

func (f *file) endOf(i int) int { return f.toks[i].pos.Offset + len(f.toks[i].lit) }
