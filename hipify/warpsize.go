package hipify

// ROCm 7 made warpSize a run-time value: a use in a constant expression
// no longer compiles there. Where host and device need not agree on the
// value, the use becomes ROCMK_WARP_SIZE (rocmk_hip_compat.h: the target's
// wave size in each device pass, 64 in the host pass, as warpSize was up to
// HIP 6.4); elsewhere it stays, reported with the fix.

// warpDefs are the file's #define NAME warpSize (see warpDefsOf): a
// function of the file, read-only once found.
type warpDefs struct {
	aliases map[string]string // NAME -> "" if every constant use is safe, else the first unsafe use
	defs    map[int]string    // the warpSize token of each such #define -> NAME
}

// warpUses is the token pass's warpSize part: the file's defines and the
// static_asserts it has rewritten (each once).
type warpUses struct {
	warpDefs
	asserts map[int]bool
}

func newWarpUses(f *file) *warpUses {
	return &warpUses{warpDefs: f.warpDefsOf(), asserts: map[int]bool{}}
}

const (
	warpFix = "use a per-target constant (64 on gfx9 CDNA/GCN, 32 on gfx10+ RDNA) where host and device agree, " +
		"or move the use to run time (warpSize in device code, hipDeviceAttributeWarpSize on the host)"
	warpROCm7 = "ROCm 7 made warpSize a run-time value, so this no longer compiles there"
)

// warpSizeUse translates or reports warpSize (or a macro defined as it) at
// i where it must be a constant expression.
func (t *pass) warpSizeUse(w *warpUses, i int) {
	tk := &t.toks[i]
	if tk.lit != "warpSize" && !w.isAlias(tk.lit) {
		return
	}
	if name, ok := w.defs[i]; ok {
		t.warpAlias(w, i, name)
		return
	}
	if tk.pp != "" || t.isMember(i) || tk.lit == "warpSize" && t.declaresName(i) {
		return // warpSize in another macro's body: its uses are not visible here
	}
	ctx, at := t.constantContext(i)
	if ctx == "" {
		return
	}
	safe, where := t.warpSafe(i, ctx)
	if tk.lit != "warpSize" { // NAME of #define NAME warpSize
		bad := w.aliases[tk.lit]
		if bad == "" && ctx == ctxAssert {
			t.deviceAssert(w, at)
		} else if bad != "" && !t.opt.NoHazards {
			why := "; kept, because " + bad
			if !safe {
				why = where
			}
			t.diag(tk.pos, SevHazard, "warpsize-constant", tk.lit, tk.lit+" (#define'd as warpSize) "+ctx+why+": "+warpROCm7+"; "+warpFix)
		}
		return
	}
	if !safe || t.opt.NoCompat {
		if !t.opt.NoHazards {
			t.diag(tk.pos, SevHazard, "warpsize-constant", tk.lit, "warpSize "+ctx+where+": "+warpROCm7+"; "+warpFix)
		}
		return
	}
	t.addEdit(tk.pos.Offset, tk.pos.Offset+len(tk.lit), "ROCMK_WARP_SIZE")
	t.needCompat(compatByName["warpsize"])
	t.o.rep.Replaced["warpsize"]++
	msg := "warpSize " + ctx + " -> ROCMK_WARP_SIZE (rocmk_hip_compat.h): the target's wave size in each device pass, 64 in the host pass"
	if ctx == ctxAssert {
		t.deviceAssert(w, at)
		msg = "warpSize " + ctx + " -> ROCMK_WARP_SIZE in ROCMK_DEVICE_STATIC_ASSERT: checked against each target's wave size in its device pass"
	}
	t.diag(tk.pos, SevTranslated, "warpsize-constant", tk.lit, msg)
}

const ctxAssert = "in a static_assert"

// warpSafe says whether a constant warpSize at i may take a value that
// differs between the host pass and the device passes, and if not, where
// it is.
func (f *file) warpSafe(i int, ctx string) (bool, string) {
	inFunc, device := f.enclosingFunction(i)
	switch ctx {
	case ctxAssert:
		return true, "" // becomes a device-pass-only check
	case ctxLaunchBounds:
		return false, ""
	case ctxArrayBound:
		// host and device only use a local or __shared__ array on their
		// own; the host's 64 is the larger bound
		if inFunc || f.stmtHas(i, "__shared__") {
			return true, ""
		}
		return false, " outside a function (a type's layout host and device share)"
	}
	if device {
		return true, ""
	}
	return false, " outside device code (host and device must agree on it)"
}

// deviceAssert rewrites the static_assert at to a device-pass-only one
// (once), so that it checks each target's wave size.
func (t *pass) deviceAssert(w *warpUses, at int) {
	if at < 0 || w.asserts[at] || t.opt.NoCompat {
		return
	}
	w.asserts[at] = true
	p := t.toks[at].pos.Offset
	t.addEdit(p, p+len("static_assert"), "ROCMK_DEVICE_STATIC_ASSERT")
	t.needCompat(compatByName["warpsize"])
}

// warpAlias translates the body of #define NAME warpSize when every use of
// NAME in a constant expression in this file is safe.
func (t *pass) warpAlias(w *warpUses, i int, name string) {
	if w.aliases[name] != "" || t.opt.NoCompat {
		return
	}
	tk := &t.toks[i]
	t.addEdit(tk.pos.Offset, tk.pos.Offset+len(tk.lit), "ROCMK_WARP_SIZE")
	t.needCompat(compatByName["warpsize"])
	t.o.rep.Replaced["warpsize"]++
	t.diag(tk.pos, SevTranslated, "warpsize-constant", name, name+": #define'd as warpSize -> ROCMK_WARP_SIZE (rocmk_hip_compat.h): "+
		"its constant uses in this file are in device code (uses in other files are not checked)")
}

