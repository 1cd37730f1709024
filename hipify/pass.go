package hipify

import (
	"bytes"
	"strconv"
	"strings"
)

// findTemplateKernels records __global__ function templates, and macros
// whose body names one or has template arguments, so launches of them get
// HIP_KERNEL_NAME(...).
func (t *translator) findTemplateKernels() {
	t.templKernels = map[string]bool{}
	for i := range t.toks {
		tk := &t.toks[i]
		if tk.kind != IDENT || tk.lit != "__global__" || tk.pp != "" {
			continue
		}
		isTemplate := false
		for j := t.prev(i); j >= 0; j = t.prev(j) {
			p := &t.toks[j]
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
		for j := i + 1; j < len(t.toks); j++ {
			if t.isPunct(j, "(") {
				if k := t.prev(j); k > i && t.toks[k].kind == IDENT {
					t.templKernels[t.toks[k].lit] = true
				}
				break
			}
			if t.isPunct(j, ";") || t.isPunct(j, "{") {
				break
			}
		}
	}
	for i := 0; i < len(t.toks); i++ {
		tk := &t.toks[i]
		if tk.kind != HASH || tk.lit != "#define" {
			continue
		}
		n := i + 1
		if n >= len(t.toks) || t.toks[n].kind != IDENT {
			continue
		}
		name := t.toks[n].lit
		for j := n + 1; j < len(t.toks) && t.toks[j].kind != PPEND; j++ {
			b := &t.toks[j]
			if b.kind == IDENT && t.templKernels[b.lit] || b.kind == PUNCT && b.lit == "<" {
				t.templKernels[name] = true
			}
			if b.kind == LAUNCH || b.kind == PUNCT && b.lit == "(" && j == n+1 && b.pos.Offset == t.endOf(n) {
				break // a launch macro or a function-like macro: not a kernel name
			}
		}
	}
}

func (t *translator) translateTokens() {
	haveRuntime := false
	runtimeIncludes := 0
	emitted := map[string]string{} // header -> the branch it was emitted in (see branchPath)
	var branches branchPath
	hazards := !t.opt.NoHazards
	// first pass: includes, to know whether hip_runtime.h is already there
	for i := 0; i < len(t.toks); i++ {
		tk := &t.toks[i]
		if tk.kind == HASH && !tk.skip {
			branches.directive(tk.lit)
		}
		if tk.kind != HASH || tk.lit != "#include" || tk.skip {
			continue
		}
		h := t.next(i)
		if h >= len(t.toks) || t.toks[h].kind != HEADER && t.toks[h].kind != STRING {
			continue
		}
		lit := t.toks[h].lit
		if len(lit) < 2 {
			continue
		}
		name := lit[1 : len(lit)-1]
		if strings.HasPrefix(name, "cublas") || strings.HasPrefix(name, "cusparse") || strings.HasPrefix(name, "cusolver") {
			t.rocLib = true
		}
		switch name {
		case "cublas.h", "hipblas.h", "hipblas/hipblas.h":
			// hipblas.h: an earlier run translated cublas.h; keep the legacy
			// names alone again so the translation stays idempotent
			t.cublasV1 = t.cublasV1 || !t.cublasV2
		case "cublas_v2.h":
			t.cublasV2, t.cublasV1 = true, false
		}
		end := i
		for end+1 < len(t.toks) && t.toks[end+1].kind != PPEND {
			end++
		}
		if name == hipRuntimeH {
			runtimeIncludes++
			haveRuntime = true
			if _, ok := emitted[hipRuntimeH]; !ok {
				emitted[hipRuntimeH] = branches.String()
			}
			t.anchorAfter(end)
			continue
		}
		mapped, ok := mapHeader(name, t.opt)
		if !ok {
			if name == "cuda_fp8.h" && len(t.compatFor("__nv_fp8_e4m3")) > 0 {
				// the compat header's fp8 piece, which the file's uses of fp8 ask for
				t.addEdit(tk.pos.Offset, t.endOf(end), "")
				t.rep.Replaced["include"]++
				continue
			}
			if kind, why, ok := headerNote(name); ok {
				if kind == "library" {
					t.hazardOnce(t.toks[h].pos, "library", name, name+": provided by "+why+" under the same name; kept (install "+why+")")
				} else {
					t.diag(t.toks[h].pos, SevUnsupported, "unsupported-header", name, name+" has no HIP equivalent: "+why)
				}
			}
			continue
		}
		if since, ok := headerSince[mapped]; ok && !t.opt.HIPVersion.IsZero() && t.opt.HIPVersion.Less(since) {
			t.diag(t.toks[h].pos, SevUnsupported, "unsupported-header", name,
				name+" needs HIP "+since.String()+" ("+mapped+"); target is HIP "+t.opt.HIPVersion.String())
			continue
		}
		if mapped == "hip/hip_cooperative_groups.h" && !haveRuntime && !t.opt.NoInclude {
			// hip_cooperative_groups.h needs hip_runtime.h first
			ls := tk.pos.Offset - (tk.pos.Column - 1)
			t.fixed = append(t.fixed, edit{start: ls, end: ls, text: "#include <" + hipRuntimeH + ">\n"})
			haveRuntime = true
			emitted[hipRuntimeH] = branches.String()
			if t.anchor < 0 {
				t.anchor, t.anchorNL = ls, false
			}
		}
		mapped, flat := libraryInclude(mapped, t.opt.HIPVersion)
		if at, ok := emitted[mapped]; mapped == "" || ok && branches.within(at) {
			// drop the duplicate (or header-less) include, keep the line
			t.addEdit(tk.pos.Offset, t.endOf(end), "")
		} else if flat != "" {
			// the library's directory where this HIP has it, else the old name
			open, close := lit[:1], lit[len(lit)-1:]
			t.addEdit(tk.pos.Offset, t.endOf(i), "#if __has_include("+open+mapped+close+")\n#include "+open+mapped+close+"\n#else\n"+tk.lit)
			t.addEdit(t.toks[h].pos.Offset+1, t.toks[h].pos.Offset+len(lit)-1, flat)
			t.addEdit(t.endOf(end), t.endOf(end), "\n#endif")
			if _, ok := emitted[mapped]; !ok {
				emitted[mapped] = branches.String()
			}
		} else {
			t.addEdit(t.toks[h].pos.Offset+1, t.toks[h].pos.Offset+len(lit)-1, mapped)
			if mapped == hipRuntimeH {
				t.anchorAfter(end)
			}
			haveRuntime = haveRuntime || mapped == hipRuntimeH
			if _, ok := emitted[mapped]; !ok {
				emitted[mapped] = branches.String()
			}
		}
		t.rep.Replaced["include"]++
	}
	if !haveRuntime && !t.opt.NoInclude {
		t.insertRuntimeInclude()
	}

	for i := 0; i < len(t.toks); i++ {
		tk := &t.toks[i]
		if tk.skip {
			continue
		}
		switch tk.kind {
		case IDENT:
			if tk.done {
				continue
			}
			t.warpSizeUse(i)
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
			if t.libraryNamespace(i) || t.special(i) {
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
	t.sortEdits()
	t.applyPerms()
	t.flushOuter()
	if t.opt.KernelExecutionSyntax {
		t.expandLaunchMacros()
		t.flushOuter()
		for i := range t.toks {
			if t.toks[i].kind == LAUNCH && !t.toks[i].skip {
				t.launch(i)
			}
		}
		t.flushOuter()
	}
	t.translatePTX()
	t.placeCompat()
}

// anchorAfter makes the end of the directive ending at token end the place
// for the compat block, unless one was found already.
func (t *translator) anchorAfter(end int) {
	if t.anchor >= 0 {
		return
	}
	t.anchor, t.anchorNL = len(t.src), true
	if end+1 < len(t.toks) {
		t.anchor = t.toks[end+1].pos.Offset // the PPEND: the directive's newline
	}
}

// insertPoint is where #include <hip/hip_runtime.h> goes: after #pragma once
// or an include guard's #ifndef (a line end), else before the first line of
// code. ok is false for a file without tokens.
func (t *translator) insertPoint() (at int, lineEnd, ok bool) {
	first := t.next(-1)
	for first < len(t.toks) && t.toks[first].skip {
		first = t.next(first)
	}
	if first >= len(t.toks) {
		return 0, false, false
	}
	tk := &t.toks[first]
	if tk.kind == HASH && (tk.lit == "#pragma" && t.next(first) < len(t.toks) && t.toks[t.next(first)].lit == "once" ||
		tk.lit == "#ifndef" && t.isGuard(first)) {
		i := first
		for i < len(t.toks) && t.toks[i].kind != PPEND {
			i++
		}
		if i < len(t.toks) {
			return t.toks[i].pos.Offset, true, true
		}
		return len(t.src), true, true
	}
	start := tk.pos.Offset - (tk.pos.Column - 1)
	if len(bytes.TrimSpace(t.src[start:tk.pos.Offset])) > 0 {
		start = tk.pos.Offset // the line starts inside a comment: insert right before the code
	}
	return start, false, true
}

// insertRuntimeInclude adds #include <hip/hip_runtime.h> at insertPoint.
func (t *translator) insertRuntimeInclude() {
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
	if t.anchor < 0 {
		t.anchor, t.anchorNL = at, lineEnd
	}
	t.rep.Replaced["include"]++
}

// placeCompat writes, updates or removes the file's compat block.
func (t *translator) placeCompat() {
	b0, b1 := t.compatBlock0[0], t.compatBlock0[1]
	if len(t.compat) == 0 && b0 < 0 {
		return
	}
	text := ""
	if len(t.compat) > 0 {
		text = t.compatBlock()
	}
	if b0 >= 0 {
		if string(t.src[b0:b1]) != text {
			t.fixed = append(t.fixed, edit{start: b0, end: b1, text: text})
		}
		return
	}
	at, nl := t.anchor, t.anchorNL
	if at < 0 {
		var ok bool
		if at, nl, ok = t.insertPoint(); !ok {
			at, nl = len(t.src), false
		}
	}
	if nl {
		text = "\n" + strings.TrimSuffix(text, "\n")
	}
	t.fixed = append(t.fixed, edit{start: at, end: at, text: text})
}

// findCompatBlock finds the block an earlier translation wrote (the
// ROCMK_COMPAT_* defines and the include, or the inlined header) and marks
// it so that nothing in it is translated again.
func (t *translator) findCompatBlock() {
	t.compatBlock0 = [2]int{-1, -1}
	lineEnd := func(i int) (int, int) { // index of the PPEND ending the directive at i, offset after its newline
		for i < len(t.toks) && t.toks[i].kind != PPEND {
			i++
		}
		if i >= len(t.toks) {
			return i, len(t.src)
		}
		off := t.toks[i].pos.Offset
		if off < len(t.src) && t.src[off] == '\n' {
			off++
		}
		return i, off
	}
	for i := 0; i < len(t.toks); i++ {
		tk := &t.toks[i]
		if tk.kind != HASH || tk.lit != "#define" || i+1 >= len(t.toks) || !strings.HasPrefix(t.toks[i+1].lit, "ROCMK_COMPAT_") {
			continue
		}
		start := tk.pos.Offset - (tk.pos.Column - 1)
		j := i
		for {
			e, _ := lineEnd(j)
			j = e + 1 // the next line's first token: a comment counts (the inlined header's marker)
			if j < len(t.toks) && t.toks[j].kind == HASH && t.toks[j].lit == "#define" && j+1 < len(t.toks) &&
				strings.HasPrefix(t.toks[j+1].lit, "ROCMK_COMPAT_") {
				continue
			}
			break
		}
		if j >= len(t.toks) {
			return
		}
		var end int
		switch {
		case t.toks[j].kind == HASH && t.toks[j].lit == "#include" && j+1 < len(t.toks) && t.toks[j+1].kind == STRING &&
			strings.HasSuffix(t.toks[j+1].lit, CompatHeaderName+"\""):
			_, end = lineEnd(j)
		case t.toks[j].kind == COMMENT && t.toks[j].lit == compatInlineBegin:
			k := j
			for k < len(t.toks) && !(t.toks[k].kind == COMMENT && t.toks[k].lit == compatInlineEnd) {
				k++
			}
			if k >= len(t.toks) {
				return
			}
			end = t.endOf(k)
			if end < len(t.src) && t.src[end] == '\n' {
				end++
			}
		default:
			return
		}
		t.compatBlock0 = [2]int{start, end}
		for k := i; k < len(t.toks) && t.toks[k].pos.Offset < end; k++ {
			t.toks[k].skip = true
		}
		return
	}
}

// dropTokens are CUDA calling-convention macros (empty on Linux) that HIP
// neither has nor needs: the translation removes them.
var dropTokens = map[string]bool{"CUDART_CB": true, "CUDARTAPI": true, "CUDAAPI": true}

func (t *translator) dropToken(i int) bool {
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
	t.rep.Replaced["runtime"]++
	return true
}

// isGuard reports whether the #ifndef X at i is followed by #define X.
func (t *translator) isGuard(i int) bool {
	n := t.next(i)
	if n >= len(t.toks) || t.toks[n].kind != IDENT {
		return false
	}
	name := t.toks[n].lit
	j := t.next(n)
	for j < len(t.toks) && t.toks[j].kind == PPEND {
		j = t.next(j)
	}
	for j < len(t.toks) && t.toks[j].kind == HASH && t.toks[j].lit == "#pragma" {
		for j < len(t.toks) && t.toks[j].kind != PPEND {
			j++
		}
		j = t.next(j)
	}
	if j >= len(t.toks) || t.toks[j].kind != HASH || t.toks[j].lit != "#define" {
		return false
	}
	k := t.next(j)
	return k < len(t.toks) && t.toks[k].lit == name
}

// target returns the name a CUDA entry translates to under the options, or
// "" with a reason when it must stay.
func (t *translator) target(e *Entry) (string, string) {
	if t.opt.Roc {
		if to, ok := rocComplex[e.CUDA]; ok {
			return to, ""
		}
		if to, ok := rocLibTypes[e.CUDA]; ok && t.rocLib {
			return to, ""
		}
	}
	if t.opt.MIOpen && e.CUDA == "cudaStream_t" {
		return "miopenAcceleratorQueue_t", ""
	}
	name, added, removed, exp := e.HIP, e.HIPAdded, e.HIPRemoved, e.HIPExperimental
	hipData := t.opt.UseHIPDataTypes && isLibraryDataType(e.CUDA)
	for a := e; a != nil && !hipData; a = a.Next {
		if a.Alt != "" && (t.opt.MIOpen && a.Family == "dnn" || t.opt.Roc && a.Family != "dnn") {
			name, added, removed, exp = a.Alt, a.AltAdded, a.AltRemoved, a.AltExperimental
			break
		}
	}
	if name == "" {
		return "", "has no HIP equivalent"
	}
	if exp && !t.opt.Experimental {
		return "", "is experimental in HIP (" + name + "); pass --experimental to translate it"
	}
	if hv := t.opt.HIPVersion; !hv.IsZero() {
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

func (t *translator) isMember(i int) bool {
	p := t.prev(i)
	return p >= 0 && t.toks[p].kind == PUNCT && (t.toks[p].lit == "." || t.toks[p].lit == "->")
}

// ident translates the identifier at i.
func (t *translator) ident(i int) {
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
				t.rep.Replaced[e.Family]++
			}
			t.useCompat(to)
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
	if to != tk.lit {
		t.addEdit(tk.pos.Offset, tk.pos.Offset+len(tk.lit), to)
		t.rep.Replaced[e.Family]++
	}
	t.useCompat(to) // the name written: a translated file asks for the same pieces again
}

// stringLit renames whole words in a string literal that are CUDA API names.
func (t *translator) stringLit(i int) {
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
				t.rep.Replaced[e.Family]++
			}
		}
		j = k
	}
	if changed {
		b.WriteString(lit[last:])
		t.addEdit(tk.pos.Offset, tk.pos.Offset+len(lit), b.String())
	}
}

// launch rewrites the kernel launch whose <<< is at i.
func (t *translator) launch(i int) {
	j, depth := i, 0
	for ; j < len(t.toks); j++ {
		switch t.toks[j].kind {
		case LAUNCH:
			depth++
		case ENDLAUNCH:
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if j >= len(t.toks) {
		return
	}
	p := t.next(j)
	if !t.isPunct(p, "(") {
		return
	}
	q := t.matching(p)
	if q < 0 {
		return
	}
	ks := t.kernelNameStart(i)
	if ks < 0 || t.isMember(ks) {
		return
	}
	// render the pieces in source order (render consumes the edits inside)
	nameEnd := t.endOf(t.prev(i))
	name := strings.TrimSpace(t.render(t.toks[ks].pos.Offset, nameEnd))
	cfg := t.splitArgs(i, j)
	if len(cfg) < 2 || len(cfg) > 4 {
		return
	}
	for _, r := range cfg {
		if r[0] >= r[1] || t.rangeEmpty(r) {
			return // an empty configuration argument: not a launch to rewrite
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
	t.addOuter(t.toks[ks].pos.Offset, t.endOf(q), b.String())
	t.rep.Replaced["launch"]++
}

// argText renders an argument range trimmed; dim wraps it in dim3(...)
// unless it already is one.
func (t *translator) argText(r [2]int, dim bool) string {
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
func (t *translator) kernelNameStart(i int) int {
	j := t.prev(i)
	for {
		if j < 0 {
			return -1
		}
		if t.toks[j].kind == PUNCT && (t.toks[j].lit == ">" || t.toks[j].lit == ">>") {
			depth := 0
			for ; j >= 0; j-- {
				tk := &t.toks[j]
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
			j = t.prev(j)
		}
		if j < 0 || t.toks[j].kind != IDENT {
			return -1
		}
		start := j
		p := t.prev(j)
		if !t.isPunct(p, "::") {
			return start
		}
		pp := t.prev(p)
		if pp < 0 || t.toks[pp].kind != IDENT && !(t.toks[pp].kind == PUNCT && t.toks[pp].lit == ">") {
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
