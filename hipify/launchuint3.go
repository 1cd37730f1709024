package hipify

// CUDA's dim3 converts from uint3 (dim3(uint3)), HIP's does not, so
// k<<<grid, block>>> with uint3 variables (NVIDIA's fluidsGL) compiles only
// under nvcc. A grid or block argument that is a variable the file declares
// as uint3 becomes dim3(v.x, v.y, v.z), which is CUDA's conversion.

// uint3Vars returns the names the file declares with type uint3
// ("uint3 grid = ...", "const uint3 &b", a parameter "uint3 g").
func (f *file) uint3Vars() map[string]bool {
	vars := map[string]bool{}
	for i := range f.toks {
		if f.toks[i].kind != IDENT || f.toks[i].lit != "uint3" || f.toks[i].pp != "" {
			continue
		}
		n := f.next(i)
		for n < len(f.toks) && (f.isPunct(n, "&") || f.isPunct(n, "*") || f.toks[n].kind == IDENT && f.toks[n].lit == "const") {
			if f.isPunct(n, "*") {
				n = -1 // a pointer is no launch configuration
				break
			}
			n = f.next(n)
		}
		if n < 0 || n >= len(f.toks) || f.toks[n].kind != IDENT {
			continue
		}
		if a := f.next(n); f.isPunct(a, "=") || f.isPunct(a, ";") || f.isPunct(a, ",") || f.isPunct(a, ")") || f.isPunct(a, "(") || f.isPunct(a, "{") {
			vars[f.toks[n].lit] = true
		}
	}
	return vars
}

// uint3Launch rewrites the grid and block arguments of the launch at token
// i (<<<) that are uint3 variables.
func (t *pass) uint3Launch(i int, vars map[string]bool) {
	j := t.launchEnd(i)
	if j < 0 {
		return
	}
	cfg := t.splitArgs(i, j)
	for k := 0; k < len(cfg) && k < 2; k++ {
		v := -1 // the argument's one identifier
		for m := cfg[k][0]; m < cfg[k][1]; m++ {
			if t.toks[m].kind == COMMENT {
				continue
			}
			if v >= 0 || t.toks[m].kind != IDENT {
				v = -2
				break
			}
			v = m
		}
		if v < 0 || !vars[t.toks[v].lit] {
			continue
		}
		name := t.toks[v].lit
		t.addEdit(t.toks[v].pos.Offset, t.endOf(v), "dim3("+name+".x, "+name+".y, "+name+".z)")
		t.o.rep.Replaced["launch"]++
	}
}

// launchEnd returns the >>> that closes the <<< at i (-1: none).
func (f *file) launchEnd(i int) int {
	depth := 0
	for j := i; j < len(f.toks); j++ {
		switch f.toks[j].kind {
		case LAUNCH:
			depth++
		case ENDLAUNCH:
			depth--
		}
		if depth == 0 {
			return j
		}
	}
	return -1
}
