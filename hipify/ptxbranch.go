package hipify

import (
	"bytes"
	"strconv"
	"strings"
)

// Inline PTX behind a conditional with a portable fallback:
//
//	#if __CUDA_ARCH__ >= 750            #ifdef CP_ASYNC_ENABLED
//	  asm("tanh.approx.f32 ...");          asm("cp.async.cg.shared.global ...");
//	#else                               #else
//	  return tanhf(x);                     *(uint4*)smem = *(uint4*)gmem;
//	#endif                              #endif
//
// clang cannot compile PTX for AMD, so a branch holding it is a certain
// compile error under HIP. When the conditional ends in an #else that is
// real code, HIP takes that #else instead: each branch with PTX gets
// `&& !defined(__HIP__)` (reported), and nvcc, HIP's NVIDIA path, keeps
// the PTX. An #else that only traps (__trap, NO_DEVICE_CODE, assert,
// #error...) is no fallback, and a conditional without #else has none:
// those keep the PTX and its compile error, as a loud failure beats a
// kernel that traps or computes nothing. A conditional that tests HIP
// itself (__HIP__, __HIP_PLATFORM_AMD__, a ROCm switch) already decides.
// PTX that a conditional could not route around counts for the branch
// around it, so an outer conditional with a fallback can.

type ptxBranch struct {
	hash int    // the directive's HASH token
	dir  string // "#if", "#elifdef", "#else"...
	asm  []int  // the asm tokens in the branch (nested ones included)
	trap bool   // the branch only traps (see trapNames)
	// buildErr: it traps at build time (#error, static_assert): the
	// project requires the other branch, so that is no feature switch
	buildErr bool
}

type ptxGroup struct {
	branches []*ptxBranch
	decided  bool // a directive of the group tests HIP itself
}

// trapNames mark a branch that is no fallback: it stops the kernel, or the
// build, instead of computing what the PTX computes.
var trapNames = map[string]bool{
	"__trap": true, "__builtin_trap": true, "__builtin_unreachable": true, "abort": true,
	"assert": true, "__assert_fail": true, "NO_DEVICE_CODE": true, "static_assert": true,
}

func isTrapName(s string) bool {
	return trapNames[s] || strings.Contains(s, "NO_DEVICE_CODE") || strings.Contains(s, "UNREACHABLE")
}

// hipDeciders are the names by which a conditional tests for HIP.
var hipDeciders = map[string]bool{hipLanguage: true, "__HIP_PLATFORM_AMD__": true, "__HIP_PLATFORM_HCC__": true}

// fallbackPass routes HIP around inline PTX. Besides its edits it returns
// the asm tokens it routed around, whose inline-asm hazards go.
type fallbackPass struct {
	pass
	translated map[int]bool // asm statements translatePTX replaced: no longer PTX
	routed     []int
	offs       []featureOff   // switch-offs found (ptxfeature.go)
	firstTest  map[string]int // where a switch-off of each macro goes (noteTests)
}

// ptxFallbacks routes HIP around inline PTX where a fallback exists. It
// runs last, over the edits of the other passes.
func ptxFallbacks(f *file, es *editList, translated map[int]bool, o *out) ([]edit, []int) {
	t := &fallbackPass{pass: pass{file: f, o: o, prior: es}, translated: translated}
	var stack []*ptxGroup
	cur := func() *ptxBranch {
		if len(stack) == 0 {
			return nil
		}
		g := stack[len(stack)-1]
		return g.branches[len(g.branches)-1]
	}
	es.sort()
	for i := 0; i < len(t.toks); i++ {
		tk := &t.toks[i]
		if tk.skip {
			continue
		}
		if tk.kind == HASH {
			switch tk.lit {
			case "#if", "#ifdef", "#ifndef":
				stack = append(stack, &ptxGroup{branches: []*ptxBranch{{hash: i, dir: tk.lit}}})
			case "#elif", "#elifdef", "#elifndef", "#else":
				if len(stack) > 0 {
					g := stack[len(stack)-1]
					g.branches = append(g.branches, &ptxBranch{hash: i, dir: tk.lit})
				}
			case "#endif":
				if len(stack) > 0 {
					g := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					if left := t.routePTX(g); len(left) > 0 && cur() != nil {
						cur().asm = append(cur().asm, left...)
					}
				}
				continue
			case "#error":
				if b := cur(); b != nil {
					b.trap, b.buildErr = true, true
				}
			}
			if len(stack) > 0 && (strings.HasPrefix(tk.lit, "#if") || strings.HasPrefix(tk.lit, "#el")) {
				t.markDecided(stack[len(stack)-1], i)
				t.noteTests(stack, i)
			}
			continue
		}
		b := cur()
		if b == nil || tk.kind != IDENT {
			continue
		}
		switch {
		case t.isAsm(i) && !t.translated[i]:
			b.asm = append(b.asm, i)
		case isTrapName(tk.lit):
			b.trap = true
			b.buildErr = b.buildErr || tk.lit == "static_assert"
		}
	}
	off := t.applyFeatureOffs() // adds edits: before t.edits is read
	return t.edits, append(t.routed, off...)
}

