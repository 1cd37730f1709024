package hipify

import (
	"bytes"
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
	emitted := map[string]bool{}
	hazards := !t.opt.NoHazards
	// first pass: includes, to know whether hip_runtime.h is already there
	for i := 0; i < len(t.toks); i++ {
		tk := &t.toks[i]
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
		if name == hipRuntimeH {
			runtimeIncludes++
			haveRuntime = true
			continue
		}
		mapped, ok := mapHeader(name, t.opt)
		if !ok {
			continue
		}
		end := i
		for end+1 < len(t.toks) && t.toks[end+1].kind != PPEND {
			end++
		}
		if mapped == hipRuntimeH && haveRuntime || mapped == "" || emitted[mapped] {
			// drop the duplicate (or header-less) include, keep the line
			t.addEdit(tk.pos.Offset, t.endOf(end), "")
		} else {
			t.addEdit(t.toks[h].pos.Offset+1, t.toks[h].pos.Offset+len(lit)-1, mapped)
			haveRuntime = haveRuntime || mapped == hipRuntimeH
			emitted[mapped] = true
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
			if hazards {
				t.identHazards(i)
			}
			if t.special(i) {
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
}

// insertRuntimeInclude adds #include <hip/hip_runtime.h> after #pragma once
// or an include guard's #ifndef, else before the first line of code.
func (t *translator) insertRuntimeInclude() {
	const inc = "#include <hip/hip_runtime.h>"
	first := t.next(-1)
	if first >= len(t.toks) {
		return
	}
	tk := &t.toks[first]
	lineEnd := func(i int) int {
		for i < len(t.toks) && t.toks[i].kind != PPEND {
			i++
		}
		if i < len(t.toks) {
			return t.toks[i].pos.Offset
		}
		return len(t.src)
	}
	if tk.kind == HASH && (tk.lit == "#pragma" && t.next(first) < len(t.toks) && t.toks[t.next(first)].lit == "once" ||
		tk.lit == "#ifndef" && t.isGuard(first)) {
		end := lineEnd(first)
		t.fixed = append(t.fixed, edit{start: end, end: end, text: "\n" + inc})
		t.rep.Replaced["include"]++
		return
	}
	start := tk.pos.Offset - (tk.pos.Column - 1)
	if len(bytes.TrimSpace(t.src[start:tk.pos.Offset])) > 0 {
		start = tk.pos.Offset // the line starts inside a comment: insert right before the code
	}
	t.fixed = append(t.fixed, edit{start: start, end: start, text: inc + "\n"})
	t.rep.Replaced["include"]++
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
