package hipify

// ROCm 7 made warpSize a run-time value: a use in a constant expression
// no longer compiles there. Where host and device need not agree on the
// value, the use becomes ROCMK_WARP_SIZE (rocmk_hip_compat.h: the target's
// wave size in each device pass, 64 in the host pass, as warpSize was up to
// HIP 6.4); elsewhere it stays, reported with the fix.

// warpState is what the warpSize translation keeps for one file.
type warpState struct {
	aliases map[string]string // #define NAME warpSize: NAME -> "" if every constant use is safe, else the first unsafe use
	defs    map[int]string    // the warpSize token of each such #define -> NAME
	asserts map[int]bool      // static_assert keywords already rewritten
}

const (
	warpFix = "use a per-target constant (64 on gfx9 CDNA/GCN, 32 on gfx10+ RDNA) where host and device agree, " +
		"or move the use to run time (warpSize in device code, hipDeviceAttributeWarpSize on the host)"
	warpROCm7 = "ROCm 7 made warpSize a run-time value, so this no longer compiles there"
)

// warpSizeUse translates or reports warpSize (or a macro defined as it) at
// i where it must be a constant expression.
func (t *translator) warpSizeUse(i int) {
	tk := &t.toks[i]
	if tk.lit != "warpSize" && !t.isAlias(tk.lit) {
		return
	}
	if name, ok := t.warp().defs[i]; ok {
		t.warpAlias(i, name)
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
		bad := t.warp().aliases[tk.lit]
		if bad == "" && ctx == ctxAssert {
			t.deviceAssert(at)
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
	t.rep.Replaced["warpsize"]++
	msg := "warpSize " + ctx + " -> ROCMK_WARP_SIZE (rocmk_hip_compat.h): the target's wave size in each device pass, 64 in the host pass"
	if ctx == ctxAssert {
		t.deviceAssert(at)
		msg = "warpSize " + ctx + " -> ROCMK_WARP_SIZE in ROCMK_DEVICE_STATIC_ASSERT: checked against each target's wave size in its device pass"
	}
	t.diag(tk.pos, SevTranslated, "warpsize-constant", tk.lit, msg)
}

const ctxAssert = "in a static_assert"

// warpSafe says whether a constant warpSize at i may take a value that
// differs between the host pass and the device passes, and if not, where
// it is.
func (t *translator) warpSafe(i int, ctx string) (bool, string) {
	inFunc, device := t.enclosingFunction(i)
	switch ctx {
	case ctxAssert:
		return true, "" // becomes a device-pass-only check
	case ctxLaunchBounds:
		return false, ""
	case ctxArrayBound:
		// host and device only use a local or __shared__ array on their
		// own; the host's 64 is the larger bound
		if inFunc || t.stmtHas(i, "__shared__") {
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
func (t *translator) deviceAssert(at int) {
	ws := t.warp()
	if at < 0 || ws.asserts[at] || t.opt.NoCompat {
		return
	}
	ws.asserts[at] = true
	p := t.toks[at].pos.Offset
	t.addEdit(p, p+len("static_assert"), "ROCMK_DEVICE_STATIC_ASSERT")
	t.needCompat(compatByName["warpsize"])
}

// warpAlias translates the body of #define NAME warpSize when every use of
// NAME in a constant expression in this file is safe.
func (t *translator) warpAlias(i int, name string) {
	if t.warp().aliases[name] != "" || t.opt.NoCompat {
		return
	}
	tk := &t.toks[i]
	t.addEdit(tk.pos.Offset, tk.pos.Offset+len(tk.lit), "ROCMK_WARP_SIZE")
	t.needCompat(compatByName["warpsize"])
	t.rep.Replaced["warpsize"]++
	t.diag(tk.pos, SevTranslated, "warpsize-constant", name, name+": #define'd as warpSize -> ROCMK_WARP_SIZE (rocmk_hip_compat.h): "+
		"its constant uses in this file are in device code (uses in other files are not checked)")
}

func (t *translator) isAlias(name string) bool {
	_, ok := t.warp().aliases[name]
	return ok
}

// warp finds the file's #define NAME warpSize (or (warpSize)) and checks
// each NAME's uses in constant expressions.
func (t *translator) warp() *warpState {
	if t.ws != nil {
		return t.ws
	}
	ws := &warpState{aliases: map[string]string{}, defs: map[int]string{}, asserts: map[int]bool{}}
	t.ws = ws
	for i := range t.toks {
		tk := &t.toks[i]
		if tk.kind != IDENT || tk.lit != "warpSize" || tk.pp != "define" || !tk.inDefn || tk.skip {
			continue
		}
		p, n := t.prev(i), t.next(i)
		if t.isPunct(p, "(") && t.isPunct(n, ")") {
			p, n = t.prev(p), t.next(n)
		}
		if p >= 0 && t.toks[p].kind == IDENT && !t.toks[p].inDefn && (n >= len(t.toks) || t.toks[n].kind == PPEND) {
			ws.defs[i] = t.toks[p].lit
			ws.aliases[t.toks[p].lit] = ""
		}
	}
	for i := 0; len(ws.aliases) > 0 && i < len(t.toks); i++ {
		tk := &t.toks[i]
		bad, ok := ws.aliases[tk.lit]
		if !ok || bad != "" || tk.kind != IDENT || tk.pp != "" || tk.skip || t.isMember(i) {
			continue
		}
		if ctx, _ := t.constantContext(i); ctx != "" {
			if safe, where := t.warpSafe(i, ctx); !safe {
				ws.aliases[tk.lit] = "it is used " + ctx + where + " at " + t.position(tk.pos).String()
			}
		}
	}
	return ws
}

// enclosingFunction says whether i is in a function body, and whether that
// function is device code only (__global__, or __device__ without __host__).
// Blocks of control statements and lambdas belong to the function around them.
func (t *translator) enclosingFunction(i int) (inFunc, device bool) {
	depth := 0
	for j := t.prev(i); j >= 0; j = t.prev(j) {
		tk := &t.toks[j]
		if tk.kind != PUNCT || tk.pp != "" || tk.skip {
			continue
		}
		switch {
		case tk.lit == "}":
			depth++
		case tk.lit == "{" && depth > 0:
			depth--
		case tk.lit == "{":
			switch kind := t.blockKind(j); kind {
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
func (t *translator) blockKind(open int) string {
	p := t.prev(open)
	for p >= 0 && t.toks[p].kind == IDENT && (t.toks[p].lit == "const" || t.toks[p].lit == "noexcept" || t.toks[p].lit == "override" || t.toks[p].lit == "mutable") {
		p = t.prev(p)
	}
	if p < 0 {
		return "scope"
	}
	pt := &t.toks[p]
	if pt.kind == IDENT && (pt.lit == "else" || pt.lit == "do" || pt.lit == "try" || pt.lit == "return") {
		return "control"
	}
	if pt.kind == PUNCT && pt.lit != ")" {
		return "control" // { } ; = , ( : ...
	}
	if pt.kind != PUNCT {
		return "scope" // struct S {, namespace n {, extern "C" {
	}
	o := t.openingParen(p)
	if o < 0 {
		return "control"
	}
	f := t.prev(o)
	if f < 0 || t.toks[f].kind != IDENT {
		return "control" // a lambda's body
	}
	switch t.toks[f].lit {
	case "if", "for", "while", "switch", "catch":
		return "control"
	}
	dev, host, glob := false, false, false
	for j := f; j >= 0; j = t.prev(j) {
		q := &t.toks[j]
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
func (t *translator) openingParen(close int) int {
	depth := 0
	for j := close; j >= 0; j = t.prev(j) {
		switch {
		case t.isPunct(j, ")"):
			depth++
		case t.isPunct(j, "("):
			if depth--; depth == 0 {
				return j
			}
		case t.isPunct(j, ";") || t.isPunct(j, "{") || t.isPunct(j, "}"):
			return -1
		}
	}
	return -1
}

// stmtHas reports whether the statement around i has the identifier name
// before i.
func (t *translator) stmtHas(i int, name string) bool {
	for j := t.prev(i); j >= 0; j = t.prev(j) {
		tk := &t.toks[j]
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
func (t *translator) declaresName(i int) bool {
	p := t.prev(i)
	if p < 0 || t.toks[p].kind != IDENT {
		return false
	}
	switch t.toks[p].lit {
	case "return", "case", "sizeof", "throw", "co_return", "else", "do":
		return false
	}
	return true
}
