package hipify

import (
	"bytes"
	"strconv"
	"strings"
)

// translateTokens runs the passes after the conditionals' (macros,
// handled: see cudaMacros) up to the compat block. It returns the edit
// list, the insertions no enclosing edit may consume (fixed) and the asm
// statements translatePTX replaced. A launch macro's expansion runs
// through it too (expandLaunchMacros).
func translateTokens(f *file, macros []edit, handled map[int]bool, o *out) (es *editList, fixed []edit, ptxDone map[int]bool) {
	incs, fixed, anchor := includes(f, o)
	toks, perms := tokenPass(f, handled, o)
	es = &editList{edits: append(append(macros, incs...), toks...)}
	es.sort()
	es.merge(applyPerms(f, es, perms, o))
	if f.opt.KernelExecutionSyntax {
		es.merge(expandLaunchMacros(f, es, o))
		es.merge(launches(f, es, o))
	}
	ptx, ptxDone := translatePTX(f, es, o)
	es.merge(ptx)
	fixed = append(fixed, vecOperators(f, o)...)
	fixed = append(fixed, collapsedOverloads(f, o)...)
	return es, append(fixed, placeCompat(f, anchor, o)...), ptxDone
}

// tokenPass translates each token on its own: identifiers (API renames,
// calls whose arguments change, library namespaces, CUDA macros in code,
// compat names), string literals and numbers (hazards). It returns its
// edits and the calls whose argument lists applyPerms rebuilds. handled
// are the tokens cudaMacros translated.
func tokenPass(f *file, handled map[int]bool, o *out) ([]edit, []pendingPerm) {
	t := &pass{file: f, o: o}
	var perms []pendingPerm
	warp := newWarpUses(f)
	hazards := !f.opt.NoHazards
	var uint3Vars map[string]bool
	for i := 0; i < len(f.toks); i++ {
		tk := &f.toks[i]
		if tk.skip {
			continue
		}
		switch tk.kind {
		case LAUNCH:
			if uint3Vars == nil {
				uint3Vars = f.uint3Vars()
			}
			t.uint3Launch(i, uint3Vars)
		case IDENT:
			if handled[i] {
				continue
			}
			t.warpSizeUse(warp, i)
			if hazards {
				t.identHazards(i)
			}
			if t.cudaMacroUse(i) || t.dropToken(i) {
				continue
			}
			// (in an #if, a name after "." is no member: the mapping of the
			// first pass did not treat it as one either)
			if _, ok := Lookup(tk.lit); !ok && tk.pp != "include" && (tk.pp == "if" || tk.pp == "elif" || !t.isMember(i)) {
				t.useCompat(tk.lit) // not a CUDA name: already HIP (a translated file), or rocmk's
			}
			if t.libraryNamespace(i) {
				continue
			}
			if done, perm := t.special(i); done {
				if perm != nil {
					perms = append(perms, *perm)
				}
				continue
			}
			t.ident(i)
		case STRING:
			if tk.pp == "include" {
				continue
			}
			t.stringLit(i)
		case NUMBER:
			if hazards {
				t.numberHazards(i)
			}
		}
	}
	return t.edits, perms
}

// launches rewrites k<<<...>>>(args) to hipLaunchKernelGGL(...)
// (--hip-kernel-execution-syntax). Last launch first: a launch inside
// another's configuration or arguments is rewritten before the enclosing one,
// and its rewrite joins the prior edits just before the enclosing one renders
// its pieces, so one translation is final (a second finds nothing left to
// rewrite). Only enclosed rewrites are inserted one by one; the rest are
// returned for one merge.
func launches(f *file, es *editList, o *out) []edit {
	t := &pass{file: f, o: o, prior: es}
	rewritten := map[int]int{} // the <<< of a rewritten launch: the ) that ends it
	for i := len(f.toks) - 1; i >= 0; i-- {
		if f.toks[i].kind == LAUNCH && !f.toks[i].skip {
			if q := t.launch(i, rewritten); q >= 0 {
				rewritten[i] = q
			}
		}
	}
	return t.edits
}

// anchor is where a new compat block goes: at offset at (-1: not known
// yet); nl says at is a line end, so the block starts with a newline.
type anchor struct {
	at int
	nl bool
}

// includePass maps the file's #includes and adds hip_runtime.h where it is
// missing. Besides its edits it finds the compat block's anchor (after
// hip_runtime.h) and makes insertions no enclosing edit consumes (fixed).
type includePass struct {
	pass
	fixed       []edit
	anchor      anchor
	haveRuntime bool
	emitted     map[string]string // header -> the branch it was emitted in (see branchPath)
	branches    branchPath
	thrust      map[string]bool // the thrust headers included
	thrustEnd   int             // the end of the last thrust #include (-1: none)
}

