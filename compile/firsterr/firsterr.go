// Package firsterr finds the first error in a compiler's output and
// classifies it, so a failed build says per unit what to do: install a
// library, target a newer HIP, replace inline PTX, or fix the project's
// own code. The classes come from a table of clang's messages (both
// ROCm lanes: clang 15 with HIP 5.2, clang 21 with HIP 6.4; samples in
// testdata/).
package firsterr

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/rocmk/rocmk/hipify/rocmlibs"
)

// Classes of a first error.
const (
	LibraryMissing = "library-missing" // a ROCm library header the toolchain does not have
	APIMissing     = "api-missing"     // a HIP (or untranslated CUDA) API this HIP lacks
	InlinePTX      = "inline-ptx"      // inline assembly that is PTX, not AMDGPU
	Project        = "project"         // an error in the project's own code
	Other          = "other"           // anything else (system headers, the driver, the linker)
)

// Classes is every class, in report order.
var Classes = []string{LibraryMissing, APIMissing, InlinePTX, Project, Other}

// Error is a compile's first error.
type Error struct {
	File    string `json:"file,omitempty"` // as the compiler wrote it; "" for an error without a place
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
	Class   string `json:"class"`
	Package string `json:"package,omitempty"` // library-missing: the Debian package that provides it
}

// String is "file:line:col: message [class]".
func (e Error) String() string {
	s := e.Message + " [" + e.Class
	if e.Package != "" {
		s += ": apt-get install " + e.Package
	}
	s += "]"
	if e.File == "" {
		return s
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + ": " + s
}

var (
	located   = regexp.MustCompile(`^(.+?):(\d+):(\d+): (?:fatal )?error: (.*)$`)
	unlocated = regexp.MustCompile(`^(?:\S+: )?(?:fatal )?error: (.*)$`)
	notFound  = regexp.MustCompile(`^'([^']+)' file not found`)
	quotedID  = regexp.MustCompile(`'([A-Za-z_][A-Za-z0-9_:]*)'`)
)

// pattern is a message a class is known by.
type pattern struct {
	re    *regexp.Regexp
	class string
	// api: the class holds only when the first quoted name is a GPU API's
	// (hip*, cuda*, __nv_*...); otherwise the error is the project's.
	api bool
}

// patterns: clang's wording, the same in clang 15 and 21.
var patterns = []pattern{
	{re: regexp.MustCompile(`^invalid (?:output|input) constraint '[^']*' in asm`), class: InlinePTX},
	{re: regexp.MustCompile(`^(?:invalid|unknown) instruction|^invalid operand for instruction|^too (?:few|many) operands for instruction`), class: InlinePTX},
	{re: regexp.MustCompile(`^couldn't allocate (?:output|input) register for constraint`), class: InlinePTX},
	{re: regexp.MustCompile(`^use of undeclared identifier '`), class: APIMissing, api: true},
	{re: regexp.MustCompile(`^unknown type name '`), class: APIMissing, api: true},
	{re: regexp.MustCompile(`^no (?:member|type|template) named '[^']*' in (?:namespace )?'`), class: APIMissing, api: true},
	{re: regexp.MustCompile(`^no matching function for call to '`), class: APIMissing, api: true},
}

// apiName is how GPU API names begin: HIP's and ROCm libraries', and
// CUDA's that a translation left because the target has no counterpart.
var apiName = regexp.MustCompile(`^(?:hip|HIP|__hip|roc(?:blas|sparse|rand|prim|wmma|solver|fft)|cuda|CUDA|cu[A-Z]|CU_|__nv|nv[A-Z_]|nvcuda|__shfl|__ballot|__builtin_amdgcn|wmma::|cub::)`)

func isAPI(name string) bool { return apiName.MatchString(name) }

// First finds the first error in a compiler's output and classifies it.
// inProject says whether a file the compiler names is the project's (nil:
// any relative path). ok is false when the output has no error.
func First(stderr []byte, inProject func(file string) bool) (e Error, ok bool) {
	lines := strings.Split(strings.ReplaceAll(string(stderr), "\r\n", "\n"), "\n")
	for i, l := range lines {
		if m := located.FindStringSubmatch(l); m != nil {
			e.File, e.Message = m[1], m[4]
			e.Line, _ = strconv.Atoi(m[2])
			e.Col, _ = strconv.Atoi(m[3])
			e.Class, e.Package = classify(e, lines[i+1:], inProject)
			return e, true
		}
		if m := unlocated.FindStringSubmatch(l); m != nil {
			return Error{Message: m[1], Class: Other}, true
		}
	}
	return Error{}, false
}

// classify sorts a located error by its message, then by where it is.
// rest is the output after it (clang's notes: "<inline asm>").
func classify(e Error, rest []string, inProject func(string) bool) (class, pkg string) {
	if m := notFound.FindStringSubmatch(e.Message); m != nil {
		if lib, ok := rocmlibs.ForHeader(m[1]); ok {
			return LibraryMissing, lib.Package
		}
		if strings.HasPrefix(m[1], "hip/") {
			return APIMissing, "" // a HIP header of a newer HIP (hip/hip_bf16.h before 6.0)
		}
	}
	for _, p := range patterns {
		if !p.re.MatchString(e.Message) {
			continue
		}
		if !p.api {
			return p.class, ""
		}
		if m := quotedID.FindStringSubmatch(e.Message); m != nil && isAPI(m[1]) {
			return p.class, ""
		}
		break
	}
	if inlineAsmNote(rest) {
		return InlinePTX, ""
	}
	if inProject == nil {
		inProject = func(f string) bool { return !filepath.IsAbs(f) }
	}
	if inProject(e.File) {
		return Project, ""
	}
	return Other, ""
}

// inlineAsmNote reports whether clang's notes on the error (up to the
// next diagnostic) point into inline assembly.
func inlineAsmNote(rest []string) bool {
	for _, l := range rest {
		if strings.HasPrefix(l, "<inline asm>:") {
			return true
		}
		if located.MatchString(l) || strings.Contains(l, ": warning: ") {
			return false
		}
	}
	return false
}

// InRoots is an inProject for First: a relative path, or one under one of
// the directories.
func InRoots(roots ...string) func(string) bool {
	return func(f string) bool {
		if !filepath.IsAbs(f) {
			return true
		}
		for _, r := range roots {
			if r == "" {
				continue
			}
			if rel, err := filepath.Rel(r, f); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return true
			}
		}
		return false
	}
}
