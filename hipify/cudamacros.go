package hipify

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MacroPolicy is how the translation treats CUDA's predefined, version and
// header-guard macros (__CUDA_ARCH__, CUDART_VERSION, __DRIVER_TYPES_H__...):
// none of them is defined under HIP, so left alone they silently switch off
// the code they guard (helpers, and f16/bf16 kernel instances).
type MacroPolicy int

const (
	// MacrosMap (the default) maps each to what holds on the HIP side:
	// header guards to the guards of the HIP headers the translation
	// includes, defined(__CUDA_ARCH__) to defined(__HIP_DEVICE_COMPILE__),
	// comparisons of __CUDA_ARCH__ to what they are for device code of
	// Options.CUDAArch and for host code, and version macros to
	// Options.CUDAVersion.
	MacrosMap MacroPolicy = iota
	// MacrosKeep leaves them as they are; every use is still reported.
	MacrosKeep
)

// ParseMacroPolicy parses "map" or "keep".
func ParseMacroPolicy(s string) (MacroPolicy, bool) {
	switch s {
	case "map", "":
		return MacrosMap, true
	case "keep":
		return MacrosKeep, true
	}
	return 0, false
}

func (p MacroPolicy) String() string {
	if p == MacrosKeep {
		return "keep"
	}
	return "map"
}

// Defaults for Options.CUDAArch and Options.CUDAVersion.
const DefaultCUDAArch = 800

// DefaultCUDAVersion is the CUDA toolkit that version tests are evaluated as.
var DefaultCUDAVersion = Version{Major: 12}

// ParseCUDAArch parses sm_80, compute_80, 80 or 800 into __CUDA_ARCH__'s value (800).
// With the sm_ or compute_ prefix the number is the SM version (sm_100 is
// 1000); without it, numbers below 100 are too.
func ParseCUDAArch(s string) (int, bool) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "sm_"), "compute_")
	sm := t != s
	t = strings.TrimRight(t, "af") // sm_90a, sm_100f
	n, err := strconv.Atoi(t)
	switch {
	case err != nil || n <= 0 || n >= 10000 || sm && n >= 1000:
		return 0, false
	case sm || n < 100:
		return n * 10, true
	}
	return n, true
}

func (f *file) cudaArch() int {
	if f.opt.CUDAArch > 0 {
		return f.opt.CUDAArch
	}
	return DefaultCUDAArch
}

func (f *file) cudaVersion() Version {
	if !f.opt.CUDAVersion.IsZero() {
		return f.opt.CUDAVersion
	}
	return DefaultCUDAVersion
}

// macroKind classifies the CUDA macros the policy knows.
type macroKind int

const (
	notCUDAMacro    macroKind = iota
	archMacro                 // __CUDA_ARCH__
	versionMacro              // CUDART_VERSION, __CUDACC_VER_MAJOR__, ...
	guardMacro                // include guards (and macros) of CUDA's headers
	compilerMacro             // __CUDACC__, __NVCC__, __CUDACC_RTC__, ...
	rocmSwitchMacro           // USE_ROCM, GGML_USE_HIP: the project's own "building for ROCm"
)

// DefaultROCmSwitches are the macros projects define themselves when they
// build their CUDA code for ROCm, guarding the code they wrote for AMD:
// PyTorch's extension builder passes -DUSE_ROCM=1 (vLLM, SGLang, FlashInfer
// and mistral.rs test it), ggml's HIP build GGML_USE_HIP (GGML_USE_HIPBLAS
// before). Translated code is HIP code, so those branches are the ones to
// take; left alone, the CUDA branch (inline PTX, __ldg...) is compiled.
var DefaultROCmSwitches = []string{"USE_ROCM", "GGML_USE_HIP", "GGML_USE_HIPBLAS"}

// ParseROCmSwitches reads --rocm-switch values: macro names, or "none"
// alone for no switch at all. No values keeps the defaults (nil).
func ParseROCmSwitches(list []string) ([]string, error) {
	if len(list) == 1 && list[0] == "none" {
		return []string{}, nil
	}
	for _, name := range list {
		for i, r := range name {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
				return nil, fmt.Errorf("%q: want a macro name (or none)", name)
			}
		}
		if name == "" {
			return nil, errors.New(`"": want a macro name (or none)`)
		}
	}
	return list, nil
}