func includes(f *file, o *out) (es, fixed []edit, a anchor) {
	t := &includePass{pass: pass{file: f, o: o}, anchor: anchor{at: -1}, emitted: map[string]string{}, thrust: map[string]bool{}, thrustEnd: -1}
	for i := 0; i < len(f.toks); i++ {
		tk := &f.toks[i]
		if tk.kind == HASH && !tk.skip {
			t.branches.directive(tk.lit)
		}
		if tk.kind == HASH && tk.lit == "#include" && !tk.skip {
			t.include(i)
		}
	}
	if !t.haveRuntime && !f.opt.NoInclude {
		t.insertRuntimeInclude()
	}
	if t.thrustEnd >= 0 {
		// CUDA's thrust headers include more of each other than rocThrust's
		for _, line := range f.thrustIncludes(t.thrust) {
			t.fixed = append(t.fixed, edit{start: t.thrustEnd, end: t.thrustEnd, text: "\n" + line})
			t.o.rep.Replaced["include"]++
		}
	}
	return t.edits, t.fixed, t.anchor
}

// include maps the #include at token i.
func (t *includePass) include(i int) {
	tk := &t.toks[i]
	h := t.next(i)
	if h >= len(t.toks) || t.toks[h].kind != HEADER && t.toks[h].kind != STRING || len(t.toks[h].lit) < 2 {
		return
	}
	lit := t.toks[h].lit
	name := lit[1 : len(lit)-1]
	end := i
	for end+1 < len(t.toks) && t.toks[end+1].kind != PPEND {
		end++
	}
	if strings.HasPrefix(name, "thrust/") {
		t.thrust[name] = true
		t.thrustEnd = t.endOf(end)
	}
	if name == hipRuntimeH {
		t.haveRuntime = true
		t.emit(hipRuntimeH)
		t.anchorAfter(end)
		return
	}
	mapped, ok := mapHeader(name, t.opt)
	if !ok {
		t.unmapped(i, h, end, name)
		return
	}
	if since, ok := headerSince[mapped]; ok && !t.opt.HIPVersion.IsZero() && t.opt.HIPVersion.Less(since) {
		t.diag(t.toks[h].pos, SevUnsupported, "unsupported-header", name,
			name+" needs HIP "+since.String()+" ("+mapped+"); target is HIP "+t.opt.HIPVersion.String())
		return
	}
	if mapped == "hip/hip_cooperative_groups.h" && !t.haveRuntime && !t.opt.NoInclude {
		// hip_cooperative_groups.h needs hip_runtime.h first
		ls := tk.pos.Offset - (tk.pos.Column - 1)
		t.fixed = append(t.fixed, edit{start: ls, end: ls, text: "#include <" + hipRuntimeH + ">\n"})
		t.haveRuntime = true
		t.emitted[hipRuntimeH] = t.branches.String()
		if t.anchor.at < 0 {
			t.anchor = anchor{ls, false}
		}
	}
	mapped, flat := libraryInclude(mapped, t.opt.HIPVersion)
	if at, ok := t.emitted[mapped]; mapped == "" || ok && t.branches.within(at) {
		// drop the duplicate (or header-less) include, keep the line
		t.addEdit(tk.pos.Offset, t.endOf(end), "")
	} else if flat != "" {
		// the library's directory where this HIP has it, else the old name
		open, close := lit[:1], lit[len(lit)-1:]
		t.addEdit(tk.pos.Offset, t.endOf(i), "#if __has_include("+open+mapped+close+")\n#include "+open+mapped+close+"\n#else\n"+tk.lit)
		t.addEdit(t.toks[h].pos.Offset+1, t.toks[h].pos.Offset+len(lit)-1, flat)
		t.addEdit(t.endOf(end), t.endOf(end), "\n#endif")
		t.emit(mapped)
	} else {
		t.addEdit(t.toks[h].pos.Offset+1, t.toks[h].pos.Offset+len(lit)-1, mapped)
		if mapped == hipRuntimeH {
			t.anchorAfter(end)
		}
		t.haveRuntime = t.haveRuntime || mapped == hipRuntimeH
		t.emit(mapped)
	}
	t.o.rep.Replaced["include"]++
}

// emit notes that header is included in the current branch, unless it was before.
func (t *includePass) emit(header string) {
	if _, ok := t.emitted[header]; !ok {
		t.emitted[header] = t.branches.String()
	}
}

