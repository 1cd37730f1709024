package hipify

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Single-instruction inline PTX, the wrappers ML kernels keep in their
// math headers (FasterTransformer, vLLM, FlashInfer):
//
//	asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
//
// becomes a call of the compatibility header's function for that
// instruction, on the same operands:
//
//	(y) = rocmk_ptx_ex2_approx_f32((x));
//
// Only the instructions of ptxOps are translated, each to CUDA's semantics
// (approximations are computed exactly: the result is at least as close);
// anything else (several instructions, predicates, registers declared in
// the asm, operands the table does not expect) stays PTX and reported.

// ptxOp is how one PTX instruction maps: fn is the compat function, dsts
// the leading operands it writes (scalars assigned from fn's result; a
// vector {a, b} passed as pointers), and the rest are its arguments in
// order ([addr] operands without the brackets).
type ptxOp struct {
	fn   string
	dsts int
	args int // operands after the destinations
	// vecDst: the destination is a {lo, hi} vector passed as pointers
	vecDst bool
	// addrCast, when set, is the cast of operand addr, an address (an "l"
	// operand: a pointer or a 64-bit integer)
	addr     int
	addrCast string
}

// reLdSt matches the loads and stores translated: generic or global state
// space, any cache hint, weak, volatile, relaxed, acquire or release, scalar
// or .v2/.v4, 8 to 64 bits. Shared-memory addresses (32-bit windows) are not.
var reLdSt = regexp.MustCompile(`^(ld|st)((?:\.(?:global|weak|volatile|relaxed|acquire|release|cta|cluster|gpu|sys|` +
	`cs|cg|ca|lu|cv|nc|wb|wt|L1::no_allocate|L1::evict_[a-z_]+|L2::[0-9A-Za-z_]+))*)(?:\.v([24]))?\.([bsuf])(8|16|32|64)$`)

var ptxCTypes = map[string]string{"b8": "unsigned char", "u8": "unsigned char", "s8": "signed char", "b16": "unsigned short",
	"u16": "unsigned short", "s16": "short", "f16": "unsigned short", "b32": "unsigned int", "u32": "unsigned int", "s32": "int",
	"f32": "float", "b64": "unsigned long long", "u64": "unsigned long long", "s64": "long long", "f64": "double"}

// ldstOp maps ld/st instructions: rocmk_ptx_ld<T, order>(addr, &d...) and
// rocmk_ptx_st<T, order>(addr, v...), order 0 weak, 1 volatile or relaxed,
// 2 acquire (ld) or release (st).
func ldstOp(name string) (ptxOp, bool) {
	m := reLdSt.FindStringSubmatch(name)
	if m == nil {
		return ptxOp{}, false
	}
	typ, ok := ptxCTypes[m[4]+m[5]]
	if !ok {
		return ptxOp{}, false
	}
	order := "0"
	switch {
	case strings.Contains(m[2], ".acquire") || strings.Contains(m[2], ".release"):
		order = "2"
	case strings.Contains(m[2], ".volatile") || strings.Contains(m[2], ".relaxed"):
		order = "1"
	}
	if m[1] == "ld" && strings.Contains(m[2], ".release") || m[1] == "st" && strings.Contains(m[2], ".acquire") {
		return ptxOp{}, false
	}
	n := 1
	if m[3] != "" {
		n = int(m[3][0] - '0')
	}
	fn := "rocmk_ptx_" + m[1] + "<" + typ + ", " + order + ">"
	if m[1] == "ld" {
		return ptxOp{fn: fn, dsts: n, args: 1, vecDst: true, addr: n, addrCast: "const void *"}, true
	}
	return ptxOp{fn: fn, args: 1 + n, addr: 0, addrCast: "void *"}, true
}

// ptxFuncs are the compat header's functions for them (its ptx piece):
// those of ptxOps, and the load and store templates of ldstOp.
var ptxFuncs = func() []string {
	fns := []string{"rocmk_ptx_ld", "rocmk_ptx_st", "rocmk_ptx_cp_async", "rocmk_ptx_laneid"}
	for _, op := range ptxOps {
		if !slices.Contains(fns, op.fn) {
			fns = append(fns, op.fn)
		}
	}
	sort.Strings(fns)
	return fns
}()