// hipLanguage is what clang predefines for HIP code, host and device pass
// (hipcc on Debian does not define __HIP_PLATFORM_AMD__ before a HIP
// header is included; nvcc, HIP's NVIDIA path, defines neither).
const hipLanguage = "__HIP__"

// cudaGuards maps the include guards of CUDA's headers (and macros those
// headers define that code tests the same way) to the guard of the HIP
// header the translation includes instead; "" when HIP has none, so the
// branch stays inactive (reported).
var cudaGuards = map[string]string{
	"__CUDA_RUNTIME_H__":       "HIP_INCLUDE_HIP_HIP_RUNTIME_H",
	"__cuda_cuda_h__":          "HIP_INCLUDE_HIP_HIP_RUNTIME_H", // cuda.h becomes hip_runtime.h
	"__CUDA_RUNTIME_API_H__":   "HIP_INCLUDE_HIP_HIP_RUNTIME_API_H",
	"__DRIVER_TYPES_H__":       "HIP_INCLUDE_HIP_DRIVER_TYPES_H",
	"__VECTOR_TYPES_H__":       "HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H",
	"__CUDA_FP16_H__":          "HIP_INCLUDE_HIP_HIP_FP16_H",
	"__CUDA_FP16_HPP__":        "HIP_INCLUDE_HIP_HIP_FP16_H",
	"__CUDA_BF16_H__":          "", // by HIP version: see guardFor
	"__CUDA_BF16_HPP__":        "",
	"CU_COMPLEX_H_":            "HIP_INCLUDE_HIP_HIP_COMPLEX_H",
	"__TEXTURE_TYPES_H__":      "HIP_INCLUDE_HIP_TEXTURE_TYPES_H",
	"__SURFACE_TYPES_H__":      "HIP_INCLUDE_HIP_SURFACE_TYPES_H",
	"__CHANNEL_DESCRIPTOR_H__": "HIP_INCLUDE_HIP_CHANNEL_DESCRIPTOR_H",
	"__LIBRARY_TYPES_H__":      "HIP_INCLUDE_HIP_LIBRARY_TYPES_H",
	"__DEVICE_FUNCTIONS_H__":   "HIP_INCLUDE_HIP_DEVICE_FUNCTIONS_H",
	"_COOPERATIVE_GROUPS_H_":   "HIP_INCLUDE_HIP_HIP_COOPERATIVE_GROUP_H",
	"CUBLAS_API_H_":            "HIPBLAS_H",
	"CUBLAS_V2_H_":             "HIPBLAS_H",
	"CUBLAS_H_":                "HIPBLAS_H",
	"_CUFFT_H_":                "HIPFFT_H_",
	"CURAND_H_":                "HIPRAND_H_",
	"CUSPARSE_H_":              "HIPSPARSE_H",
	"CUSOLVER_COMMON_H_":       "HIPSOLVER_H",
	"CUSOLVERDN_H_":            "HIPSOLVER_H",
	"__CUDA_FP8_H__":           "",
	"__NVRTC_H__":              "",
	"CUSPARSEAPI":              "HIPSPARSE_H", // cusparse.h's API macro, tested as "cuSPARSE is included"
	"NVJPEGAPI":                "",
	"NV_NPPIDEFS_H":            "",
}

// compilerMacros maps the macros nvcc predefines to clang's for HIP ("":
// none, the branch is inactive under HIP).
var compilerMacros = map[string]string{
	"__CUDACC__":         "__HIPCC__",
	"__CUDACC_RTC__":     "__HIPCC_RTC__",
	"__CUDACC_RDC__":     "__CLANG_RDC__",
	"__NVCC__":           "",
	"__CUDA_ARCH_LIST__": "",
}

