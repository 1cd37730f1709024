package hipify

import (
	"bytes"
	_ "embed"
	"sort"
	"strconv"
	"strings"
)

// CompatHeaderName is the name of rocmk's compatibility header: CUDA device
// APIs that the targeted HIP lacks (SIMD-in-word intrinsics, the bf16 and
// fp8 APIs, __hmax on __half, __trap, ...), implemented to CUDA's semantics.
// A translated file that uses some of them asks for those pieces and
// includes the header; hipify writes it beside the output (or at the root
// of an output tree), and rocmk build puts the embedded copy on the include path.
const CompatHeaderName = "rocmk_hip_compat.h"

//go:embed compat/rocmk_hip_compat.h
var compatHeader []byte

// compatMarker starts the header: how rocmk tells its own file from a user's.
var compatMarker = []byte("// rocmk_hip_compat.h: CUDA device APIs that the targeted HIP lacks")

// CompatHeader returns the compatibility header rocmk ships.
func CompatHeader() []byte { return bytes.Clone(compatHeader) }

// IsCompatHeader reports whether data is a compatibility header written by
// rocmk (any version), which rocmk may overwrite.
func IsCompatHeader(data []byte) bool { return bytes.HasPrefix(data, compatMarker) }

// compatPiece is one independently enabled part of the header.
type compatPiece struct {
	name  string
	macro string // defined before the include to enable the piece
	// idents are the identifiers the piece provides (CUDA's names, and the
	// names the translation writes for them), with the first HIP version
	// that has each natively (zero: none that rocmk knows of).
	idents map[string]Version
	// with, when set, restricts the piece to files that also use one of
	// these identifiers (overloads on a type: __shfl of a __half).
	with []string
	// native is the first HIP version that has the whole piece; the piece is
	// not needed from there on, whatever idents say.
	native Version
	needs  []string
	// guarded: the header leaves out each function whose ROCMK_HAS_<name>
	// is defined, so the project's own definition of a name wins.
	guarded bool
}

var (
	halfTypes16 = []string{"__half", "__half2", "half", "half2"}
	bf16Types   = []string{"__nv_bfloat16", "nv_bfloat16", "__nv_bfloat162", "nv_bfloat162", "__hip_bfloat16", "__hip_bfloat162"}
	v55         = Version{5, 5, 0}
	v60         = Version{Major: 6}
)

func names(v Version, ns ...string) map[string]Version {
	m := make(map[string]Version, len(ns))
	for _, n := range ns {
		m[n] = v
	}
	return m
}

// simdNames are CUDA's SIMD-in-word intrinsics: every op has a 2 x 16-bit
// and a 4 x 8-bit form.
func simdNames() []string {
	var ns []string
	for _, op := range []string{"abs", "absss", "absdiffs", "absdiffu", "add", "addss", "addus", "avgs", "avgu", "hadd" + "u",
		"cmpeq", "cmpges", "cmpgeu", "cmpgts", "cmpgtu", "cmples", "cmpleu", "cmplts", "cmpltu", "cmpne",
		"maxs", "maxu", "mins", "minu", "neg", "negss", "sads", "sadu",
		"seteq", "setges", "setgeu", "setgts", "setgtu", "setles", "setleu", "setlts", "setltu", "setne",
		"sub", "subss", "subus"} {
		ns = append(ns, "__v"+op+"2", "__v"+op+"4")
	}
	return ns
}

