package hipify

import (
	"regexp"
	"strconv"
	"strings"
)

// PTX that needs more than a table entry: cp.async (a copy whose operand
// count varies), a guard predicate set from an operand (the predicated
// copies of vLLM, marlin and FlashInfer), and %laneid.

// reCpAsync matches the global-to-shared copies: .ca or .cg, any L2 hint.
var reCpAsync = regexp.MustCompile(`^cp\.async\.(ca|cg)\.shared(::cta)?\.global(\.L2::(64B|128B|256B))?$`)

// cpAsyncOp maps cp.async [dst], [src], cp-size[, src-size] (n operands) to
// rocmk_ptx_cp_async(dst, src, cp-size[, src-size]); dst is a shared-window
// address (a 32-bit "r" or a 64-bit "l" from __cvta_generic_to_shared).
func cpAsyncOp(name string, n int) (ptxOp, bool) {
	if !reCpAsync.MatchString(name) || n != 3 && n != 4 {
		return ptxOp{}, false
	}
	return ptxOp{fn: "rocmk_ptx_cp_async", args: n, addr: 1, addrCast: "const void *"}, true
}

// rePredBlock matches one instruction under a predicate set from an
// operand: { .reg .pred p; setp.ne.b32 p, %0, 0; @p INS; }.
var rePredBlock = regexp.MustCompile(`^\{\s*\.reg\s+\.pred\s+(\w+)\s*;\s*setp\.(ne|eq)\.[bsu]32\s+(\w+)\s*,\s*%(\d+)\s*,\s*0\s*;` +
	`\s*@(!?)(\w+)\s+([^;{}@]+);\s*\}$`)

// ptxPredCall translates a predicated instruction: the instruction as
// ptxCall would, run only where the predicate holds (PTX does nothing
// else: no zero fill, which is src-size's job).
func (t *pass) ptxPredCall(st asmStmt) (text, name, fn string, ok bool) {
	m := rePredBlock.FindStringSubmatch(strings.TrimSpace(st.template))
	if m == nil || m[1] != m[3] || m[1] != m[6] {
		return "", "", "", false
	}
	k, err := strconv.Atoi(m[4])
	if err != nil || k >= len(st.operands) || k < st.outputs || st.operands[k][0] >= st.operands[k][1] ||
		regexp.MustCompile(`%`+m[4]+`\b`).MatchString(m[7]) {
		return "", "", "", false // the predicate's operand is an input named once
	}
	inner := st
	inner.template = m[7] + ";"
	call, name, fn, ok := t.ptxCall(inner)
	if !ok {
		return "", "", "", false
	}
	eq := m[2] == "eq"
	if m[5] == "!" {
		eq = !eq
	}
	cmp := " != 0"
	if eq {
		cmp = " == 0"
	}
	r := st.operands[k]
	cond := "(" + strings.TrimSpace(t.render(t.toks[r[0]].pos.Offset, t.endOf(r[1]-1))) + ")" + cmp
	// an expression statement: no dangling else where the asm was an if's body
	return "(void)(" + cond + " && (" + call + ", true))", name, fn, true
}

var reLaneid = regexp.MustCompile(`^mov\.[bsu]32\s+%(\d+)\s*,\s*%%laneid\s*;?$`)

// laneidCall translates mov.u32 %N, %%laneid: an output gets the lane.
func (t *pass) laneidCall(st asmStmt, d string) (text, name, fn string, ok bool) {
	n, err := strconv.Atoi(d)
	if err != nil || n >= st.outputs || st.operands[n][0] >= st.operands[n][1] {
		return "", "", "", false
	}
	r := st.operands[n]
	dst := "(" + strings.TrimSpace(t.render(t.toks[r[0]].pos.Offset, t.endOf(r[1]-1))) + ")"
	return dst + " = rocmk_ptx_laneid()", "mov %laneid", "rocmk_ptx_laneid", true
}