// ptxOps are the single instructions translated (ld/st: ldstOp).
var ptxOps = func() map[string]ptxOp {
	ops := map[string]ptxOp{}
	for fn, names := range map[string][]string{
		"rocmk_ptx_ex2_approx_f32":    {"ex2.approx.f32", "ex2.approx.ftz.f32"},
		"rocmk_ptx_lg2_approx_f32":    {"lg2.approx.f32", "lg2.approx.ftz.f32"},
		"rocmk_ptx_rcp_approx_f32":    {"rcp.approx.f32", "rcp.approx.ftz.f32"},
		"rocmk_ptx_rsqrt_approx_f32":  {"rsqrt.approx.f32", "rsqrt.approx.ftz.f32"},
		"rocmk_ptx_sqrt_approx_f32":   {"sqrt.approx.f32", "sqrt.approx.ftz.f32"},
		"rocmk_ptx_sin_approx_f32":    {"sin.approx.f32", "sin.approx.ftz.f32"},
		"rocmk_ptx_cos_approx_f32":    {"cos.approx.f32", "cos.approx.ftz.f32"},
		"rocmk_ptx_tanh_approx_f32":   {"tanh.approx.f32"},
		"rocmk_ptx_ex2_approx_f16":    {"ex2.approx.f16"},
		"rocmk_ptx_ex2_approx_f16x2":  {"ex2.approx.f16x2"},
		"rocmk_ptx_tanh_approx_f16":   {"tanh.approx.f16"},
		"rocmk_ptx_tanh_approx_f16x2": {"tanh.approx.f16x2"},
		"rocmk_ptx_cvt_f32_f16":       {"cvt.f32.f16"},
		"rocmk_ptx_cvt_rn_f16_f32":    {"cvt.rn.f16.f32"},
	} {
		for _, n := range names {
			ops[n] = ptxOp{fn: fn, dsts: 1, args: 1}
		}
	}
	ops["cvt.rn.f16x2.f32"] = ptxOp{fn: "rocmk_ptx_cvt_rn_f16x2_f32", dsts: 1, args: 2}
	ops["mov.b32"] = ptxOp{fn: "rocmk_ptx_mov_b32_pack", dsts: 1, args: 2} // mov.b32 d, {lo, hi}
	ops["mov.b32 unpack"] = ptxOp{fn: "rocmk_ptx_mov_b32_unpack", dsts: 2, args: 1, vecDst: true}
	ops["shfl.sync.bfly.b32"] = ptxOp{fn: "rocmk_ptx_shfl_sync_bfly_b32", dsts: 1, args: 4}
	for fn, names := range map[string][]string{
		"rocmk_ptx_griddepcontrol_wait":              {"griddepcontrol.wait"},
		"rocmk_ptx_griddepcontrol_launch_dependents": {"griddepcontrol.launch_dependents"},
		"rocmk_ptx_cp_async_commit_group":            {"cp.async.commit_group"},
		"rocmk_ptx_cp_async_wait_all":                {"cp.async.wait_all"},
	} {
		for _, n := range names {
			ops[n] = ptxOp{fn: fn}
		}
	}
	ops["cp.async.wait_group"] = ptxOp{fn: "rocmk_ptx_cp_async_wait_group", args: 1}
	ops["prefetch.global.L2"] = ptxOp{fn: "rocmk_ptx_prefetch_global_L2", args: 1, addrCast: "const void *"}
	ops["prefetch.global.L1"] = ptxOp{fn: "rocmk_ptx_prefetch_global_L2", args: 1, addrCast: "const void *"}
	return ops
}()

// asmStmt is one asm statement: its tokens and parsed parts.
type asmStmt struct {
	close       int      // the closing parenthesis
	template    string   // the instruction text, escapes decoded
	operands    [][2]int // each operand's expression: token range [start, end)
	constraints []string // each operand's constraint ("=r", "l"...)
	outputs     int      // how many of the operands are outputs
}

