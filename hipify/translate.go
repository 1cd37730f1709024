package hipify

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"time"
)

// Options select how Translate rewrites a file. The zero value is
// hipify-clang's default behaviour, with the hazard analysis on.
type Options struct {
	// KernelExecutionSyntax rewrites k<<<g, b, s, q>>>(args) to
	// hipLaunchKernelGGL(k, dim3(g), dim3(b), s, q, args)
	// (--hip-kernel-execution-syntax). By default launches keep <<<>>>.
	KernelExecutionSyntax bool
	Roc                   bool // --roc: roc* library names where the tables give them
	MIOpen                bool // --miopen: MIOpen names for cuDNN
	Experimental          bool // --experimental: also translate APIs HIP marks experimental
	Amap                  bool // --amap: accepted for compatibility (hipify-clang's "as much as possible")
	// SkipExcluded leaves preprocessor branches that are inactive under
	// Defines untouched (--skip-excluded-preprocessor-conditional-blocks).
	SkipExcluded        bool
	Defines             map[string]string // -D NAME[=VALUE]
	UseHIPDataTypes     bool              // --use-hip-data-types
	DefaultPreprocessor bool              // --default-preprocessor (implies SkipExcluded)
	// HIPVersion is the HIP the output must build with: APIs added later, or
	// removed by then, are reported as unsupported and left alone. Zero: no limit.
	HIPVersion Version
	NoHazards  bool // skip the porting-hazard analysis
	NoInclude  bool // never add #include <hip/hip_runtime.h>

	// CUDAMacros is the policy for CUDA's guard, version and arch macros in
	// conditionals (--cuda-macros map|keep); every such conditional is
	// reported in Report.Conditionals either way.
	CUDAMacros MacroPolicy
	// CUDAArch is the __CUDA_ARCH__ value HIP device code is taken to have
	// (--cuda-arch; 0: DefaultCUDAArch, sm_80).
	CUDAArch int
	// CUDAVersion is the CUDA toolkit version tests are evaluated as
	// (--cuda-version; zero: DefaultCUDAVersion).
	CUDAVersion Version
	// ROCmSwitches are the project macros whose #if branches are the code
	// written for ROCm (nil: DefaultROCmSwitches; empty: none). Under
	// CUDAMacros' map they are taken as defined in HIP code.
	ROCmSwitches []string

	// NoCompat never uses rocmk's compatibility header: what the target HIP
	// lacks is reported as unsupported (--no-compat).
	NoCompat bool
	// CompatInclude is the path written in #include "..." for the
	// compatibility header ("": CompatHeaderName, beside the file).
	CompatInclude string
	// CompatInline writes the header into the file instead of including it
	// (for output to stdout).
	CompatInline bool
}

// Diagnostic severities.
const (
	SevUnsupported = "unsupported"
	SevHazard      = "hazard"
	SevConditional = "conditional"
	SevTranslated  = "translated"
)

// Diagnostic is something Translate could not do or that needs a human:
// an unsupported API, or a porting hazard (warp size, masks, PTX, ...).
type Diagnostic struct {
	Pos      Position `json:"-"`
	Where    string   `json:"pos"`      // file:line:col
	Severity string   `json:"severity"` // unsupported | hazard
	Code     string   `json:"code"`     // e.g. unsupported-api, warp-size, sync-mask, inline-asm
	Name     string   `json:"name,omitempty"`
	Msg      string   `json:"message"`
}

func (d Diagnostic) String() string { return d.Where + ": " + d.Severity + ": " + d.Msg }

