package hipify

import (
	"bytes"
	"strconv"
	"strings"
)

// Inline PTX behind a project's feature macro, whose #else only traps at
// run time (ggml's mma.cuh, and the code built like it):
//
//	#ifdef TURING_MMA_AVAILABLE            (defined where __CUDA_ARCH__ >= 750)
//	    asm("mma.sync.aligned.m16n8k16 ...");
//	#else
//	    NO_DEVICE_CODE;
//	#endif
//
// The trap says the project never calls this code without the macro: its
// callers test the same macro and take another path (ggml: dp4a instead
// of tensor cores). AMD has no counterpart of a 32-lane mma.sync, ldmatrix
// or movmatrix on wave64, so under HIP the macro is switched off in the
// file, before its first test there (hoisted out of the conditionals
// around that test, within an include guard, so that it always runs and
// the whole file agrees):
//
//	#if defined(__HIP__) && defined(TURING_MMA_AVAILABLE) // rocmk: ...
//	#undef TURING_MMA_AVAILABLE
//	#endif
//
// and every later test of it in the unit, the project's own selection
// included, takes the path without the instructions. A macro defined for
// HIP never guards PTX, so it is never switched off. An #else that stops
// the build (#error, static_assert) says the macro is required: that PTX
// stays, reported.

// featureOff is a switch-off that featureNames found: it is made at the
// end (applyFeatureOffs) unless a conditional around it routes HIP to a
// real #else (ggml's movmatrix: a shuffle version for CUDA before 11.8),
// which beats a trap.
type featureOff struct {
	hash  int      // the conditional's first directive
	names []string // the macros
	first []int    // each macro's first asm token
	asm   []int    // the group's asm tokens
}

// featureNames returns the switch-off of g's PTX branches, when g's last
// branch is an #else that only traps at run time and every branch with
// PTX tests one macro.
func (t *fallbackPass) featureNames(g *ptxGroup, asm []int) (featureOff, bool) {
	last := g.branches[len(g.branches)-1]
	if last.dir != "#else" || !last.trap || last.buildErr || len(last.asm) > 0 {
		return featureOff{}, false
	}
	off := featureOff{hash: g.branches[0].hash, asm: asm}
	for _, b := range g.branches[:len(g.branches)-1] {
		if len(b.asm) == 0 {
			continue
		}
		name, ok := t.featureTest(b)
		if !ok {
			return featureOff{}, false
		}
		off.names = append(off.names, name)
		off.first = append(off.first, b.asm[0])
	}
	return off, len(off.names) > 0
}

// applyFeatureOffs makes the switch-offs whose PTX no enclosing
// conditional routed around, and returns their asm tokens.
func (t *fallbackPass) applyFeatureOffs() []int {
	routed := map[int]bool{}
	for _, i := range t.routed {
		routed[i] = true
	}
	var done []int
	reported := map[string]bool{}
	at := map[int]*strings.Builder{} // the switch-offs by line start
	var lines []int
	for _, off := range t.offs {
		if routed[off.asm[0]] {
			continue
		}
		done = append(done, off.asm...)
		for k, name := range off.names {
			if reported[name] {
				continue
			}
			reported[name] = true
			h, ok := t.firstTest[name]
			if !ok {
				h = off.hash
			}
			line := bytes.LastIndexByte(t.src[:t.toks[h].pos.Offset], '\n') + 1
			if at[line] == nil {
				at[line] = &strings.Builder{}
				lines = append(lines, line)
			}
			at[line].WriteString("#if defined(" + hipLanguage + ") && defined(" + name + ") // rocmk: " + name +
				" selects inline PTX AMD has no translation for\n#undef " + name + "\n#endif\n")
			ins := t.asmInstruction(off.first[k])
			t.diag(t.toks[off.hash].pos, SevConditional, "ptx-feature", name, name+" is switched off under HIP (#undef before line "+
				strconv.Itoa(t.position(t.toks[h].pos).Line)+"): it selects inline PTX `"+ins+"` (line "+
				strconv.Itoa(t.position(t.toks[off.first[k]].pos).Line)+"), "+ptxAlternative(ins)+"; its #else traps, so the project calls this code only where "+
				name+" is defined and takes its path without "+name+" on HIP")
		}
	}
	for _, line := range lines {
		if text := at[line].String(); !bytes.HasSuffix(t.src[:line], []byte(text)) { // not translated before
			t.addEdit(line, line, text)
		}
	}
	return done
}