// unmapped handles an #include (tokens i to end, header token h) of a
// header HIP has no name for.
func (t *includePass) unmapped(i, h, end int, name string) {
	if name == "cuda_fp8.h" && len(t.compatFor("__nv_fp8_e4m3")) > 0 {
		// the compat header's fp8 piece, which the file's uses of fp8 ask for
		t.addEdit(t.toks[i].pos.Offset, t.endOf(end), "")
		t.o.rep.Replaced["include"]++
		return
	}
	if p := compatByName[compatHeaders[name]]; p != nil && !t.opt.NoCompat {
		// the header's API is a piece of the compat header (which includes
		// what it builds on): the include asks for the piece
		t.addEdit(t.toks[i].pos.Offset, t.endOf(end), "")
		t.needCompat(p)
		t.o.rep.Replaced["include"]++
		return
	}
	if kind, why, ok := headerNote(name); ok {
		if kind == "library" {
			t.hazardOnce(t.toks[h].pos, "library", name, name+": provided by "+why+" under the same name; kept (install "+why+")")
		} else {
			t.diag(t.toks[h].pos, SevUnsupported, "unsupported-header", name, name+" has no HIP equivalent: "+why)
		}
	}
}

// anchorAfter makes the end of the directive ending at token end the place
// for the compat block, unless one was found already.
func (t *includePass) anchorAfter(end int) {
	if t.anchor.at >= 0 {
		return
	}
	t.anchor = anchor{len(t.src), true}
	if end+1 < len(t.toks) {
		t.anchor.at = t.toks[end+1].pos.Offset // the PPEND: the directive's newline
	}
}

// insertPoint is where #include <hip/hip_runtime.h> goes: after #pragma once
// or an include guard's #ifndef (a line end), else before the first line of
// code. ok is false for a file without tokens.
func (f *file) insertPoint() (at int, lineEnd, ok bool) {
	first := f.next(-1)
	for first < len(f.toks) && f.toks[first].skip {
		first = f.next(first)
	}
	if first >= len(f.toks) {
		return 0, false, false
	}
	tk := &f.toks[first]
	if tk.kind == HASH && (tk.lit == "#pragma" && f.next(first) < len(f.toks) && f.toks[f.next(first)].lit == "once" ||
		tk.lit == "#ifndef" && f.isGuard(first)) {
		i := first
		for i < len(f.toks) && f.toks[i].kind != PPEND {
			i++
		}
		if i < len(f.toks) {
			return f.toks[i].pos.Offset, true, true
		}
		return len(f.src), true, true
	}
	start := tk.pos.Offset - (tk.pos.Column - 1)
	if len(bytes.TrimSpace(f.src[start:tk.pos.Offset])) > 0 {
		start = tk.pos.Offset // the line starts inside a comment: insert right before the code
	}
	return start, false, true
}

// insertRuntimeInclude adds #include <hip/hip_runtime.h> at insertPoint.
func (t *includePass) insertRuntimeInclude() {
	const inc = "#include <hip/hip_runtime.h>"
	at, lineEnd, ok := t.insertPoint()
	if !ok {
		return
	}
	text := inc + "\n"
	if lineEnd {
		text = "\n" + inc
	}
	t.fixed = append(t.fixed, edit{start: at, end: at, text: text})
	if t.anchor.at < 0 {
		t.anchor = anchor{at, lineEnd}
	}
	t.o.rep.Replaced["include"]++
}

// placeCompat writes, updates or removes the file's compat block: the
// pieces the passes asked for (o.compat), at the anchor the include pass found.
func placeCompat(f *file, a anchor, o *out) []edit {
	b0, b1 := f.compatBlock[0], f.compatBlock[1]
	if b0 >= 0 && !f.opt.NoCompat {
		// a piece an include asked for (compatHeaders): the include is gone
		// from a translated file, the block's define says it was there
		for _, n := range compatHeaders {
			if p := compatByName[n]; bytes.Contains(f.src[b0:b1], []byte("#define "+p.macro+" ")) {
				o.needCompat(p)
			}
		}
	}
	if len(o.compat) == 0 && b0 < 0 {
		return nil
	}
	text := ""
	if len(o.compat) > 0 {
		text = compatBlock(f, o)
	}
	if b0 >= 0 {
		if string(f.src[b0:b1]) != text {
			return []edit{{start: b0, end: b1, text: text}}
		}
		return nil
	}
	at, nl := a.at, a.nl
	if at < 0 {
		var ok bool
		if at, nl, ok = f.insertPoint(); !ok {
			at, nl = len(f.src), false
		}
	}
	if nl {
		text = "\n" + strings.TrimSuffix(text, "\n")
	}
	return []edit{{start: at, end: at, text: text}}
}