func (w *warpDefs) isAlias(name string) bool {
	_, ok := w.aliases[name]
	return ok
}

// warpDefsOf finds the file's #define NAME warpSize (or (warpSize)) and checks
// each NAME's uses in constant expressions.
func (f *file) warpDefsOf() warpDefs {
	ws := warpDefs{aliases: map[string]string{}, defs: map[int]string{}}
	for i := range f.toks {
		tk := &f.toks[i]
		if tk.kind != IDENT || tk.lit != "warpSize" || tk.pp != "define" || !tk.inDefn || tk.skip {
			continue
		}
		p, n := f.prev(i), f.next(i)
		if f.isPunct(p, "(") && f.isPunct(n, ")") {
			p, n = f.prev(p), f.next(n)
		}
		if p >= 0 && f.toks[p].kind == IDENT && !f.toks[p].inDefn && (n >= len(f.toks) || f.toks[n].kind == PPEND) {
			ws.defs[i] = f.toks[p].lit
			ws.aliases[f.toks[p].lit] = ""
		}
	}
	for i := 0; len(ws.aliases) > 0 && i < len(f.toks); i++ {
		tk := &f.toks[i]
		bad, ok := ws.aliases[tk.lit]
		if !ok || bad != "" || tk.kind != IDENT || tk.pp != "" || tk.skip || f.isMember(i) {
			continue
		}
		if ctx, _ := f.constantContext(i); ctx != "" {
			if safe, where := f.warpSafe(i, ctx); !safe {
				ws.aliases[tk.lit] = "it is used " + ctx + where + " at " + f.position(tk.pos).String()
			}
		}
	}
	return ws
}

// enclosingFunction says whether i is in a function body, and whether that
// function is device code only (__global__, or __device__ without __host__).
// Blocks of control statements and lambdas belong to the function around them.
func (f *file) enclosingFunction(i int) (inFunc, device bool) {
	depth := 0
	for j := f.prev(i); j >= 0; j = f.prev(j) {
		tk := &f.toks[j]
		if tk.kind != PUNCT || tk.pp != "" || tk.skip {
			continue
		}
		switch {
		case tk.lit == "}":
			depth++
		case tk.lit == "{" && depth > 0:
			depth--
		case tk.lit == "{":
			switch kind := f.blockKind(j); kind {
			case "scope":
				return false, false
			case "control":
			default:
				return true, kind == "device"
			}
		}
	}
	return false, false
}

// blockKind says what the { at open starts: "device" or "host" (a
// function body), "control" (a statement's or lambda's block, an
// initializer) or "scope" (a namespace, class or extern "C").
func (f *file) blockKind(open int) string {
	p := f.prev(open)
	for p >= 0 && f.toks[p].kind == IDENT && (f.toks[p].lit == "const" || f.toks[p].lit == "noexcept" || f.toks[p].lit == "override" || f.toks[p].lit == "mutable") {
		p = f.prev(p)
	}
	if p < 0 {
		return "scope"
	}
	pt := &f.toks[p]
	if pt.kind == IDENT && (pt.lit == "else" || pt.lit == "do" || pt.lit == "try" || pt.lit == "return") {
		return "control"
	}
	if pt.kind == PUNCT && pt.lit != ")" {
		return "control" // { } ; = , ( : ...
	}
	if pt.kind != PUNCT {
		return "scope" // struct S {, namespace n {, extern "C" {
	}
	o := f.openingParen(p)
	if o < 0 {
		return "control"
	}
	fn := f.prev(o)
	if fn < 0 || f.toks[fn].kind != IDENT {
		return "control" // a lambda's body
	}
	switch f.toks[fn].lit {
	case "if", "for", "while", "switch", "catch":
		return "control"
	}
	dev, host, glob := false, false, false
	for j := fn; j >= 0; j = f.prev(j) {
		q := &f.toks[j]
		if q.kind == PPEND || q.kind == PUNCT && (q.lit == ";" || q.lit == "{" || q.lit == "}") {
			break
		}
		switch q.lit {
		case "__device__":
			dev = true
		case "__host__":
			host = true
		case "__global__":
			glob = true
		}
	}
	if glob || dev && !host {
		return "device"
	}
	return "host"
}

// openingParen returns the ( that the ) at close matches, or -1.
func (f *file) openingParen(close int) int {
	depth := 0
	for j := close; j >= 0; j = f.prev(j) {
		switch {
		case f.isPunct(j, ")"):
			depth++
		case f.isPunct(j, "("):
			if depth--; depth == 0 {
				return j
			}
		case f.isPunct(j, ";") || f.isPunct(j, "{") || f.isPunct(j, "}"):
			return -1
		}
	}
	return -1
}

// stmtHas reports whether the statement around i has the identifier name
// before i.
func (f *file) stmtHas(i int, name string) bool {
	for j := f.prev(i); j >= 0; j = f.prev(j) {
		tk := &f.toks[j]
		if tk.kind == PUNCT && (tk.lit == ";" || tk.lit == "{" || tk.lit == "}") || tk.kind == PPEND {
			return false
		}
		if tk.kind == IDENT && tk.lit == name {
			return true
		}
	}
	return false
}

// declaresName reports whether the identifier at i is the name being
// declared (int warpSize = 0;), not a use.
func (f *file) declaresName(i int) bool {
	p := f.prev(i)
	if p < 0 || f.toks[p].kind != IDENT {
		return false
	}
	switch f.toks[p].lit {
	case "return", "case", "sizeof", "throw", "co_return", "else", "do":
		return false
	}
	return true
}