// noteTests records, for each name the directive at h tests, where its
// switch-off would go, the first time it is tested: before the outermost
// conditional around the test, or the one inside an include guard.
func (t *fallbackPass) noteTests(stack []*ptxGroup, h int) {
	base := 0
	if t.isIncludeGuard(stack[0].branches[0].hash) {
		base = 1
	}
	at := h
	if len(stack) > base {
		at = stack[base].branches[0].hash
	}
	if stack[len(stack)-1].decided {
		return // tests HIP: a switch-off itself, or the project's HIP path
	}
	for j := h + 1; j < len(t.toks) && t.toks[j].kind != PPEND; j++ {
		if t.toks[j].kind != IDENT {
			continue
		}
		if t.firstTest == nil {
			t.firstTest = map[string]int{}
		}
		if _, ok := t.firstTest[t.toks[j].lit]; !ok {
			t.firstTest[t.toks[j].lit] = at
		}
	}
}

// isIncludeGuard reports whether the directive at h is `#ifndef G` followed
// by `#define G`.
func (f *file) isIncludeGuard(h int) bool {
	if f.toks[h].lit != "#ifndef" {
		return false
	}
	g := f.next(h)
	if g >= len(f.toks) || f.toks[g].kind != IDENT {
		return false
	}
	d := g + 1
	for d < len(f.toks) && (f.toks[d].kind == PPEND || f.toks[d].kind == COMMENT) {
		d++
	}
	if d >= len(f.toks) || f.toks[d].kind != HASH || f.toks[d].lit != "#define" {
		return false
	}
	n := f.next(d)
	return n < len(f.toks) && f.toks[n].lit == f.toks[g].lit
}

// featureTest returns the macro a branch's directive tests when that is
// all it tests (#ifdef X, #if defined(X), #elif defined X), and X is the
// project's own: no CUDA macro, ROCm switch or HIP test.
func (t *fallbackPass) featureTest(b *ptxBranch) (string, bool) {
	var args []int
	for j := b.hash + 1; j < len(t.toks) && t.toks[j].kind != PPEND; j++ {
		if t.toks[j].kind != COMMENT {
			args = append(args, j)
		}
	}
	lits := make([]string, len(args))
	for k, j := range args {
		lits[k] = t.toks[j].lit
	}
	at := -1 // the macro's index in args
	switch isIf := b.dir == "#if" || b.dir == "#elif"; {
	case b.dir == "#ifdef" && len(lits) == 1:
		at = 0
	case isIf && len(lits) == 2 && lits[0] == "defined":
		at = 1
	case isIf && len(lits) == 4 && lits[0] == "defined" && lits[1] == "(" && lits[3] == ")":
		at = 2
	}
	if at < 0 || t.toks[args[at]].kind != IDENT || t.classify(lits[at]) != notCUDAMacro || hipDeciders[lits[at]] {
		return "", false
	}
	return lits[at], true
}

// asmInstruction is the first instruction of the asm statement at token i
// ("asm" when it cannot be read).
func (f *file) asmInstruction(i int) string {
	st, ok := f.parseAsm(i)
	if !ok {
		return "asm"
	}
	if ins := ptxInstructions(st.template); len(ins) > 0 {
		return ins[0]
	}
	return "asm"
}

// ptxInstructions lists the instruction names of a PTX template, in order:
// braces, declarations (.reg) and guard predicates (@p) left out.
func ptxInstructions(tmpl string) []string {
	var out []string
	for _, s := range strings.FieldsFunc(tmpl, func(r rune) bool { return r == ';' || r == '\n' }) {
		s = strings.TrimLeft(s, " \t{}")
		if strings.HasPrefix(s, "@") {
			if k := strings.IndexAny(s, " \t"); k >= 0 {
				s = strings.TrimSpace(s[k:])
			}
		}
		if s == "" || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "//") {
			continue
		}
		if k := strings.IndexAny(s, " \t"); k >= 0 {
			s = s[:k]
		}
		out = append(out, s)
	}
	return out
}