// classify is classifyMacro plus the project's ROCm switches.
func (f *file) classify(name string) macroKind {
	if k := classifyMacro(name); k != notCUDAMacro {
		return k
	}
	if slices.Contains(f.rocmSwitches(), name) {
		return rocmSwitchMacro
	}
	return notCUDAMacro
}

// rocmSwitches are the options' ROCm switches, or the defaults.
func (f *file) rocmSwitches() []string {
	if f.opt.ROCmSwitches != nil {
		return f.opt.ROCmSwitches
	}
	return DefaultROCmSwitches
}

func classifyMacro(name string) macroKind {
	switch name {
	case "__CUDA_ARCH__":
		return archMacro
	case "CUDART_VERSION", "CUDA_VERSION", "__CUDART_API_VERSION", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__":
		return versionMacro
	}
	if _, ok := cudaGuards[name]; ok {
		return guardMacro
	}
	if _, ok := compilerMacros[name]; ok {
		return compilerMacro
	}
	return notCUDAMacro
}

// guardFor returns the HIP guard for a CUDA guard ("" when none).
func (f *file) guardFor(name string) string {
	if name == "__CUDA_BF16_H__" || name == "__CUDA_BF16_HPP__" {
		if hv := f.opt.HIPVersion; !hv.IsZero() && hv.Less(v60) {
			return "_HIP_BFLOAT16_H_" // hip/hip_bfloat16.h
		}
		return "_HIP_INCLUDE_HIP_AMD_DETAIL_HIP_BF16_H_"
	}
	if g, ok := cudaGuards[name]; ok {
		return g
	}
	return compilerMacros[name]
}

// versionValue is the value a CUDA version macro takes under the mapping.
func (f *file) versionValue(name string) string {
	v := f.cudaVersion()
	switch name {
	case "__CUDACC_VER_MAJOR__":
		return strconv.Itoa(v.Major)
	case "__CUDACC_VER_MINOR__":
		return strconv.Itoa(v.Minor)
	case "__CUDACC_VER_BUILD__":
		return "0"
	}
	return strconv.Itoa(v.Major*1000 + v.Minor*10)
}

const hipDevice = "__HIP_DEVICE_COMPILE__"

// macroEdit is one replacement inside a directive.
type macroEdit struct {
	start, end int
	text       string
}

// macroPass maps (or, under MacrosKeep, only reports) the CUDA macros in
// the file's conditionals. Besides its edits it returns the tokens it
// handled, which the token pass leaves alone.
type macroPass struct {
	pass
	handled map[int]bool

	kept         map[int]keptBranch // conditionals whose CUDA branch is kept (rocmbranch.go)
	cudaSide     string             // the includer whose kept CUDA branch this file is
	cudaSideLine int
}

// cudaMacros runs the macro pass over every active #if, #ifdef, #ifndef
// and #elif of the file.
func cudaMacros(f *file, o *out) ([]edit, map[int]bool) {
	t := &macroPass{pass: pass{file: f, o: o}, handled: map[int]bool{}}
	for i := 0; i < len(f.toks); i++ {
		tk := &f.toks[i]
		if tk.kind != HASH || tk.skip {
			continue
		}
		switch tk.lit {
		case "#if", "#elif", "#ifdef", "#ifndef", "#elifdef", "#elifndef":
		default:
			continue
		}
		end := i + 1
		for end < len(f.toks) && f.toks[end].kind != PPEND {
			end++
		}
		t.cudaConditional(i, end)
		i = end
	}
	return t.edits, t.handled
}

