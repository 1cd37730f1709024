package hipify

import (
	"bytes"
	"errors"
	"sort"
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
	// ProjectDefines are compat names that files this one includes define
	// themselves (RunTree finds them): the project's definition wins, so
	// they never ask for a piece, and a guarded piece leaves them out.
	ProjectDefines map[string]bool
	// SourcePath is where the source was read ("": unknown). A ROCm
	// branch's includes are looked for from there (rocmbranch.go).
	SourcePath string
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

// Translate translates one CUDA source to HIP. name is used in diagnostics.
// A lexical error (unterminated comment or literal) does not stop the
// translation; binary input (a NUL byte) returns an *InputError.
//
// The passes run in order, each a function of the file (read-only) and
// of what earlier passes returned (see doc.go).
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
	f := newFile(name, src, &opt)
	o := newOut(name, rep)
	macros, handled := cudaMacros(f, o)
	es, fixed, ptxDone := translateTokens(f, macros, handled, o)
	fallbacks, routed := ptxFallbacks(f, es, ptxDone, o)
	dropPTXHazards(f, rep, ptxDone, routed)
	out := es.apply(src, fixed, fallbacks)
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
