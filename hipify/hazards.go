package hipify

import "strings"

const wave64 = "AMD CDNA GPUs (gfx90a, gfx942) run 64-lane wavefronts: use warpSize, not 32"

var halfTypes = map[string]string{
	"__half":         "__half: HIP's fp16 type has the same name but its intrinsics and conversion rounding can differ; check numerics",
	"__half2":        "__half2: HIP's packed fp16 type; check intrinsics and conversions",
	"__nv_bfloat16":  "__nv_bfloat16 -> __hip_bfloat16: a different type in HIP (struct with its own operators and conversions); check arithmetic and casts",
	"nv_bfloat16":    "nv_bfloat16 -> __hip_bfloat16: a different type in HIP (struct with its own operators and conversions); check arithmetic and casts",
	"__nv_bfloat162": "__nv_bfloat162 -> __hip_bfloat162: a pair of hip_bfloat16 (rocmk_hip_compat.h before HIP 6); check arithmetic and casts",
	"nv_bfloat162":   "nv_bfloat162 -> __hip_bfloat162: a pair of hip_bfloat16 (rocmk_hip_compat.h before HIP 6); check arithmetic and casts",
}

// identHazards looks for porting hazards at the identifier at i.
func (t *pass) identHazards(i int) {
	tk := &t.toks[i]
	switch tk.lit {
	case "asm", "__asm__", "__asm":
		if t.isAsm(i) {
			t.diag(tk.pos, SevHazard, "inline-asm", tk.lit, t.asmHazard(i))
		}
	case "texture":
		if t.isPunct(t.next(i), "<") {
			t.diag(tk.pos, SevHazard, "texture-ref", tk.lit, "texture references were removed in CUDA 12 and are deprecated in HIP: use texture objects (hipTextureObject_t)")
		}
	case "__ballot_sync", "__ballot", "__activemask":
		if t.ballotInto32(i) {
			t.diag(tk.pos, SevHazard, "warp-size", tk.lit, tk.lit+" result stored in a 32-bit integer: HIP's ballot mask is 64-bit on wave64 GPUs; "+wave64)
		}
	default:
		if msg, ok := halfTypes[tk.lit]; ok && !t.isMember(i) {
			t.hazardOnce(tk.pos, "half-type", tk.lit, msg)
		}
	}
}

// ballotInto32 reports whether the statement holding the call at i declares
// or casts to a 32-bit integer (unsigned, int, uint32_t) and no 64-bit one.
func (f *file) ballotInto32(i int) bool {
	has32 := false
	for j := f.prev(i); j >= 0; j = f.prev(j) {
		p := &f.toks[j]
		if p.kind == PUNCT && (p.lit == ";" || p.lit == "{" || p.lit == "}") || p.kind == PPEND || p.kind == HASH {
			break
		}
		if p.kind != IDENT {
			continue
		}
		switch p.lit {
		case "long", "uint64_t", "int64_t", "size_t", "auto", "unsigned long long":
			return false
		case "unsigned", "int", "uint32_t", "int32_t", "uint":
			has32 = true
		}
	}
	return has32
}

// numberHazards looks for warp-size-32 assumptions at the number at i.
func (t *pass) numberHazards(i int) {
	tk := &t.toks[i]
	lit := strings.ToLower(strings.TrimRight(tk.lit, "uUlL"))
	switch lit {
	case "32":
		if tk.pp == "define" {
			// #define WARP_SIZE 32
			if n := t.prev(i); n >= 0 && t.toks[n].kind == IDENT && strings.Contains(strings.ToUpper(t.toks[n].lit), "WARP") {
				t.diag(tk.pos, SevHazard, "warp-size", t.toks[n].lit, t.toks[n].lit+" is defined as 32: "+wave64)
			}
			return
		}
		if p := t.prev(i); p >= 0 && t.toks[p].kind == PUNCT && (t.toks[p].lit == "%" || t.toks[p].lit == "/") && t.laneContext(i) {
			t.diag(tk.pos, SevHazard, "warp-size", "32", "lane/warp index computed with "+t.toks[p].lit+" 32: "+wave64)
		}
	case "31", "0x1f":
		if p := t.prev(i); p >= 0 && t.isPunct(p, "&") && t.laneContext(i) {
			t.diag(tk.pos, SevHazard, "warp-size", tk.lit, "lane index computed with & "+tk.lit+": "+wave64)
		}
	case "0xffffffff":
		// a full 32-lane mask passed to a warp intrinsic
		for j, depth := t.prev(i), 0; j >= 0 && depth >= 0; j = t.prev(j) {
			p := &t.toks[j]
			if p.kind == PUNCT {
				switch p.lit {
				case ")":
					depth++
				case "(":
					if depth == 0 {
						if f := t.prev(j); f >= 0 && t.toks[f].kind == IDENT && strings.HasSuffix(t.toks[f].lit, "_sync") {
							t.diag(tk.pos, SevHazard, "warp-size", tk.lit, "32-bit full-warp mask "+tk.lit+" for "+t.toks[f].lit+": "+wave64)
						}
						return
					}
					depth--
				case ";", "{", "}":
					return
				}
			}
		}
	}
}