// markDecided notes a directive at h that tests HIP itself.
func (f *file) markDecided(g *ptxGroup, h int) {
	j := h + 1
	for ; j < len(f.toks) && f.toks[j].kind != PPEND; j++ {
		if lit := f.toks[j].lit; f.toks[j].kind == IDENT && (hipDeciders[lit] || f.classify(lit) == rocmSwitchMacro) {
			g.decided = true
		}
	}
	if end := f.directiveEnd(j); bytes.Contains(f.src[f.toks[h].pos.Offset:end], []byte(hipLanguage)) {
		g.decided = true // also where a broken literal hid the name from the scanner
	}
}

// directiveEnd is the source offset where the directive ending at token j
// (its PPEND, or len(toks)) ends.
func (f *file) directiveEnd(j int) int {
	if j < len(f.toks) {
		return f.toks[j].pos.Offset
	}
	return len(f.src)
}

// routePTX rewrites a closed group's branches that hold PTX when it ends
// in a real #else; otherwise it returns the PTX tokens, for the branch
// around it.
func (t *fallbackPass) routePTX(g *ptxGroup) []int {
	if g.decided {
		return nil
	}
	var asm []int
	for _, b := range g.branches {
		asm = append(asm, b.asm...)
	}
	if len(asm) == 0 {
		return nil
	}
	last := g.branches[len(g.branches)-1]
	if last.dir != "#else" || len(last.asm) > 0 || last.trap {
		if off, ok := t.featureNames(g, asm); ok {
			t.offs = append(t.offs, off)
		}
		return asm
	}
	for _, b := range g.branches[:len(g.branches)-1] {
		if len(b.asm) > 0 {
			t.notOnHIP(b, last)
		}
	}
	t.routed = append(t.routed, asm...)
	return nil
}

// notOnHIP adds `&& !defined(__HIP__)` to the condition of b's directive,
// as the other passes left it.
func (t *pass) notOnHIP(b, fallback *ptxBranch) {
	h := b.hash
	last := -1
	for j := h + 1; j < len(t.toks) && t.toks[j].kind != PPEND; j++ {
		if t.toks[j].kind != COMMENT {
			last = j
		}
	}
	if last < 0 {
		return
	}
	start, end := t.toks[h].pos.Offset, t.endOf(last)
	orig := string(t.src[start:end])
	text := strings.TrimLeft(strings.TrimPrefix(t.render(start, end), "#"), " \t")
	kw := text
	if n := strings.IndexAny(text, " \t(!"); n >= 0 {
		kw = text[:n]
	}
	cond := strings.TrimSpace(text[len(kw):])
	var out string
	switch kw {
	case "if", "elif":
		out = "#" + kw + " (" + cond + ")"
	case "ifdef", "elifdef":
		out = "#" + strings.TrimSuffix(kw, "def") + " defined(" + cond + ")"
	case "ifndef", "elifndef":
		out = "#" + strings.TrimSuffix(kw, "ndef") + " !defined(" + cond + ")"
	default:
		return
	}
	out += " && !defined(" + hipLanguage + ")"
	t.addEdit(start, end, out)
	t.diag(t.toks[h].pos, SevConditional, "ptx-fallback", "", "`"+orig+"` -> `"+out+"`: the branch has inline PTX (line "+
		strconv.Itoa(t.position(t.toks[b.asm[0]].pos).Line)+"), which HIP cannot compile; HIP takes the #else at line "+
		strconv.Itoa(t.position(t.toks[fallback.hash].pos).Line))
}

// dropPTXHazards removes the inline-asm hazards of the asm statements
// translated or routed around, in one pass at the end: filtering the list
// at each statement was quadratic (issue 19).
func dropPTXHazards(f *file, rep *Report, translated map[int]bool, routed []int) {
	if len(translated) == 0 && len(routed) == 0 {
		return
	}
	gone := map[int]bool{}
	for i := range translated {
		gone[f.toks[i].pos.Offset] = true
	}
	for _, i := range routed {
		gone[f.toks[i].pos.Offset] = true
	}
	kept := rep.Hazards[:0]
	for _, d := range rep.Hazards {
		if d.Code != "inline-asm" || !gone[d.Pos.Offset] {
			kept = append(kept, d)
		}
	}
	rep.Hazards = kept
}
