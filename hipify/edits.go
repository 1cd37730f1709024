package hipify

import (
	"sort"
	"strings"
)

type edit struct {
	start, end int
	text       string
	dead       bool // consumed by an enclosing edit (see render)
}

// editList is the edits of the passes so far, sorted. A pass that
// encloses earlier edits (a launch, a permuted call, a PTX statement)
// renders its text from the list, which marks what it consumed, and
// returns its own edit for merge.
type editList struct{ edits []edit }

// editLess orders edits by start offset, insertions before replacements at
// the same offset.
func editLess(a, b *edit) bool {
	if a.start != b.start {
		return a.start < b.start
	}
	return a.end == a.start && b.end != b.start
}

// sort orders the edits (editLess). Edits already in order (the common case: the passes
// add them in source order) cost one linear check.
func (l *editList) sort() {
	es := l.edits
	for i := 1; i < len(es); i++ {
		if editLess(&es[i], &es[i-1]) {
			sort.SliceStable(es, func(i, j int) bool { return editLess(&es[i], &es[j]) })
			return
		}
	}
}

// merge adds the edits of an enclosing pass.
func (l *editList) merge(es []edit) {
	if len(es) == 0 {
		return
	}
	l.edits = append(l.edits, es...)
	l.sort()
}

// insert adds one edit in order (after the edits that sort before or with
// it), without sorting the list again.
func (l *editList) insert(e edit) {
	i := sort.Search(len(l.edits), func(i int) bool { return editLess(&e, &l.edits[i]) })
	l.edits = append(l.edits, edit{})
	copy(l.edits[i+1:], l.edits[i:])
	l.edits[i] = e
}

// apply writes src with the edits, and then the extra ones, applied.
func (l *editList) apply(src []byte, extra ...[]edit) []byte {
	for _, es := range extra {
		l.edits = append(l.edits, es...)
	}
	if len(l.edits) == 0 {
		return src
	}
	l.sort()
	// The size of the result first: a buffer grown while writing copies a
	// large file's output several times.
	size, last := len(src), 0
	for _, e := range l.edits {
		if e.dead || e.start < last { // consumed, or overlapping: the earlier (enclosing) edit wins
			continue
		}
		size += len(e.text) - (e.end - e.start)
		last = e.end
	}
	out := make([]byte, 0, size)
	last = 0
	for _, e := range l.edits {
		if e.dead || e.start < last {
			continue
		}
		out = append(out, src[last:e.start]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, src[last:]...)
}

// render returns src[start:end] with the edits inside it applied, and marks
// those edits consumed (they become part of an enclosing edit). render
// finds the range by binary search, so a file with many launches stays
// linear-logarithmic.
func (l *editList) render(src []byte, start, end int) string {
	var b strings.Builder
	last := start
	i := sort.Search(len(l.edits), func(i int) bool { return l.edits[i].start >= start })
	for ; i < len(l.edits) && l.edits[i].start <= end; i++ {
		e := &l.edits[i]
		if e.dead || e.end > end {
			continue
		}
		e.dead = true
		if e.start < last {
			continue
		}
		b.Write(src[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(src[last:end])
	return b.String()
}

// out collects what the passes report about a file: its Report
// (diagnostics, replacement counts) and the compat pieces it needs. Every
// pass gets it explicitly; only the last one, the compat block, reads it.
type out struct {
	name   string
	rep    *Report
	seenHz map[string]bool // hazards reported so far, by code and name
	compat map[string]bool // the compat pieces needed, by name
}

func newOut(name string, rep *Report) *out {
	return &out{name: name, rep: rep, seenHz: map[string]bool{}, compat: map[string]bool{}}
}

func (o *out) diag(p Pos, sev, code, name, msg string) {
	at := Position{o.name, p}
	d := Diagnostic{Pos: at, Where: at.String(), Severity: sev, Code: code, Name: name, Msg: msg}
	switch sev {
	case SevUnsupported:
		o.rep.Unsupported = append(o.rep.Unsupported, d)
	case SevConditional:
		o.rep.Conditionals = append(o.rep.Conditionals, d)
	case SevTranslated:
		o.rep.Translated = append(o.rep.Translated, d)
	default:
		o.rep.Hazards = append(o.rep.Hazards, d)
	}
}

// hazardOnce reports a hazard once per (code, name) per file.
func (o *out) hazardOnce(p Pos, code, name, msg string) {
	k := code + "\x00" + name
	if o.seenHz[k] {
		return
	}
	o.seenHz[k] = true
	o.diag(p, SevHazard, code, name, msg)
}

// needCompat records that the file needs piece p (and what p needs).
func (o *out) needCompat(p *compatPiece) {
	o.compat[p.name] = true
	for _, n := range p.needs {
		o.needCompat(compatByName[n])
	}
}

// pass is one pass at work: the file it reads, the collector it reports
// to, the edits of earlier passes (prior: what an enclosing pass renders
// from; nil for the passes over single tokens) and the edits it makes,
// which are its result.
type pass struct {
	*file
	o     *out
	prior *editList
	edits []edit
}

func (t *pass) diag(p Pos, sev, code, name, msg string)  { t.o.diag(p, sev, code, name, msg) }
func (t *pass) hazardOnce(p Pos, code, name, msg string) { t.o.hazardOnce(p, code, name, msg) }
func (t *pass) needCompat(p *compatPiece)                { t.o.needCompat(p) }

func (t *pass) addEdit(start, end int, text string) {
	t.edits = append(t.edits, edit{start: start, end: end, text: text})
}

// joinPrior moves the pass's edits that start before end into the prior
// edits, so that rendering a range up to end includes them. For passes
// that work last place first: t.edits is in descending start order, so the
// edits inside the range being rewritten are the last ones.
func (t *pass) joinPrior(end int) {
	for n := len(t.edits); n > 0 && t.edits[n-1].start < end; n-- {
		t.prior.insert(t.edits[n-1])
		t.edits = t.edits[:n-1]
	}
}

// render renders a range of the source with the prior edits in it.
func (t *pass) render(start, end int) string { return t.prior.render(t.src, start, end) }

// argString renders an argument's token range, trimmed ("" when empty).
func (t *pass) argString(a [2]int) string {
	if a[0] >= a[1] {
		return ""
	}
	return strings.TrimSpace(t.render(t.toks[a[0]].pos.Offset, t.endOf(a[1]-1)))
}