// isBlockMacro reports whether a macro is one a compat block defines.
func isBlockMacro(name string) bool {
	return strings.HasPrefix(name, "ROCMK_COMPAT_") || strings.HasPrefix(name, "ROCMK_HAS_")
}

// findCompatBlock finds the block an earlier translation wrote (the
// ROCMK_COMPAT_* defines and the include, or the inlined header) and marks
// it so that nothing in it is translated again.
func (f *file) findCompatBlock() [2]int {
	lineEnd := func(i int) (int, int) { // index of the PPEND ending the directive at i, offset after its newline
		for i < len(f.toks) && f.toks[i].kind != PPEND {
			i++
		}
		if i >= len(f.toks) {
			return i, len(f.src)
		}
		off := f.toks[i].pos.Offset
		if off < len(f.src) && f.src[off] == '\n' {
			off++
		}
		return i, off
	}
	for i := 0; i < len(f.toks); i++ {
		tk := &f.toks[i]
		if tk.kind != HASH || tk.lit != "#define" || i+1 >= len(f.toks) || !isBlockMacro(f.toks[i+1].lit) {
			continue
		}
		start := tk.pos.Offset - (tk.pos.Column - 1)
		j := i
		for {
			e, _ := lineEnd(j)
			j = e + 1 // the next line's first token: a comment counts (the inlined header's marker)
			if j < len(f.toks) && f.toks[j].kind == HASH && f.toks[j].lit == "#define" && j+1 < len(f.toks) &&
				isBlockMacro(f.toks[j+1].lit) {
				continue
			}
			break
		}
		if j >= len(f.toks) {
			return [2]int{-1, -1}
		}
		var end int
		switch {
		case f.toks[j].kind == HASH && f.toks[j].lit == "#include" && j+1 < len(f.toks) && f.toks[j+1].kind == STRING &&
			strings.HasSuffix(f.toks[j+1].lit, CompatHeaderName+"\""):
			_, end = lineEnd(j)
		case f.toks[j].kind == COMMENT && f.toks[j].lit == compatInlineBegin:
			k := j
			for k < len(f.toks) && !(f.toks[k].kind == COMMENT && f.toks[k].lit == compatInlineEnd) {
				k++
			}
			if k >= len(f.toks) {
				return [2]int{-1, -1}
			}
			end = f.endOf(k)
			if end < len(f.src) && f.src[end] == '\n' {
				end++
			}
		default:
			return [2]int{-1, -1}
		}
		for k := i; k < len(f.toks) && f.toks[k].pos.Offset < end; k++ {
			f.toks[k].skip = true
		}
		return [2]int{start, end}
	}
	return [2]int{-1, -1}
}

// findTemplateKernels finds __global__ function templates, and macros
// whose body names one or has template arguments, so launches of them get
// HIP_KERNEL_NAME(...).
func (f *file) findTemplateKernels() map[string]bool {
	templ := map[string]bool{}
	for i := range f.toks {
		tk := &f.toks[i]
		if tk.kind != IDENT || tk.lit != "__global__" || tk.pp != "" {
			continue
		}
		isTemplate := false
		for j := f.prev(i); j >= 0; j = f.prev(j) {
			p := &f.toks[j]
			if p.kind == PUNCT && (p.lit == ";" || p.lit == "{" || p.lit == "}") || p.kind == PPEND {
				break
			}
			if p.kind == IDENT && p.lit == "template" {
				isTemplate = true
				break
			}
		}
		if !isTemplate {
			continue
		}
		for j := i + 1; j < len(f.toks); j++ {
			if f.isPunct(j, "(") {
				if k := f.prev(j); k > i && f.toks[k].kind == IDENT {
					templ[f.toks[k].lit] = true
				}
				break
			}
			if f.isPunct(j, ";") || f.isPunct(j, "{") {
				break
			}
		}
	}
	for i := 0; i < len(f.toks); i++ {
		tk := &f.toks[i]
		if tk.kind != HASH || tk.lit != "#define" {
			continue
		}
		n := i + 1
		if n >= len(f.toks) || f.toks[n].kind != IDENT {
			continue
		}
		name := f.toks[n].lit
		for j := n + 1; j < len(f.toks) && f.toks[j].kind != PPEND; j++ {
			b := &f.toks[j]
			if b.kind == IDENT && templ[b.lit] || b.kind == PUNCT && b.lit == "<" {
				templ[name] = true
			}
			if b.kind == LAUNCH || b.kind == PUNCT && b.lit == "(" && j == n+1 && b.pos.Offset == f.endOf(n) {
				break // a launch macro or a function-like macro: not a kernel name
			}
		}
	}
	return templ
}