// translatePTX rewrites the asm statements whose one instruction ptxOps
// knows. It runs after the identifier pass (operand expressions are
// rendered with its edits) and before the compat block is placed. It
// returns its edits and the asm tokens it replaced (for ptxFallbacks).
func translatePTX(f *file, es *editList, o *out) ([]edit, map[int]bool) {
	if f.opt.NoCompat {
		return nil, nil
	}
	t := &pass{file: f, o: o, prior: es}
	done := map[int]bool{}
	// render (in ptxCall) needs sorted edits. Sort once here: the loop adds
	// only its own edits, and sorting per statement made the pass quadratic.
	es.sort()
	for i := range f.toks {
		tk := &f.toks[i]
		if tk.skip || tk.kind != IDENT {
			continue
		}
		st, ok := f.parseAsm(i)
		if !ok {
			continue
		}
		text, op, fn, ok := t.ptxPredCall(st)
		if !ok {
			text, op, fn, ok = t.ptxCall(st)
		}
		if !ok {
			continue
		}
		t.addEdit(tk.pos.Offset, f.endOf(st.close), text)
		done[i] = true
		t.needCompat(compatByName["ptx"])
		o.rep.Replaced["ptx"]++
		msg := "inline PTX `" + strings.TrimSuffix(op, " unpack") + "` -> " + fn + " (rocmk_hip_compat.h), with the instruction's semantics"
		switch {
		case strings.Contains(op, ".approx"):
			msg += "; the approximation is computed exactly"
		case strings.HasPrefix(op, "cp.async."):
			msg = "inline PTX `" + op + "` -> " + fn + " (rocmk_hip_compat.h): the copy is made at once (zero fill past src-size), " +
				"a valid order of an asynchronous copy; its commit and wait become no-ops"
		case op == "mov %laneid":
			msg += "; on wave64 CDNA the lane runs 0..63 (CUDA's 0..31: exact on wave32 RDNA)"
		}
		t.hazardOnce(tk.pos, "ptx", op, msg)
	}
	return t.edits, done
}

// parseAsm reads asm [volatile] ( "..." ["..."] [: outs [: ins [: clobbers]]] ).
func (f *file) parseAsm(i int) (asmStmt, bool) {
	var st asmStmt
	if !f.isAsm(i) {
		return st, false
	}
	n := f.next(i)
	for n < len(f.toks) && isVolatile(f.toks[n].lit) {
		n = f.next(n)
	}
	if !f.isPunct(n, "(") {
		return st, false
	}
	st.close = f.matching(n)
	if st.close < 0 {
		return st, false
	}
	j := f.next(n)
	var tmpl strings.Builder
	for j < st.close && f.toks[j].kind == STRING {
		s, ok := cString(f.toks[j].lit)
		if !ok {
			return st, false
		}
		tmpl.WriteString(s)
		j = f.next(j)
	}
	st.template = tmpl.String()
	section := 0 // 0 template, 1 outputs, 2 inputs, 3 clobbers
	for j < st.close {
		switch {
		case f.isPunct(j, ":"):
			section++
			j = f.next(j)
			continue
		case f.isPunct(j, "::"):
			section += 2
			j = f.next(j)
			continue
		case f.isPunct(j, ","):
			j = f.next(j)
			continue
		}
		if section == 0 || section > 3 || f.toks[j].kind != STRING {
			return st, false
		}
		if section == 3 { // clobbers: "memory", "cc"
			j = f.next(j)
			continue
		}
		p := f.next(j)
		if !f.isPunct(p, "(") {
			return st, false
		}
		q := f.matching(p)
		if q < 0 || q > st.close {
			return st, false
		}
		c, _ := cString(f.toks[j].lit)
		st.constraints = append(st.constraints, c)
		st.operands = append(st.operands, [2]int{f.next(p), q})
		if section == 1 {
			st.outputs++
		}
		j = f.next(q)
	}
	return st, true
}

// cString decodes a plain C string literal ("" with \n, \t, \\, \").
func cString(lit string) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false // prefixed or raw literals: left alone
	}
	s, err := strconv.Unquote(lit)
	if err != nil {
		return "", false
	}
	return s, true
}

