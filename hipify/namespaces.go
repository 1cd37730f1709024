package hipify

// libraryNamespace renames the namespace of a CUDA library that its ROCm
// counterpart puts under another name: cub:: is hipCUB's hipcub::, and
// thrust's CUDA system (thrust::cuda::, thrust::system::cuda::) is
// rocThrust's thrust::hip::. It reports whether token i was such a name.
func (t *pass) libraryNamespace(i int) bool {
	tk := &t.toks[i]
	if tk.pp == "if" || tk.pp == "elif" || t.isMember(i) {
		return false
	}
	n, p := t.next(i), t.prev(i)
	qualifies := t.isPunct(n, "::")
	switch tk.lit {
	case "cub":
		// cub::X, ::cub::X, using namespace cub, namespace c = cub
		if t.isPunct(p, "::") && !qualifies {
			return false
		}
		if q := t.prev(p); t.isPunct(p, "::") && q >= 0 && t.toks[q].kind == IDENT && t.endOf(q) == t.toks[p].pos.Offset {
			return false // a member of another namespace: x::cub (not typedef ::cub)
		}
		if !qualifies && !t.namespaceName(p) {
			return false
		}
		t.addEdit(tk.pos.Offset, t.endOf(i), "hipcub")
	case "cuda":
		// thrust::cuda::X, thrust::system::cuda::X
		if !qualifies || !t.isPunct(p, "::") {
			return false
		}
		q := t.prev(p)
		if q < 0 || t.toks[q].kind != IDENT {
			return false
		}
		if t.toks[q].lit == "system" {
			if r := t.prev(q); t.isPunct(r, "::") {
				q = t.prev(r)
			} else {
				return false
			}
		}
		if q < 0 || t.toks[q].kind != IDENT || t.toks[q].lit != "thrust" {
			return false
		}
		t.addEdit(tk.pos.Offset, t.endOf(i), "hip")
	default:
		return false
	}
	t.o.rep.Replaced["namespace"]++
	return true
}

// namespaceName reports whether the token before a name (at p) makes the
// name a namespace: `using namespace N`, `namespace A = N`.
func (t *pass) namespaceName(p int) bool {
	if p < 0 {
		return false
	}
	if t.toks[p].kind == IDENT && t.toks[p].lit == "namespace" {
		return true
	}
	if !t.isPunct(p, "=") {
		return false
	}
	a := t.prev(p)
	ns := t.prev(a)
	return a >= 0 && t.toks[a].kind == IDENT && ns >= 0 && t.toks[ns].kind == IDENT && t.toks[ns].lit == "namespace"
}