// dropTokens are CUDA calling-convention macros (empty on Linux) that HIP
// neither has nor needs: the translation removes them.
var dropTokens = map[string]bool{"CUDART_CB": true, "CUDARTAPI": true, "CUDAAPI": true}

func (t *pass) dropToken(i int) bool {
	tk := &t.toks[i]
	if !dropTokens[tk.lit] || tk.pp != "" && tk.pp != "define" || t.isMember(i) {
		return false
	}
	if tk.pp == "define" && !tk.inDefn {
		return true // #define CUDART_CB ...: not a use
	}
	end := t.endOf(i)
	for end < len(t.src) && (t.src[end] == ' ' || t.src[end] == '\t') {
		end++
	}
	t.addEdit(tk.pos.Offset, end, "")
	t.o.rep.Replaced["runtime"]++
	return true
}

// isGuard reports whether the #ifndef X at i is followed by #define X.
func (f *file) isGuard(i int) bool {
	n := f.next(i)
	if n >= len(f.toks) || f.toks[n].kind != IDENT {
		return false
	}
	name := f.toks[n].lit
	j := f.next(n)
	for j < len(f.toks) && f.toks[j].kind == PPEND {
		j = f.next(j)
	}
	for j < len(f.toks) && f.toks[j].kind == HASH && f.toks[j].lit == "#pragma" {
		for j < len(f.toks) && f.toks[j].kind != PPEND {
			j++
		}
		j = f.next(j)
	}
	if j >= len(f.toks) || f.toks[j].kind != HASH || f.toks[j].lit != "#define" {
		return false
	}
	k := f.next(j)
	return k < len(f.toks) && f.toks[k].lit == name
}

// target returns the name a CUDA entry translates to under the options, or
// "" with a reason when it must stay.
func (f *file) target(e *Entry) (string, string) {
	if f.opt.Roc {
		if to, ok := rocComplex[e.CUDA]; ok {
			return to, ""
		}
		if to, ok := rocLibTypes[e.CUDA]; ok && f.rocLib {
			return to, ""
		}
	}
	if f.opt.MIOpen && e.CUDA == "cudaStream_t" {
		return "miopenAcceleratorQueue_t", ""
	}
	name, added, removed, exp := e.HIP, e.HIPAdded, e.HIPRemoved, e.HIPExperimental
	hipData := f.opt.UseHIPDataTypes && isLibraryDataType(e.CUDA)
	for a := e; a != nil && !hipData; a = a.Next {
		if a.Alt != "" && (f.opt.MIOpen && a.Family == "dnn" || f.opt.Roc && a.Family != "dnn") {
			name, added, removed, exp = a.Alt, a.AltAdded, a.AltRemoved, a.AltExperimental
			break
		}
	}
	if name == "" {
		return "", "has no HIP equivalent"
	}
	if exp && !f.opt.Experimental {
		return "", "is experimental in HIP (" + name + "); pass --experimental to translate it"
	}
	if hv := f.opt.HIPVersion; !hv.IsZero() {
		if !added.IsZero() && hv.Less(added) {
			return "", "needs HIP " + added.String() + " (" + name + "); target is HIP " + hv.String()
		}
		if !removed.IsZero() && !hv.Less(removed) {
			return "", "was removed in HIP " + removed.String() + " (" + name + ")"
		}
	}
	return name, ""
}

// isLibraryDataType reports whether name is one of CUDA's library data
// types (cudaDataType, CUDA_R_32F, ...), which --use-hip-data-types keeps as
// hipDataType / HIP_R_32F even under --roc.
func isLibraryDataType(name string) bool {
	return strings.HasPrefix(name, "cudaDataType") || strings.HasPrefix(name, "CUDA_R_") || strings.HasPrefix(name, "CUDA_C_")
}

// rocComplex: under --roc the rocBLAS/rocSPARSE/rocSOLVER complex types
// replace cuComplex's (hipify-clang does the same).
var rocComplex = map[string]string{
	"cuComplex":       "rocblas_float_complex",
	"cuFloatComplex":  "rocblas_float_complex",
	"cuDoubleComplex": "rocblas_double_complex",
}