// ptxCall returns the C++ that replaces st, the instruction's name, and
// whether st is one instruction ptxOps knows with the operands it expects.
// Nothing is rendered (so no edit is consumed) until st is known good.
func (t *pass) ptxCall(st asmStmt) (text, name, fn string, ok bool) {
	ins := strings.TrimSpace(st.template)
	ins = strings.TrimSpace(strings.TrimSuffix(ins, ";"))
	if m := reLaneid.FindStringSubmatch(ins); m != nil {
		return t.laneidCall(st, m[1])
	}
	if ins == "" || strings.ContainsAny(ins, ";@") || strings.Contains(ins, "%%") {
		return "", "", "", false // several instructions, predicates, literal %
	}
	name, rest := ins, ""
	if k := strings.IndexAny(ins, " \t\n"); k >= 0 {
		name, rest = ins[:k], ins[k+1:]
	}
	ops := ptxOperands(rest)
	op, ok := ldstOp(name)
	if !ok {
		op, ok = cpAsyncOp(name, len(ops))
	}
	if !ok {
		if strings.ContainsAny(rest, "{}") && name != "mov.b32" {
			return "", "", "", false
		}
		if name == "mov.b32" && len(ops) == 2 && strings.HasPrefix(ops[0], "{") {
			name = "mov.b32 unpack"
		}
		if op, ok = ptxOps[name]; !ok {
			return "", "", "", false
		}
	}
	var flat []string // vectors {lo, hi} flattened
	for _, o := range ops {
		if strings.HasPrefix(o, "{") && strings.HasSuffix(o, "}") {
			for _, e := range strings.Split(o[1:len(o)-1], ",") {
				flat = append(flat, strings.TrimSpace(e))
			}
			continue
		}
		flat = append(flat, strings.TrimSuffix(strings.TrimPrefix(o, "["), "]"))
	}
	if len(flat) != op.dsts+op.args {
		return "", "", "", false
	}
	refs := make([]int, len(flat)) // operand index, or -1 for a number
	for k, o := range flat {
		if n, err := strconv.Atoi(strings.TrimPrefix(o, "%")); strings.HasPrefix(o, "%") && err == nil && n >= 0 && n < len(st.operands) &&
			st.operands[n][0] < st.operands[n][1] && (k >= op.dsts || n < st.outputs) {
			refs[k] = n
		} else if _, err := strconv.ParseInt(o, 0, 64); err == nil && k >= op.dsts {
			refs[k] = -1
		} else {
			return "", "", "", false
		}
	}
	if op.addrCast != "" && (refs[op.addr] < 0 || st.constraints[refs[op.addr]] != "l") {
		return "", "", "", false // an address that is not a 64-bit register
	}
	rendered := map[int]string{} // an operand named twice (mov.b32 %0, {%1, %1}): render consumes its edits once
	exprs := make([]string, len(flat))
	for k, n := range refs {
		exprs[k] = flat[k]
		if n < 0 {
			continue
		}
		if _, ok := rendered[n]; !ok {
			r := st.operands[n]
			rendered[n] = "(" + strings.TrimSpace(t.render(t.toks[r[0]].pos.Offset, t.endOf(r[1]-1))) + ")"
		}
		exprs[k] = rendered[n]
	}
	dsts, args := exprs[:op.dsts], exprs[op.dsts:]
	if op.addrCast != "" { // an address, whatever its C type (pointer or integer)
		exprs[op.addr] = "(" + op.addrCast + ")" + exprs[op.addr]
	}
	if op.vecDst {
		for _, d := range dsts {
			args = append(args, "&"+d)
		}
		return op.fn + "(" + strings.Join(args, ", ") + ")", name, op.fn, true
	}
	call := op.fn + "(" + strings.Join(args, ", ") + ")"
	if op.dsts == 1 {
		call = dsts[0] + " = " + call
	}
	return call, name, op.fn, true
}

// ptxOperands splits an instruction's operands at top-level commas.
func ptxOperands(s string) []string {
	var out []string
	depth, start := 0, 0
	for k := 0; k < len(s); k++ {
		switch s[k] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:k]))
				start = k + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// isAsm reports whether the identifier at i starts an asm statement.
func (f *file) isAsm(i int) bool {
	if lit := f.toks[i].lit; f.toks[i].kind != IDENT || lit != "asm" && lit != "__asm__" && lit != "__asm" {
		return false
	}
	n := f.next(i)
	return n < len(f.toks) && (f.isPunct(n, "(") || isVolatile(f.toks[n].lit))
}

func isVolatile(lit string) bool {
	return lit == "volatile" || lit == "__volatile__" || lit == "__volatile"
}
