package hipify

import "strings"

// launchMacro is a #define whose body is a kernel launch: either a whole
// one with parameters (#define LAUNCH(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__))
// or the head of one (#define CALL k<float><<<1, n>>>), to which the use
// site adds the argument list.
type launchMacro struct {
	params   []string // nil for an object-like macro
	variadic bool
	body     []token // the body's tokens, without comments
	complete bool    // the body holds the argument list too
}

// findLaunchMacros records #defines whose body is a kernel launch.
func (f *file) findLaunchMacros() map[string]*launchMacro {
	var ms map[string]*launchMacro
	for i := 0; i < len(f.toks); i++ {
		if f.toks[i].kind != HASH || f.toks[i].lit != "#define" || f.toks[i].skip {
			continue
		}
		n := i + 1
		if n >= len(f.toks) || f.toks[n].kind != IDENT {
			continue
		}
		m := &launchMacro{}
		j := n + 1
		if j < len(f.toks) && f.isPunct(j, "(") && f.toks[j].pos.Offset == f.endOf(n) {
			m.params = []string{}
			for j++; j < len(f.toks) && !f.isPunct(j, ")") && f.toks[j].kind != PPEND; j++ {
				switch {
				case f.toks[j].kind == IDENT:
					m.params = append(m.params, f.toks[j].lit)
				case f.isPunct(j, "..."):
					m.variadic = true
				}
			}
			j++
		}
		launches, bad := 0, false
		for ; j < len(f.toks) && f.toks[j].kind != PPEND; j++ {
			tk := f.toks[j]
			if tk.kind == COMMENT {
				continue
			}
			if tk.kind == LAUNCH {
				launches++
			}
			if tk.kind == PUNCT && (tk.lit == "#" || tk.lit == "##") {
				bad = true
			}
			m.body = append(m.body, tk)
		}
		if launches != 1 || bad || len(m.body) == 0 {
			continue
		}
		last := m.body[len(m.body)-1]
		for k := len(m.body) - 1; k >= 0 && last.kind == PUNCT && last.lit == ";"; k-- {
			m.body = m.body[:k]
			if k > 0 {
				last = m.body[k-1]
			}
		}
		m.complete = last.kind == PUNCT && last.lit == ")"
		if !m.complete && (m.params != nil || last.kind != ENDLAUNCH) {
			continue
		}
		if ms == nil {
			ms = map[string]*launchMacro{}
		}
		ms[f.toks[n].lit] = m
	}
	return ms
}

// expandLaunchMacros rewrites uses of launch macros, as hipify-clang does
// at the expansion site: CALL(args) becomes hipLaunchKernelGGL(...).
func expandLaunchMacros(f *file, es *editList, o *out) []edit {
	t := &pass{file: f, o: o, prior: es}
	ms := f.findLaunchMacros()
	if ms == nil {
		return nil
	}
	// Last use first, as launches does: a use inside another's arguments
	// (K(K())) is rewritten first and joins the prior edits before the
	// enclosing one renders its arguments, so one translation is final.
	for i := len(t.toks) - 1; i >= 0; i-- {
		tk := &t.toks[i]
		if tk.kind != IDENT || tk.pp != "" || tk.skip {
			continue
		}
		m, ok := ms[tk.lit]
		if !ok {
			continue
		}
		p := t.next(i)
		if !t.isPunct(p, "(") {
			continue
		}
		q := t.matching(p)
		if q < 0 {
			continue
		}
		t.joinPrior(t.endOf(q))
		args := t.splitArgs(p, q)
		argText := make([]string, len(args))
		for k, a := range args {
			argText[k] = t.argString(a)
		}
		var b strings.Builder
		if m.params == nil {
			writeTokens(&b, m.body, nil)
			b.WriteString("(" + strings.Join(argText, ", ") + ")")
		} else {
			if len(args) < len(m.params) || len(args) > len(m.params) && !m.variadic {
				continue
			}
			sub := map[string]string{}
			for k, name := range m.params {
				sub[name] = argText[k]
			}
			if m.variadic {
				sub["__VA_ARGS__"] = strings.Join(argText[len(m.params):], ", ")
			}
			writeTokens(&b, m.body, sub)
		}
		opt := *t.opt
		opt.NoInclude, opt.NoHazards, opt.SkipExcluded = true, true, false
		sub := newMacroFile(f, b.String(), &opt)
		subEdits, fixed, _ := translateTokens(sub, nil, nil, newOut(f.name, &Report{Replaced: map[string]int{}}))
		out := string(subEdits.apply(sub.src, fixed))
		if !strings.HasPrefix(out, "hipLaunchKernelGGL(") || usesLaunchMacro(scanTokens(f.name, []byte(out)), ms) {
			continue // a use left in the rewrite (K's body says K(), the fuzzer's) would be rewritten again
		}
		t.render(tk.pos.Offset, t.endOf(q))
		t.addEdit(tk.pos.Offset, t.endOf(q), out)
		t.o.rep.Replaced["launch"]++
	}
	return t.edits
}

// usesLaunchMacro says a launch macro is used (named, then an open
// parenthesis) in ts.
func usesLaunchMacro(ts []token, ms map[string]*launchMacro) bool {
	for i, tk := range ts {
		if tk.kind == IDENT && ms[tk.lit] != nil {
			for j := i + 1; j < len(ts); j++ {
				if ts[j].kind == COMMENT {
					continue
				}
				if ts[j].kind == PUNCT && ts[j].lit == "(" {
					return true
				}
				break
			}
		}
	}
	return false
}

// writeTokens writes tokens separated as C++ needs (a blank between words),
// replacing macro parameters.
func writeTokens(b *strings.Builder, ts []token, sub map[string]string) {
	for k, tk := range ts {
		lit := tk.lit
		if tk.kind == IDENT {
			if v, ok := sub[lit]; ok {
				lit = v
			}
		}
		if k > 0 {
			prev := ts[k-1]
			if tk.pos.Offset > prev.pos.Offset+len(prev.lit) {
				b.WriteByte(' ')
			}
		}
		b.WriteString(lit)
	}
}