// rocLibTypes: under --roc, in files using rocBLAS/rocSPARSE/rocSOLVER,
// the half and bfloat16 types become rocBLAS's.
var rocLibTypes = map[string]string{
	"__half":        "rocblas_half",
	"__nv_bfloat16": "rocblas_bfloat16",
}

func (f *file) isMember(i int) bool {
	p := f.prev(i)
	return p >= 0 && f.toks[p].kind == PUNCT && (f.toks[p].lit == "." || f.toks[p].lit == "->")
}

// ident translates the identifier at i.
func (t *pass) ident(i int) {
	tk := &t.toks[i]
	if tk.pp == "include" {
		return
	}
	e, ok := Lookup(tk.lit)
	if !ok || t.isMember(i) {
		return
	}
	to, why := t.target(e)
	if t.cublasV1 && e.Family == "blas" && !e.Type && !strings.HasSuffix(tk.lit, "_v2") {
		if _, v2 := Lookup(tk.lit + "_v2"); v2 {
			// with only cublas.h, cublasSscal is the legacy handle-less API
			to, why = "", "is the legacy cuBLAS (v1) API: hipBLAS has only the handle-based form; include cublas_v2.h and pass a handle"
		}
	}
	if to == "" {
		if len(t.compatFor(tk.lit)) > 0 {
			// rocmk's compatibility header provides it
			to = tk.lit
			if r, ok := compatRenames[tk.lit]; ok {
				to = r
				t.addEdit(tk.pos.Offset, tk.pos.Offset+len(tk.lit), r)
				t.o.rep.Replaced[e.Family]++
			}
			t.useCompat(to)
			return
		}
		if e.Type && t.dropCaseLabel(i, why) {
			return
		}
		if e.Type || t.isPunct(t.next(i), "(") {
			t.diag(tk.pos, SevUnsupported, "unsupported-api", tk.lit, tk.lit+" "+why)
		}
		return
	}
	if !e.HIPDeprecated.IsZero() && !t.opt.NoHazards && (t.opt.HIPVersion.IsZero() || !t.opt.HIPVersion.Less(e.HIPDeprecated)) {
		t.hazardOnce(tk.pos, "deprecated", tk.lit, tk.lit+" -> "+to+": deprecated since HIP "+e.HIPDeprecated.String()+"; prefer the replacement HIP documents")
	}
	if e.HIPExperimental && !t.opt.NoHazards {
		t.hazardOnce(tk.pos, "experimental", tk.lit, tk.lit+" -> "+to+" is experimental in HIP: check its behaviour")
	}
	if tag, ok := hipStructTags[to]; ok {
		if pr := t.prev(i); pr >= 0 && t.toks[pr].kind == IDENT && t.toks[pr].lit == "struct" {
			to = tag // struct cudaGraphicsResource *r: HIP's name is a typedef, its struct has another tag
		}
	}
	if to != tk.lit && t.aliasDefine(i, to) {
		return // the project's own alias of the HIP name: renaming it would define the HIP name as itself
	}
	if to != tk.lit {
		t.addEdit(tk.pos.Offset, tk.pos.Offset+len(tk.lit), to)
		t.o.rep.Replaced[e.Family]++
	}
	t.useCompat(to) // the name written: a translated file asks for the same pieces again
}

// dropCaseLabel comments out "case NAME:" when NAME, at i, is an enumerator
// the target HIP lacks (cuFFT's CUFFT_MISSING_DEPENDENCY in a switch that
// names every status): HIP never produces the value, so the label is dead,
// and mapped to a neighbour's value it would repeat that case. Only the label
// goes; the statements after it stay (unreachable, or reached by falling
// through as before).
func (t *pass) dropCaseLabel(i int, why string) bool {
	p, n := t.prev(i), t.next(i)
	if p < 0 || t.toks[p].kind != IDENT || t.toks[p].lit != "case" || !t.isPunct(n, ":") || t.toks[i].pp != "" || t.toks[i].inDefn {
		return false
	}
	tk := &t.toks[i]
	start, end := t.toks[p].pos.Offset, t.toks[n].pos.Offset+1
	t.addEdit(start, end, "/* rocmk: "+string(t.src[start:end])+" dropped: no value in the target HIP */")
	t.diag(tk.pos, SevUnsupported, "unsupported-api", tk.lit, tk.lit+" "+why+": its case label is dropped")
	return true
}