func (t *macroPass) cudaConditional(h, end int) {
	var args []int
	// a conditional that tests __HIP__ already decides for HIP (and stays
	// idempotent); the text is searched too, as a broken literal hides names
	testsHIP := bytes.Contains(t.src[t.toks[h].pos.Offset:t.directiveEnd(end)], []byte(hipLanguage))
	for j := h + 1; j < end; j++ {
		if t.toks[j].kind != COMMENT {
			args = append(args, j)
		}
	}
	kind := notCUDAMacro
	for _, j := range args {
		if t.toks[j].kind == IDENT {
			if k := t.classifyIn(t.toks[j].lit, testsHIP); k != notCUDAMacro && (kind == notCUDAMacro || k < kind) {
				kind = k
			}
		}
	}
	if kind == notCUDAMacro || len(args) == 0 {
		return
	}
	code := map[macroKind]string{archMacro: "cuda-arch", versionMacro: "cuda-version", guardMacro: "cuda-guard", compilerMacro: "cuda-compiler",
		rocmSwitchMacro: "rocm-switch"}[kind]
	last := args[len(args)-1]
	orig := string(t.src[t.toks[h].pos.Offset:t.endOf(last)])
	if kind == rocmSwitchMacro && t.opt.CUDAMacros == MacrosMap && t.keepCUDABranch(h, orig) {
		for _, j := range args {
			t.handled[j] = true
		}
		return
	}
	if t.opt.CUDAMacros == MacrosKeep {
		for _, j := range args {
			t.handled[j] = true
		}
		why := "CUDA's macros are never defined under HIP"
		if kind == rocmSwitchMacro {
			why = "the project's ROCm switch holds only where its build defines it"
		}
		t.diag(t.toks[h].pos, SevConditional, code, "", "`"+orig+"` left as is (--cuda-macros keep): "+why)
		return
	}
	var edits []macroEdit
	var notes []string
	switch dir := t.toks[h].lit; dir {
	case "#ifdef", "#ifndef", "#elifdef", "#elifndef":
		var ok bool
		if edits, notes, ok = t.ifdefEdits(h, dir, args[0], testsHIP); !ok {
			return
		}
	default:
		edits, notes = t.ifEdits(args, testsHIP)
	}
	t.applyConditional(h, args, code, orig, edits, notes)
}

// classifyIn classifies a macro named in a conditional: a ROCm switch in
// one that tests __HIP__ (testsHIP) is no CUDA macro there.
func (f *file) classifyIn(name string, testsHIP bool) macroKind {
	if k := f.classify(name); k != rocmSwitchMacro || !testsHIP {
		return k
	}
	return notCUDAMacro
}

// ifdefEdits maps the macro (token a) of the #ifdef-like directive dir at
// token h; ok is false when a is no identifier.
func (t *macroPass) ifdefEdits(h int, dir string, a int, testsHIP bool) (edits []macroEdit, notes []string, ok bool) {
	x := &t.toks[a]
	if x.kind != IDENT {
		return nil, nil, false
	}
	switch t.classifyIn(x.lit, testsHIP) {
	case archMacro:
		edits = append(edits, macroEdit{x.pos.Offset, t.endOf(a), hipDevice})
	case rocmSwitchMacro:
		kw, text := "#if", "defined("+x.lit+") || defined("+hipLanguage+")"
		if strings.HasPrefix(dir, "#el") {
			kw = "#elif"
		}
		if dir == "#ifndef" || dir == "#elifndef" {
			text = "!defined(" + x.lit + ") && !defined(" + hipLanguage + ")"
		}
		edits = append(edits, macroEdit{t.toks[h].pos.Offset, t.endOf(a), kw + " " + text})
	case versionMacro:
		neg := dir == "#ifndef" || dir == "#elifndef"
		val, cond, kw := "1", "defined(", "#if"
		if neg {
			val, cond = "0", "!defined("
		}
		if strings.HasPrefix(dir, "#el") {
			kw = "#elif"
		}
		edits = append(edits, macroEdit{t.toks[h].pos.Offset, t.endOf(a), kw + " " + val + " /* " + cond + x.lit + ") */"})
	default:
		if g := t.guardFor(x.lit); g != "" {
			edits = append(edits, macroEdit{x.pos.Offset, t.endOf(a), g})
		} else {
			notes = append(notes, x.lit+" has no HIP equivalent: the branch is inactive under HIP")
		}
	}
	t.handled[a] = true
	return edits, notes, true
}