var compatPieces = []*compatPiece{
	{name: "cuda-arch", macro: "ROCMK_COMPAT_CUDA_ARCH", idents: names(Version{}, "ROCMK_CUDA_ARCH")},
	{name: "vsimd", macro: "ROCMK_COMPAT_VSIMD", guarded: true, idents: names(Version{}, simdNames()...)},
	{name: "hmaxmin", macro: "ROCMK_COMPAT_HMAXMIN", idents: mergeNames(names(v55, "__hmax", "__hmin"),
		names(Version{}, "__hmax_nan", "__hmin_nan", "__hmax2", "__hmin2", "__hmax2_nan", "__hmin2_nan"))},
	{name: "half-shfl", macro: "ROCMK_COMPAT_HALF_SHFL", with: halfTypes16,
		idents: names(Version{5, 6, 0}, "__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync")},
	// HIP 6 has only the _sync forms on bf16 (before 6 the bf16 piece has them all)
	{name: "bf16-shfl", macro: "ROCMK_COMPAT_BF16_SHFL", with: bf16Types,
		idents: names(Version{}, "__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync")},
	{name: "atomic16", macro: "ROCMK_COMPAT_ATOMIC16", with: halfTypes16, idents: names(Version{}, "atomicAdd")},
	// HIP 6 has most of CUDA's bf16 API (hip_bf16.h); HIP 6.4 still lacks
	// the rounding-mode and integer conversions and make_bfloat162, which
	// the header provides there on __hip_bfloat16 (compiled against 6.4).
	{name: "bf16", macro: "ROCMK_COMPAT_BF16", idents: mergeNames(names(v60,
		"__nv_bfloat16", "nv_bfloat16", "__nv_bfloat162", "nv_bfloat162", "__nv_bfloat16_raw", "__nv_bfloat162_raw",
		"hip_bfloat16", "__hip_bfloat16", "__hip_bfloat162", "__hip_bfloat16_raw", "__hip_bfloat162_raw",
		"__bfloat162float", "__float2bfloat16", "__double2bfloat16",
		"__bfloat16_as_short", "__bfloat16_as_ushort", "__short_as_bfloat16", "__ushort_as_bfloat16",
		"__halves2bfloat162", "__bfloat162bfloat162",
		"__float22bfloat162_rn", "__bfloat1622float2", "__low2bfloat16", "__high2bfloat16", "__low2bfloat162", "__high2bfloat162",
		"__lows2bfloat162", "__highs2bfloat162"), names(Version{},
		"__float2bfloat16_rn", "__float2bfloat16_rz", "__float2bfloat16_ru", "__float2bfloat16_rd",
		"__int2bfloat16_rn", "__uint2bfloat16_rn", "__short2bfloat16_rn", "__ushort2bfloat16_rn",
		"make_bfloat162", "__float2bfloat162_rn", "__floats2bfloat162_rn"))},
	{name: "fp8", macro: "ROCMK_COMPAT_FP8", needs: []string{"bf16"}, idents: names(Version{},
		"__nv_fp8_e4m3", "__nv_fp8_e5m2", "__nv_fp8x2_e4m3", "__nv_fp8x2_e5m2", "__nv_fp8x4_e4m3", "__nv_fp8x4_e5m2",
		"__nv_fp8_storage_t", "__nv_fp8x2_storage_t", "__nv_fp8x4_storage_t", "__nv_saturation_t", "__nv_fp8_interpretation_t",
		"__NV_NOSAT", "__NV_SATFINITE", "__NV_E4M3", "__NV_E5M2",
		"__nv_cvt_double_to_fp8", "__nv_cvt_float_to_fp8", "__nv_cvt_double2_to_fp8x2", "__nv_cvt_float2_to_fp8x2",
		"__nv_cvt_halfraw_to_fp8", "__nv_cvt_halfraw2_to_fp8x2", "__nv_cvt_bfloat16raw_to_fp8", "__nv_cvt_bfloat16raw2_to_fp8x2",
		"__nv_cvt_fp8_to_halfraw", "__nv_cvt_fp8x2_to_halfraw2")},
	{name: "trap", macro: "ROCMK_COMPAT_TRAP", guarded: true, idents: names(Version{}, "__trap", "__brkpt")},
	{name: "dp4a", macro: "ROCMK_COMPAT_DP4A", guarded: true, idents: names(Version{}, "__dp4a", "__dp2a_lo", "__dp2a_hi")},
	{name: "reduce", macro: "ROCMK_COMPAT_REDUCE", idents: names(Version{}, "__reduce_add_sync", "__reduce_min_sync",
		"__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync")},
	{name: "cvta", macro: "ROCMK_COMPAT_CVTA", idents: names(Version{},
		"__cvta_generic_to_shared", "__cvta_shared_to_generic", "__cvta_generic_to_global", "__cvta_global_to_generic",
		"__cvta_generic_to_constant", "__cvta_constant_to_generic", "__cvta_generic_to_local", "__cvta_local_to_generic")},
	{name: "ldg", macro: "ROCMK_COMPAT_LDG", with: append([]string{"ushort4"}, bf16Types...), idents: names(Version{}, "__ldg")},
	{name: "atomic-int", macro: "ROCMK_COMPAT_ATOMIC_INT", with: []string{"short", "long"}, idents: names(Version{}, "atomicCAS", "atomicMax", "atomicMin")},
	{name: "coords", macro: "ROCMK_COMPAT_COORDS", with: []string{"blockDim", "gridDim", "threadIdx", "blockIdx"}, idents: names(Version{}, "min", "max")},
	{name: "ldst", macro: "ROCMK_COMPAT_LDST", idents: names(Version{}, "__ldcs", "__ldcg", "__ldca", "__ldlu", "__ldcv",
		"__stcs", "__stcg", "__stwb", "__stwt")},
	{name: "hostmath", macro: "ROCMK_COMPAT_HOSTMATH", idents: names(Version{}, "isfinite", "isnan", "isinf", "signbit")},
	// CUDA 13's location forms: overloads, for files that name the type
	{name: "memloc", macro: "ROCMK_COMPAT_MEMLOC", with: []string{"cudaMemLocation", "CUmemLocation", "CUmemLocation_st", "CUmemLocation_v1", "hipMemLocation"},
		idents: names(Version{}, "hipMemAdvise", "hipMemPrefetchAsync", "cudaMemLocationTypeHost", "rocmk_hipMemLocationTypeHost")},
	{name: "graphics", macro: "ROCMK_COMPAT_GRAPHICS",
		idents: names(Version{}, "cudaGraphicsResourceSetMapFlags", "rocmk_hipGraphicsResourceSetMapFlags")},
	{name: "hip-macros", macro: "ROCMK_COMPAT_HIP_MACROS", idents: names(Version{}, "MASK1", "MASK2")},
	{name: "ptx", macro: "ROCMK_COMPAT_PTX", idents: names(Version{}, ptxFuncs...)},
	// cooperative_groups/reduce.h asks for it too (compatHeaders); HIP 6.4
	// has binary_partition (5.2 does not)
	{name: "cg", macro: "ROCMK_COMPAT_CG", with: []string{"cooperative_groups"}, idents: mergeNames(
		names(Version{}, "labeled_partition"), names(Version{6, 4, 0}, "binary_partition"))},
	// what warpSize in a constant expression becomes (warpsize.go)
	{name: "warpsize", macro: "ROCMK_COMPAT_WARPSIZE", idents: names(Version{}, "ROCMK_WARP_SIZE", "ROCMK_DEVICE_STATIC_ASSERT")},
}