// aliasDefine reports whether the token at i is the name a #define gives to
// the HIP name to: "#define cudaEventDisableTiming hipEventDisableTiming", or
// "#define cudaFree(p) hipFree(p)", as projects' own HIP headers write them
// (ggml's vendors/hip.h, 120 of them). Renamed, it would read "#define
// hipEventDisableTiming hipEventDisableTiming", which replaces HIP's own
// macro (0x2) by an identifier nothing declares. Uses elsewhere are renamed
// anyway, so the alias is left as written.
func (f *file) aliasDefine(i int, to string) bool {
	tk := &f.toks[i]
	if tk.pp != "define" || tk.inDefn {
		return false
	}
	b := f.next(i)
	fn := f.isPunct(b, "(") && f.toks[b].pos.Offset == tk.pos.Offset+len(tk.lit)
	if fn {
		c := f.matching(b)
		if c < 0 {
			return false
		}
		b = f.next(c)
	}
	if b >= len(f.toks) || f.toks[b].kind != IDENT {
		return false
	}
	if body := f.toks[b].lit; body != to {
		// an alias of one CUDA name by another that HIP names alike
		if e, ok := Lookup(body); !ok || e.HIP != to {
			return false
		}
	}
	end := f.next(b)
	return fn || end >= len(f.toks) || f.toks[end].kind == PPEND || f.toks[end].kind == EOF
}

// stringLit renames whole words in a string literal that are CUDA API names.
func (t *pass) stringLit(i int) {
	tk := &t.toks[i]
	lit := tk.lit
	if !strings.Contains(lit, "cu") && !strings.Contains(lit, "CU") {
		return
	}
	var b strings.Builder
	changed := false
	last := 0
	for j := 0; j < len(lit); {
		if lit[j] == '\\' { // an escape (\n, \x41...) is not the start of a word
			j += 2
			continue
		}
		if !isLetter(lit[j]) {
			j++
			continue
		}
		k := j
		for k < len(lit) && (isLetter(lit[k]) || isDigit(lit[k])) {
			k++
		}
		w := lit[j:k]
		if e, ok := Lookup(w); ok {
			if to, _ := t.target(e); to != "" && to != w {
				b.WriteString(lit[last:j])
				b.WriteString(to)
				last = k
				changed = true
				t.o.rep.Replaced[e.Family]++
			}
		}
		j = k
	}
	if changed {
		b.WriteString(lit[last:])
		t.addEdit(tk.pos.Offset, tk.pos.Offset+len(lit), b.String())
	}
}

// launch rewrites the kernel launch whose <<< is at i and returns the )
// that ends it (-1: not rewritten); the rewrites enclosed in it join the
// prior edits before anything is rendered (joinPrior). A launch whose
// configuration's brackets do not balance, or that holds a <<< not
// rewritten or rewritten past its end (rewritten), stays as it is:
// rewriting it would leave a launch a second translation rewrites
// (A<<<0, B<<<(), 0>>>(>>>() and A<<<0, 0>>>(B<<<0, )>>>(), from the fuzzer).
func (t *pass) launch(i int, rewritten map[int]int) int {
	j := t.launchEnd(i)
	if j < 0 || !t.balanced(i+1, j) {
		return -1
	}
	p := t.next(j)
	if !t.isPunct(p, "(") {
		return -1
	}
	q := t.matching(p)
	if q < 0 {
		return -1
	}
	ks := t.kernelNameStart(i)
	if ks < 0 || t.isMember(ks) {
		return -1
	}
	for k := i + 1; k < q; k++ {
		if t.toks[k].kind != LAUNCH || t.toks[k].skip {
			continue
		}
		if end, ok := rewritten[k]; !ok || end >= q {
			return -1
		}
	}
	t.joinPrior(t.endOf(q))
	// render the pieces in source order (render consumes the edits inside)
	nameEnd := t.endOf(t.prev(i))
	name := strings.TrimSpace(t.render(t.toks[ks].pos.Offset, nameEnd))
	cfg := t.splitArgs(i, j)
	if len(cfg) < 2 || len(cfg) > 4 {
		return -1
	}
	for _, r := range cfg {
		if r[0] >= r[1] || t.rangeEmpty(r) {
			return -1 // an empty configuration argument: not a launch to rewrite
		}
	}
	cfgText := make([]string, 4)
	for k, r := range cfg {
		cfgText[k] = t.argText(r, k < 2)
	}
	args := t.splitArgs(p, q)
	argText := make([]string, len(args))
	for k, r := range args {
		argText[k] = t.argText(r, false)
	}
	for _, k := range []int{2, 3} {
		if cfgText[k] == "" {
			cfgText[k] = "0"
		}
	}
	base := name
	if k := strings.LastIndex(base, "::"); k >= 0 {
		base = base[k+2:]
	}
	if strings.Contains(name, "<") || t.templKernels[base] {
		name = "HIP_KERNEL_NAME(" + name + ")"
	}
	var b strings.Builder
	b.WriteString("hipLaunchKernelGGL(")
	b.WriteString(name)
	for _, c := range cfgText {
		b.WriteString(", ")
		b.WriteString(c)
	}
	for _, a := range argText {
		b.WriteString(", ")
		b.WriteString(a)
	}
	b.WriteString(")")
	t.render(t.toks[i].pos.Offset, t.endOf(q)) // drop inner edits: they are in the pieces
	t.addEdit(t.toks[ks].pos.Offset, t.endOf(q), b.String())
	t.o.rep.Replaced["launch"]++
	return q
}