// Report says what Translate did to one file.
type Report struct {
	File        string         `json:"file"`
	Lines       int            `json:"lines"`
	Changed     bool           `json:"changed"`
	Replaced    map[string]int `json:"replaced"` // replacements by API family ("runtime", "blas", "include", "launch", ...)
	Unsupported []Diagnostic   `json:"unsupported"`
	Hazards     []Diagnostic   `json:"hazards"`
	// Conditionals are the preprocessor conditionals (and other uses) of
	// CUDA's guard, version and arch macros, with what they became.
	Conditionals []Diagnostic `json:"conditionals"`
	// Translated are rewrites worth a look, with what they became (warpSize
	// in a constant expression -> ROCMK_WARP_SIZE).
	Translated []Diagnostic `json:"translated"`
	// Compat lists the pieces of the compatibility header the file uses
	// (CompatPieces), sorted; empty when it needs none.
	Compat   []string      `json:"compat,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Replacements returns the total number of replacements.
func (r *Report) Replacements() int {
	n := 0
	for _, c := range r.Replaced {
		n += c
	}
	return n
}

// ErrBinary is returned (wrapped in an *InputError) for input that is not text.
var ErrBinary = errors.New("not a text file")

// InputError is bad input (binary data), with its position.
type InputError struct {
	Pos Position
	Err error
	Msg string
}

func (e *InputError) Error() string { return e.Pos.String() + ": " + e.Msg }
func (e *InputError) Unwrap() error { return e.Err }

// checkText rejects binary input (a NUL byte) with a position. Other bytes,
// UTF-8 or not (Latin-1 comments of vendored headers), are translated as
// bytes: only ASCII identifiers are ever renamed, and comments and literals
// pass through untouched.
func checkText(name string, src []byte) error {
	bad := bytes.IndexByte(src, 0)
	if bad < 0 {
		return nil
	}
	line := 1 + bytes.Count(src[:bad], []byte{'\n'})
	col := bad - (bytes.LastIndexByte(src[:bad], '\n') + 1) + 1
	return &InputError{Pos: Position{name, Pos{bad, line, col}}, Err: ErrBinary, Msg: "binary data (NUL byte); not a CUDA source"}
}

// token is one scanned token. A file holds about one per 4-5 bytes, so the
// small fields come last, packed (64 bytes).
type token struct {
	pos    Pos
	lit    string
	pp     string // directive name when inside a preprocessor directive ("define", "include", ...)
	kind   Token
	skip   bool // in an inactive preprocessor branch (or rocmk's own block) that must be left alone
	inDefn bool // in the body of a #define
	done   bool // already translated by an earlier pass
}

type edit struct {
	start, end int
	text       string
	dead       bool // consumed by an enclosing edit (see render)
}

type translator struct {
	name   string
	src    []byte
	opt    *Options
	toks   []token
	edits  []edit
	rep    *Report
	serrs  ErrorList
	seenHz map[string]bool
	// ptxTranslated are the asm tokens translatePTX replaced
	ptxTranslated map[int]bool
	ptxNoHazard   map[int]bool // offsets of asm whose inline-asm hazard goes (noPTXHazard)
	perms         []pendingPerm
	fixed         []edit // insertions that never become part of an enclosing edit (the hip_runtime.h include)
	outer         []edit // enclosing edits of the current phase (see flushOuter)
	rocLib        bool   // the file includes a cuBLAS/cuSPARSE/cuSOLVER header
	// cublas.h (the legacy API) included without cublas_v2.h
	cublasV1, cublasV2 bool

	templKernels map[string]bool // kernels declared as templates, and macros naming template kernels

	compat       map[string]bool // compatibility pieces the file needs
	ws           *warpState      // warpSize aliases and rewrites (warpsize.go)
	idents       map[string]bool // identifiers of the file (for compatPiece.with)
	defines      map[string]bool // compat names the file defines itself
	compatBlock0 [2]int          // the file's own compat block [start, end), or {-1, -1}
	anchor       int             // where a new compat block goes (-1: not yet known)
	anchorNL     bool            // the anchor is a line end: the block starts with a newline
}

// Translate translates one CUDA source to HIP. name is used in diagnostics.
// A lexical error (unterminated comment or literal) does not stop the
// translation; binary input (a NUL byte) returns an *InputError.
func Translate(name string, src []byte, opt Options) ([]byte, *Report, error) {
	t0 := time.Now()
	rep := &Report{File: name, Replaced: map[string]int{}, Unsupported: []Diagnostic{}, Hazards: []Diagnostic{}, Conditionals: []Diagnostic{}, Translated: []Diagnostic{}}
	if err := checkText(name, src); err != nil {
		return nil, rep, err
	}
	if IsCompatHeader(src) {
		// rocmk's own header (copied along with the tree): never translated
		rep.Lines = bytes.Count(src, []byte{'\n'})
		rep.Duration = time.Since(t0)
		return src, rep, nil
	}
	if opt.DefaultPreprocessor {
		opt.SkipExcluded = true
	}
	if opt.Amap {
		// --amap: hipify as much as possible, inactive branches included
		opt.SkipExcluded = false
	}
	tr := &translator{name: name, src: src, opt: &opt, rep: rep, seenHz: map[string]bool{}, anchor: -1}
	tr.scan()
	tr.conditionals()
	tr.findCompatBlock()
	tr.cudaMacros()
	tr.findTemplateKernels()
	tr.translateTokens()
	tr.ptxFallbacks()
	tr.dropPTXHazards()
	out := tr.apply()
	rep.Lines = bytes.Count(src, []byte{'\n'})
	if len(src) > 0 && src[len(src)-1] != '\n' {
		rep.Lines++
	}
	rep.Changed = !bytes.Equal(out, src)
	sort.SliceStable(rep.Unsupported, func(i, j int) bool { return rep.Unsupported[i].Pos.Offset < rep.Unsupported[j].Pos.Offset })
	sort.SliceStable(rep.Hazards, func(i, j int) bool { return rep.Hazards[i].Pos.Offset < rep.Hazards[j].Pos.Offset })
	sort.SliceStable(rep.Conditionals, func(i, j int) bool { return rep.Conditionals[i].Pos.Offset < rep.Conditionals[j].Pos.Offset })
	sort.SliceStable(rep.Translated, func(i, j int) bool { return rep.Translated[i].Pos.Offset < rep.Translated[j].Pos.Offset })
	rep.Duration = time.Since(t0)
	return out, rep, nil
}

func (t *translator) scan() {
	// Size the token slice (the largest allocation) from a first pass that
	// builds no literals: growing it instead copied it, which made large
	// files slower per line and more than doubled their peak memory.
	var s Scanner
	s.Init(t.name, t.src, nil)
	s.noLit = true
	n := 0
	for _, tok, _ := s.Scan(); tok != EOF; _, tok, _ = s.Scan() {
		n++
	}
	s.Init(t.name, t.src, func(p Position, msg string) { t.serrs.Add(p, msg) })
	t.toks = make([]token, 0, n)
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
		t.toks = append(t.toks, token{pos: pos, kind: tok, lit: lit, pp: pp, inDefn: inDefn})
		if tok == IDENT && pp == "define" && !inDefn {
			// the macro name; the body starts after it (and after its parameter list)
			inDefn = true
		}
	}
}

func (t *translator) position(p Pos) Position { return Position{t.name, p} }

func (t *translator) diag(p Pos, sev, code, name, msg string) {
	d := Diagnostic{Pos: t.position(p), Where: t.position(p).String(), Severity: sev, Code: code, Name: name, Msg: msg}
	switch sev {
	case SevUnsupported:
		t.rep.Unsupported = append(t.rep.Unsupported, d)
	case SevConditional:
		t.rep.Conditionals = append(t.rep.Conditionals, d)
	case SevTranslated:
		t.rep.Translated = append(t.rep.Translated, d)
	default:
		t.rep.Hazards = append(t.rep.Hazards, d)
	}
}

func (t *translator) addEdit(start, end int, text string) {
	t.edits = append(t.edits, edit{start: start, end: end, text: text})
}

// next returns the index of the next token after i that is not a comment, or len(toks).
func (t *translator) next(i int) int {
	for i++; i < len(t.toks) && t.toks[i].kind == COMMENT; i++ {
	}
	return i
}

// prev returns the index of the previous non-comment token before i, or -1.
func (t *translator) prev(i int) int {
	for i--; i >= 0 && t.toks[i].kind == COMMENT; i-- {
	}
	return i
}

func (t *translator) isPunct(i int, s string) bool {
	return i >= 0 && i < len(t.toks) && t.toks[i].kind == PUNCT && t.toks[i].lit == s
}

// matching returns the index of the token closing the bracket at i ("(", "[",
// "{"), or -1. It does not cross a directive boundary when i is in one.
func (t *translator) matching(i int) int {
	open := t.toks[i].lit
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
	pp := t.toks[i].pp
	for j := i; j < len(t.toks); j++ {
		tk := &t.toks[j]
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
func (t *translator) splitArgs(open, close int) [][2]int {
	var args [][2]int
	depth := 0
	start := open + 1
	for j := open + 1; j < close; j++ {
		tk := &t.toks[j]
		if tk.kind != PUNCT {
			continue
		}
		switch tk.lit {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",":
			if depth == 0 {
				args = append(args, [2]int{start, j})
				start = j + 1
			}
		}
	}
	if start < close || len(args) > 0 {
		args = append(args, [2]int{start, close})
	}
	// an argument list of only comments/blanks is empty
	if len(args) == 1 && t.rangeEmpty(args[0]) {
		return nil
	}
	return args
}

func (t *translator) rangeEmpty(r [2]int) bool {
	for j := r[0]; j < r[1]; j++ {
		if t.toks[j].kind != COMMENT {
			return false
		}
	}
	return true
}

// sortEdits orders the edits by start offset, insertions before
// replacements at the same offset. Edits already in order (the common
// case: the passes add them in source order) cost one linear check.
func (t *translator) sortEdits() {
	less := func(a, b *edit) bool {
		if a.start != b.start {
			return a.start < b.start
		}
		return a.end == a.start && b.end != b.start
	}
	for i := 1; i < len(t.edits); i++ {
		if less(&t.edits[i], &t.edits[i-1]) {
			sort.SliceStable(t.edits, func(i, j int) bool { return less(&t.edits[i], &t.edits[j]) })
			return
		}
	}
}

// flushOuter merges the enclosing edits made by a phase (argument
// permutations, launch macros, launches) into the sorted edit list.
func (t *translator) flushOuter() {
	if len(t.outer) == 0 {
		return
	}
	t.edits = append(t.edits, t.outer...)
	t.outer = t.outer[:0]
	t.sortEdits()
}

// addOuter records an edit that encloses edits already consumed by render.
func (t *translator) addOuter(start, end int, text string) {
	t.outer = append(t.outer, edit{start: start, end: end, text: text})
}

// apply writes src with the edits applied.
func (t *translator) apply() []byte {
	t.edits = append(t.edits, t.fixed...)
	t.edits = append(t.edits, t.outer...)
	t.outer = nil
	if len(t.edits) == 0 {
		return t.src
	}
	t.sortEdits()
	// The size of the result first: a buffer grown while writing copies a
	// large file's output several times.
	size, last := len(t.src), 0
	for _, e := range t.edits {
		if e.dead || e.start < last { // consumed, or overlapping: the earlier (enclosing) edit wins
			continue
		}
		size += len(e.text) - (e.end - e.start)
		last = e.end
	}
	out := make([]byte, 0, size)
	last = 0
	for _, e := range t.edits {
		if e.dead || e.start < last {
			continue
		}
		out = append(out, t.src[last:e.start]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, t.src[last:]...)
}

// render returns src[start:end] with the edits inside it applied, and marks
// those edits consumed (they become part of an enclosing edit). The edits
// must be sorted (sortEdits); render finds the range by binary search, so a
// file with many launches stays linear-logarithmic.
func (t *translator) render(start, end int) string {
	var b strings.Builder
	last := start
	i := sort.Search(len(t.edits), func(i int) bool { return t.edits[i].start >= start })
	for ; i < len(t.edits) && t.edits[i].start <= end; i++ {
		e := &t.edits[i]
		if e.dead || e.end > end {
			continue
		}
		e.dead = true
		if e.start < last {
			continue
		}
		b.Write(t.src[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(t.src[last:end])
	return b.String()
}

// argString renders an argument's token range, trimmed ("" when empty).
func (t *translator) argString(a [2]int) string {
	if a[0] >= a[1] {
		return ""
	}
	return strings.TrimSpace(t.render(t.toks[a[0]].pos.Offset, t.endOf(a[1]-1)))
}

func (t *translator) endOf(i int) int { return t.toks[i].pos.Offset + len(t.toks[i].lit) }