func mergeNames(ms ...map[string]Version) map[string]Version {
	out := map[string]Version{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// compatHeaders are CUDA headers whose API is a piece of the compat header:
// their include is dropped and asks for the piece.
var compatHeaders = map[string]string{"cooperative_groups/reduce.h": "cg"}

var (
	compatByName  = map[string]*compatPiece{}
	compatByIdent = map[string][]*compatPiece{}
)

func init() {
	for _, p := range compatPieces {
		compatByName[p.name] = p
		for id := range p.idents {
			compatByIdent[id] = append(compatByIdent[id], p)
		}
	}
}

// CompatPieces lists the names of the pieces of the compatibility header.
func CompatPieces() []string {
	ns := make([]string, len(compatPieces))
	for i, p := range compatPieces {
		ns[i] = p.name
	}
	return ns
}

// compatRenames are CUDA names the compatibility layer provides under HIP 6's
// name (which the translation writes, so the code reads the same on a HIP
// that has them natively).
var compatRenames = map[string]string{
	"__nv_bfloat16":      "__hip_bfloat16",
	"nv_bfloat16":        "__hip_bfloat16",
	"__nv_bfloat162":     "__hip_bfloat162",
	"nv_bfloat162":       "__hip_bfloat162",
	"__nv_bfloat16_raw":  "__hip_bfloat16_raw",
	"__nv_bfloat162_raw": "__hip_bfloat162_raw",
	// HIP names no host location (the memloc piece's value)
	"cudaMemLocationTypeHost": "rocmk_hipMemLocationTypeHost",
	// HIP has no cudaGraphicsResourceSetMapFlags (the graphics piece's)
	"cudaGraphicsResourceSetMapFlags": "rocmk_hipGraphicsResourceSetMapFlags",
}

// compatFor returns the pieces that provide name to a file targeting hv
// (nil when HIP has it natively, or compat is off).
func (f *file) compatFor(name string) []*compatPiece {
	if f.opt.NoCompat {
		return nil
	}
	has := func(since Version) bool { // the target HIP has it natively; zero target: the newest HIP
		return !since.IsZero() && (f.opt.HIPVersion.IsZero() || !f.opt.HIPVersion.Less(since))
	}
	var ps []*compatPiece
	for _, p := range compatByIdent[name] {
		if !has(p.native) && !has(p.idents[name]) {
			ps = append(ps, p)
		}
	}
	return ps
}

// useCompat records that the file needs the pieces providing name, and
// reports whether there were any. A file that defines one of a piece's
// names itself (its own __vsubss4 for HIP) does not get that piece; a name
// a file it includes defines (Options.ProjectDefines) asks for nothing.
func (t *pass) useCompat(name string) bool {
	ps := t.compatFor(name)
	if t.opt.ProjectDefines[name] {
		return len(ps) > 0
	}
	for _, p := range ps {
		if len(p.with) > 0 && !t.mentionsAny(p.with) || t.definesPiece(p) {
			continue
		}
		t.needCompat(p)
	}
	return len(ps) > 0
}

// definesPiece reports whether the file defines (as a function or a macro)
// one of the names the piece provides.
func (f *file) definesPiece(p *compatPiece) bool {
	for id := range p.idents {
		if f.defines[id] {
			return true
		}
	}
	return false
}

// definesAt reports whether the identifier at i is defined there: the name
// of a #define, or of a function definition.
func (f *file) definesAt(i int) bool {
	tk := &f.toks[i]
	if tk.pp == "define" && !tk.inDefn {
		return true
	}
	if tk.pp != "" || f.isMember(i) {
		return false
	}
	pr := f.prev(i)
	if pr < 0 || !(f.toks[pr].kind == IDENT || f.isPunct(pr, "*") || f.isPunct(pr, "&") || f.isPunct(pr, ">")) {
		return false
	}
	o := f.next(i)
	if !f.isPunct(o, "(") {
		return false
	}
	c := f.matching(o)
	if c < 0 {
		return false
	}
	n := f.next(c)
	for n < len(f.toks) && f.toks[n].kind == IDENT && (f.toks[n].lit == "const" || f.toks[n].lit == "noexcept") {
		n = f.next(n)
	}
	return f.isPunct(n, "{")
}

// compatWith are the identifiers the pieces' with lists name (file.idents).
var compatWith = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range compatPieces {
		for _, id := range p.with {
			m[id] = true
		}
	}
	return m
}()

// mentionsAny reports whether the file names one of the identifiers (of a
// with list).
func (f *file) mentionsAny(ids []string) bool {
	for _, id := range ids {
		if f.idents[id] {
			return true
		}
	}
	return false
}

// compatBlock is the text that enables the file's pieces and includes the
// header (or the header itself, inlined).
func compatBlock(f *file, o *out) string {
	var pieces []string
	for n := range o.compat {
		pieces = append(pieces, n)
	}
	sort.Strings(pieces)
	o.rep.Compat = pieces
	var b strings.Builder
	b.WriteString(projectHas(f, pieces))
	for _, n := range pieces {
		p := compatByName[n]
		v := "1"
		if n == "cuda-arch" {
			v = strconv.Itoa(f.cudaArch())
		}
		b.WriteString("#define " + p.macro + " " + v + "\n")
	}
	if f.opt.CompatInline {
		b.WriteString(compatInlineBegin + "\n")
		b.Write(compatHeader)
		b.WriteString(compatInlineEnd + "\n")
		return b.String()
	}
	inc := f.opt.CompatInclude
	if inc == "" {
		inc = CompatHeaderName
	}
	b.WriteString("#include \"" + inc + "\"\n")
	return b.String()
}

// projectHas defines ROCMK_HAS_<name> for the names of the guarded pieces
// that the project defines itself, so the header leaves them out whichever
// comes first in the translation unit.
func projectHas(f *file, pieces []string) string {
	var ns []string
	for _, n := range pieces {
		if p := compatByName[n]; p.guarded {
			for id := range p.idents {
				if f.opt.ProjectDefines[id] {
					ns = append(ns, id)
				}
			}
		}
	}
	sort.Strings(ns)
	var b strings.Builder
	for _, id := range ns {
		b.WriteString("#define ROCMK_HAS_" + id + " 1\n")
	}
	return b.String()
}

const (
	compatInlineBegin = "// rocmk-compat: begin (rocmk_hip_compat.h inlined)"
	compatInlineEnd   = "// rocmk-compat: end"
)