// opener is the bracket each closing bracket closes.
var opener = map[string]string{")": "(", "]": "[", "}": "{"}

// balanced says the brackets of tokens from..to-1 close in order, none
// closing one opened before from.
func (f *file) balanced(from, to int) bool {
	var open []string
	for k := from; k < to; k++ {
		if f.toks[k].kind != PUNCT {
			continue
		}
		switch l := f.toks[k].lit; l {
		case "(", "[", "{":
			open = append(open, l)
		case ")", "]", "}":
			if len(open) == 0 || open[len(open)-1] != opener[l] {
				return false
			}
			open = open[:len(open)-1]
		}
	}
	return len(open) == 0
}

// argText renders an argument range trimmed; dim wraps it in dim3(...)
// unless it already is one.
func (t *pass) argText(r [2]int, dim bool) string {
	if r[0] >= r[1] {
		return ""
	}
	s := strings.TrimSpace(t.render(t.toks[r[0]].pos.Offset, t.endOf(r[1]-1)))
	if !dim {
		return s
	}
	f := r[0]
	for f < r[1] && t.toks[f].kind == COMMENT {
		f++
	}
	if f < r[1] && t.toks[f].lit == "dim3" {
		if o := t.next(f); t.isPunct(o, "(") {
			if c := t.matching(o); c >= 0 && t.next(c) >= r[1] {
				return s
			}
		}
	}
	return "dim3(" + s + ")"
}

// kernelNameStart walks back from the <<< at i over a possibly qualified,
// possibly templated kernel name and returns its first token, or -1.
func (f *file) kernelNameStart(i int) int {
	j := f.prev(i)
	for {
		if j < 0 {
			return -1
		}
		if f.toks[j].kind == PUNCT && (f.toks[j].lit == ">" || f.toks[j].lit == ">>") {
			depth := 0
			for ; j >= 0; j-- {
				tk := &f.toks[j]
				if tk.kind == PUNCT {
					switch tk.lit {
					case ">":
						depth++
					case ">>":
						depth += 2
					case "<":
						depth--
					case ";", "{", "}":
						return -1
					}
				}
				if depth == 0 {
					break
				}
			}
			j = f.prev(j)
		}
		if j < 0 || f.toks[j].kind != IDENT {
			return -1
		}
		start := j
		p := f.prev(j)
		if !f.isPunct(p, "::") {
			return start
		}
		pp := f.prev(p)
		if pp < 0 || f.toks[pp].kind != IDENT && !(f.toks[pp].kind == PUNCT && f.toks[pp].lit == ">") {
			return p // leading ::
		}
		j = pp
	}
}

// branchPath is where a line is in the file's #if structure: one number
// per open conditional, a new one for each of its branches. An include
// is a duplicate of an earlier one only when the earlier one's branch
// encloses it: the same header in an #if and its #else is included by
// whichever branch is taken, so neither is dropped.
type branchPath struct {
	open []int
	next int
}

func (b *branchPath) directive(d string) {
	switch d {
	case "#if", "#ifdef", "#ifndef":
		b.next++
		b.open = append(b.open, b.next)
	case "#elif", "#else", "#elifdef", "#elifndef":
		if n := len(b.open); n > 0 {
			b.next++
			b.open[n-1] = b.next
		}
	case "#endif":
		if n := len(b.open); n > 0 {
			b.open = b.open[:n-1]
		}
	}
}

func (b *branchPath) String() string {
	var s strings.Builder
	s.WriteByte('.')
	for _, n := range b.open {
		s.WriteString(strconv.Itoa(n))
		s.WriteByte('.')
	}
	return s.String()
}

// within reports whether the current branch is at, or inside, branch at.
func (b *branchPath) within(at string) bool { return strings.HasPrefix(b.String(), at) }