// laneContext reports whether the statement around i mentions threadIdx,
// laneId-like or warp-like names.
func (f *file) laneContext(i int) bool {
	check := func(j int) (bool, bool) {
		p := &f.toks[j]
		if p.kind == PUNCT && (p.lit == ";" || p.lit == "{" || p.lit == "}") || p.kind == PPEND {
			return false, true
		}
		if p.kind == IDENT {
			l := strings.ToLower(p.lit)
			if l == "threadidx" || strings.Contains(l, "lane") || strings.Contains(l, "warp") || l == "tid" {
				return true, true
			}
		}
		return false, false
	}
	for j := f.prev(i); j >= 0; j = f.prev(j) {
		if ok, stop := check(j); stop {
			if ok {
				return true
			}
			break
		}
	}
	for j := f.next(i); j < len(f.toks); j = f.next(j) {
		if ok, stop := check(j); stop {
			return ok
		}
	}
	return false
}

// What constantContext finds.
const (
	ctxArrayBound   = "as an array bound"
	ctxLaunchBounds = "in __launch_bounds__"
)

// constantContext says where warpSize at i must be a constant expression
// ("in a constexpr declaration", "in a static_assert", "as an array
// bound", "as a template argument", "as a case label", "in
// __launch_bounds__"), or "", with the index of the static_assert,
// constexpr or __launch_bounds__ that makes it one (-1: none).
func (f *file) constantContext(i int) (string, int) {
	p, n := f.prev(i), f.next(i)
	switch {
	case f.isPunct(p, "<") && (f.isPunct(n, ">") || f.isPunct(n, ",")) && f.isIdent(f.prev(p)):
		return "as a template argument", -1
	case p >= 0 && f.toks[p].kind == IDENT && f.toks[p].lit == "case":
		return "as a case label", -1
	}
	depth, square := 0, 0
	for j := p; j >= 0; j = f.prev(j) {
		tk := &f.toks[j]
		if tk.kind == PUNCT && (tk.lit == ";" || tk.lit == "{" || tk.lit == "}") || tk.kind == PPEND || tk.kind == HASH {
			return "", -1
		}
		switch {
		case tk.kind == PUNCT && tk.lit == "]":
			square++
		case tk.kind == PUNCT && tk.lit == "[" && square > 0:
			square--
		case tk.kind == PUNCT && tk.lit == "[":
			if f.declarator(j) {
				return ctxArrayBound, -1 // T name[... warpSize ...]: a declaration, not an index
			}
		case tk.kind == PUNCT && tk.lit == ")":
			depth++
		case tk.kind == PUNCT && tk.lit == "(":
			depth--
		case tk.kind == IDENT && tk.lit == "constexpr" && f.isIdent(f.prev(j)) && f.toks[f.prev(j)].lit == "if":
			return "in an if constexpr", j
		case tk.kind == IDENT && tk.lit == "constexpr":
			return "in a constexpr declaration", j
		case tk.kind == IDENT && tk.lit == "static_assert" && depth < 0:
			return ctxAssert, j
		case tk.kind == IDENT && tk.lit == "__launch_bounds__" && depth < 0:
			return ctxLaunchBounds, j
		}
	}
	return "", -1
}

// declarator reports whether the [ at i follows "T name" or "T name[...]"
// (a declaration, not an index: return a[i] is one).
func (f *file) declarator(i int) bool {
	n := f.prev(i)
	for f.isPunct(n, "]") { // T name[2][warpSize]
		for n = f.prev(n); n >= 0 && !f.isPunct(n, "[") && !f.isPunct(n, ";"); n = f.prev(n) {
		}
		n = f.prev(n)
	}
	ty := f.prev(n)
	if !f.isIdent(n) || !f.isIdent(ty) {
		return false
	}
	switch f.toks[ty].lit {
	case "return", "case", "sizeof", "throw", "co_return", "else", "do", "delete", "new":
		return false
	}
	return true
}

func (f *file) isIdent(i int) bool { return i >= 0 && i < len(f.toks) && f.toks[i].kind == IDENT }