// ifEdits maps the CUDA macros, and the defined(...) of them, in the
// condition (tokens args) of an #if or #elif.
func (t *macroPass) ifEdits(args []int, testsHIP bool) (edits []macroEdit, notes []string) {
	for k := 0; k < len(args); k++ {
		j := args[k]
		x := &t.toks[j]
		if x.kind != IDENT {
			continue
		}
		if x.lit == "defined" {
			// defined X / defined(X)
			n, paren := k+1, false
			if n < len(args) && t.isPunct(args[n], "(") {
				n, paren = n+1, true
			}
			if n >= len(args) || t.toks[args[n]].kind != IDENT {
				continue
			}
			y := &t.toks[args[n]]
			closeIdx := n
			if paren {
				if n+1 >= len(args) || !t.isPunct(args[n+1], ")") {
					continue
				}
				closeIdx = n + 1
			}
			switch t.classifyIn(y.lit, testsHIP) {
			case archMacro:
				edits = append(edits, macroEdit{y.pos.Offset, t.endOf(args[n]), hipDevice})
			case rocmSwitchMacro:
				edits = append(edits, macroEdit{x.pos.Offset, t.endOf(args[closeIdx]), "(defined(" + y.lit + ") || defined(" + hipLanguage + "))"})
			case versionMacro:
				edits = append(edits, macroEdit{x.pos.Offset, t.endOf(args[closeIdx]), "1 /* defined(" + y.lit + ") */"})
			case guardMacro, compilerMacro:
				if g := t.guardFor(y.lit); g != "" {
					edits = append(edits, macroEdit{y.pos.Offset, t.endOf(args[n]), g})
				} else {
					notes = append(notes, y.lit+" has no HIP equivalent: false under HIP")
				}
			}
			t.handled[args[n]] = true
			k = closeIdx
			continue
		}
		switch t.classifyIn(x.lit, testsHIP) {
		case rocmSwitchMacro:
			edits = append(edits, macroEdit{x.pos.Offset, t.endOf(j), "(defined(" + hipLanguage + ") || " + x.lit + ")"})
		case archMacro:
			if e, n, ok := t.foldArch(args, k); ok {
				edits = append(edits, e)
				k = n
				continue
			}
			if t.opt.NoCompat {
				notes = append(notes, "__CUDA_ARCH__ kept (--no-compat): it is 0 under HIP")
				break
			}
			edits = append(edits, macroEdit{x.pos.Offset, t.endOf(j), "ROCMK_CUDA_ARCH"})
			t.needCompat(compatByName["cuda-arch"])
		case versionMacro:
			edits = append(edits, macroEdit{x.pos.Offset, t.endOf(j), t.versionValue(x.lit) + " /* " + x.lit + " */"})
		case guardMacro, compilerMacro:
			if g := t.guardFor(x.lit); g != "" {
				edits = append(edits, macroEdit{x.pos.Offset, t.endOf(j), g})
			} else {
				notes = append(notes, x.lit+" has no HIP equivalent: 0 under HIP")
			}
		}
		t.handled[j] = true
	}
	return edits, notes
}

// applyConditional makes the edits of the conditional at token h (its
// condition tokens args, its text orig) and reports them and the notes.
func (t *macroPass) applyConditional(h int, args []int, code, orig string, edits []macroEdit, notes []string) {
	msg := "`" + orig + "`"
	if len(edits) > 0 {
		var b strings.Builder
		last := t.toks[h].pos.Offset
		for _, e := range edits {
			b.Write(t.src[last:e.start])
			b.WriteString(e.text)
			last = e.end
			t.addEdit(e.start, e.end, e.text)
		}
		b.Write(t.src[last:t.endOf(args[len(args)-1])])
		msg += " -> `" + b.String() + "`"
	}
	if len(notes) > 0 {
		msg += ": " + strings.Join(notes, "; ")
	}
	t.diag(t.toks[h].pos, SevConditional, code, "", msg)
}

// foldArch folds `__CUDA_ARCH__ op N` (or `N op __CUDA_ARCH__`) at args[k]
// when it is a whole operand: it is what it is for device code of the
// chosen arch and for host code (where __CUDA_ARCH__ is undefined: 0).
func (t *macroPass) foldArch(args []int, k int) (macroEdit, int, bool) {
	isDelim := func(idx int) bool {
		if idx < 0 || idx >= len(args) {
			return true
		}
		tk := &t.toks[args[idx]]
		return tk.kind == PUNCT && (tk.lit == "(" || tk.lit == ")" || tk.lit == "&&" || tk.lit == "||" || tk.lit == "?" || tk.lit == ":")
	}
	cmp := func(a int64, op string, b int64) (bool, bool) {
		switch op {
		case "<":
			return a < b, true
		case "<=":
			return a <= b, true
		case ">":
			return a > b, true
		case ">=":
			return a >= b, true
		case "==":
			return a == b, true
		case "!=":
			return a != b, true
		}
		return false, false
	}
	flip := map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
	num := func(idx int) (int64, bool) {
		if idx < 0 || idx >= len(args) || t.toks[args[idx]].kind != NUMBER {
			return 0, false
		}
		bad := false
		v := parseInt(t.toks[args[idx]].lit, &bad)
		return v, !bad
	}
	var first, lastIdx int
	var op string
	var n int64
	if v, ok := num(k + 2); ok && k+1 < len(args) && t.toks[args[k+1]].kind == PUNCT {
		first, lastIdx, op, n = k, k+2, t.toks[args[k+1]].lit, v
	} else if v, ok := num(k - 2); ok && k-1 >= 0 && t.toks[args[k-1]].kind == PUNCT {
		first, lastIdx, op, n = k-2, k, flip[t.toks[args[k-1]].lit], v
	} else {
		return macroEdit{}, 0, false
	}
	dev, ok1 := cmp(int64(t.cudaArch()), op, n)
	host, ok2 := cmp(0, op, n)
	if !ok1 || !ok2 || !isDelim(first-1) || !isDelim(lastIdx+1) {
		return macroEdit{}, 0, false
	}
	val := "0"
	switch {
	case dev && host:
		val = "1"
	case dev:
		val = "defined(" + hipDevice + ")"
	case host:
		val = "!defined(" + hipDevice + ")"
	}
	start, end := t.toks[args[first]].pos.Offset, t.endOf(args[lastIdx])
	for i := first; i <= lastIdx; i++ {
		t.handled[args[i]] = true
	}
	return macroEdit{start, end, val + " /* " + string(t.src[start:end]) + " */"}, lastIdx, true
}

// cudaMacroUse maps a CUDA macro outside a conditional (in a #define body or
// in code). It reports whether it handled the token.
func (t *pass) cudaMacroUse(i int) bool {
	tk := &t.toks[i]
	k := classifyMacro(tk.lit)
	if k != archMacro && k != versionMacro {
		return false
	}
	if tk.pp == "undef" || tk.pp == "define" && !tk.inDefn || t.isMember(i) {
		return true // the macro being (un)defined, or a member: not a use
	}
	if t.opt.CUDAMacros == MacrosKeep {
		t.diag(tk.pos, SevConditional, "cuda-macro", tk.lit, tk.lit+" left as is (--cuda-macros keep): never defined under HIP")
		return true
	}
	p := t.prev(i)
	if t.isPunct(p, "(") {
		p = t.prev(p)
	}
	afterDefined := p >= 0 && t.toks[p].kind == IDENT && t.toks[p].lit == "defined"
	var to string
	switch {
	case k == archMacro && afterDefined:
		to = hipDevice
	case k == archMacro && t.opt.NoCompat:
		t.diag(tk.pos, SevConditional, "cuda-arch", tk.lit, tk.lit+" kept (--no-compat): never defined under HIP")
		return true
	case k == archMacro:
		to = "ROCMK_CUDA_ARCH"
		t.needCompat(compatByName["cuda-arch"])
	case afterDefined:
		return true // defined(CUDART_VERSION) in a #define body: left alone
	default:
		to = t.versionValue(tk.lit)
	}
	t.addEdit(tk.pos.Offset, t.endOf(i), to)
	where := "code"
	if tk.pp != "" {
		where = "#" + tk.pp
	}
	code := "cuda-version"
	if k == archMacro {
		code = "cuda-arch"
	}
	t.diag(tk.pos, SevConditional, code, tk.lit, tk.lit+" in "+where+" -> "+to)
	return true
}
