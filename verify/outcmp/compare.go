package outcmp

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Verdict is the comparison's result, for a person (Reason) and for
// --json (all of it).
type Verdict struct {
	Pass bool `json:"pass"`
	// Reason is one line: "same output within tolerance", "first
	// difference at line 12 of stdout", "exit 0 vs 139 (SIGSEGV)", "the
	// port timed out after 30s".
	Reason string `json:"reason"`
	// RefStatus and GotStatus are how each run ended (Run.Status).
	RefStatus string `json:"ref_status"`
	GotStatus string `json:"got_status"`
	// The first difference in the output: where (stream "stdout",
	// "stderr" or "file NAME"; Line from 1), both lines, what differs in
	// them (Detail: "0.5 vs 0.52: |diff| 0.02 > tolerance 5e-06") and the
	// lines around it, prefixed "  " (same), "- " (reference), "+ " (port).
	Stream  string   `json:"stream,omitempty"`
	Line    int      `json:"line,omitempty"`
	Want    string   `json:"want,omitempty"`
	Got     string   `json:"got,omitempty"`
	Detail  string   `json:"detail,omitempty"`
	Context []string `json:"context,omitempty"`
	// DifferingLines counts the lines that differ over every stream
	// compared; Lines counts the lines compared.
	DifferingLines int `json:"differing_lines"`
	Lines          int `json:"lines"`
	// Expect is the check of Rules.Expect, when set.
	Expect *ExpectCheck `json:"expect,omitempty"`
	// RulesFired are the rules that hid a difference, and "tolerance" for
	// numbers that differed within it.
	RulesFired []Fired `json:"rules_fired,omitempty"`
}

// ExpectCheck says which side's stdout the expect pattern matched.
type ExpectCheck struct {
	Pattern   string `json:"pattern"`
	Reference bool   `json:"reference"`
	Got       bool   `json:"got"`
}

// Fired is one rule that hid a difference: how many lines, and the first
// pair of lines it hid.
type Fired struct {
	Rule    string `json:"rule"`
	Count   int    `json:"count"`
	Example string `json:"example"`
}

// contextLines is how many lines of context the Verdict gives around the
// first difference.
const contextLines = 3

// Compare compares the port's run got with the reference run ref. Rules
// that do not compile (a bad Ignore or Expect pattern) give a failing
// Verdict saying so; LoadRules and Rules.Check catch them earlier.
func Compare(ref, got Run, r Rules) Verdict {
	v := Verdict{RefStatus: ref.Status(), GotStatus: got.Status()}
	m, err := r.compile()
	var expect *regexp.Regexp
	if err == nil && r.Expect != "" {
		expect, err = regexp.Compile(r.Expect)
		if err != nil {
			err = fmt.Errorf("expect pattern %q: %v", r.Expect, err)
		}
	}
	if err != nil {
		v.Reason = err.Error()
		return v
	}
	c := &comparison{rules: r, m: m, v: &v, fired: map[string]*Fired{}}
	c.streams(ref, got)
	if expect != nil {
		v.Expect = &ExpectCheck{Pattern: r.Expect, Reference: expect.Match(ref.Stdout), Got: expect.Match(got.Stdout)}
	}
	v.RulesFired = c.firedList()
	v.Reason, v.Pass = reason(ref, got, &v)
	return v
}

// Check reports a rule set that cannot be used (a pattern that does not
// compile, an unknown built-in rule, a negative tolerance).
func (r Rules) Check() error {
	if r.RelTol < 0 || r.AbsTol < 0 {
		return fmt.Errorf("tolerances must not be negative (rtol %g, atol %g)", r.RelTol, r.AbsTol)
	}
	if _, err := r.compile(); err != nil {
		return err
	}
	if _, err := regexp.Compile(r.Expect); err != nil {
		return fmt.Errorf("expect pattern %q: %v", r.Expect, err)
	}
	return nil
}

// reason picks the one line a person reads: how the runs ended first, then
// the self-check, then the output.
func reason(ref, got Run, v *Verdict) (string, bool) {
	switch {
	case ref.TimedOut && got.TimedOut:
		return fmt.Sprintf("both timed out (reference %s, port %s)", roundDuration(ref.Elapsed), roundDuration(got.Elapsed)), false
	case ref.TimedOut:
		return "the reference " + ref.Status(), false
	case got.TimedOut:
		return "the port " + got.Status(), false
	case ref.Crashed() || got.Crashed() || ref.ExitCode != got.ExitCode:
		s := ref.Status() + " vs " + got.Status()
		if !strings.HasPrefix(s, "exit") {
			s = "exit " + s
		}
		return s, false
	case v.Expect != nil && !v.Expect.Reference && !v.Expect.Got:
		return fmt.Sprintf("expect /%s/ matched neither output", v.Expect.Pattern), false
	case v.Expect != nil && !v.Expect.Reference:
		return fmt.Sprintf("expect /%s/ did not match the reference's output", v.Expect.Pattern), false
	case v.Expect != nil && !v.Expect.Got:
		return fmt.Sprintf("expect /%s/ did not match the port's output", v.Expect.Pattern), false
	case v.Line > 0 || v.Stream != "":
		return v.firstDifference(), false
	}
	s := "same output within tolerance"
	if ref.ExitCode != 0 {
		s += fmt.Sprintf(" (exit %d in both)", ref.ExitCode)
	}
	return s, true
}

func (v *Verdict) firstDifference() string {
	if v.Line == 0 {
		return v.Stream + ": " + v.Detail
	}
	return fmt.Sprintf("first difference at line %d of %s", v.Line, v.Stream)
}

// comparison accumulates the Verdict over the streams compared.
type comparison struct {
	rules Rules
	m     *masker
	v     *Verdict
	fired map[string]*Fired
	order []string
}

// streams compares stdout, stderr when asked, then the files listed.
func (c *comparison) streams(ref, got Run) {
	c.text("stdout", ref.Stdout, got.Stdout)
	if c.rules.CompareStderr {
		c.text("stderr", ref.Stderr, got.Stderr)
	}
	for _, name := range c.rules.Files {
		c.file(name, ref.Files, got.Files)
	}
}

// file compares one listed file: missing on a side is a difference; binary
// content (a NUL byte, or not UTF-8) is compared byte for byte.
func (c *comparison) file(name string, ref, got map[string][]byte) {
	stream := "file " + name
	w, wok := ref[name]
	g, gok := got[name]
	switch {
	case !wok || !gok:
		detail := "not written by the reference"
		switch {
		case !wok && !gok:
			detail = "written by neither run"
		case wok:
			detail = "not written by the port"
		}
		c.firstAt(stream, 0, "", "", detail)
		c.v.DifferingLines++
	case isBinary(w) || isBinary(g):
		if i := firstByteDiff(w, g); i >= 0 {
			c.firstAt(stream, 0, "", "", byteDiffDetail(w, g, i))
			c.v.DifferingLines++
		}
	default:
		c.text(stream, w, g)
	}
}

// text compares two outputs line by line.
func (c *comparison) text(stream string, ref, got []byte) {
	want, have := splitLines(ref), splitLines(got)
	n := max(len(want), len(have))
	c.v.Lines += n
	for i := 0; i < n; i++ {
		if i >= len(want) || i >= len(have) {
			c.v.DifferingLines += n - i
			w, g := lineAt(want, i), lineAt(have, i)
			detail := fmt.Sprintf("the port printed %d more lines", len(have)-len(want))
			if len(want) > len(have) {
				detail = fmt.Sprintf("the port stopped %d lines early", len(want)-len(have))
			}
			if c.firstAt(stream, i+1, w, g, detail) {
				c.v.Context = c.context(want, have, i)
			}
			return
		}
		if same, detail := c.sameLine(want[i], have[i]); !same {
			c.v.DifferingLines++
			if c.firstAt(stream, i+1, want[i], have[i], detail) {
				c.v.Context = c.context(want, have, i)
			}
		}
	}
}

// firstAt records the first difference; it says whether this was it.
func (c *comparison) firstAt(stream string, line int, want, got, detail string) bool {
	if c.v.Stream != "" {
		return false
	}
	c.v.Stream, c.v.Line, c.v.Want, c.v.Got, c.v.Detail = stream, line, want, got, detail
	return true
}

// sameLine compares two lines and records the rules that fired.
func (c *comparison) sameLine(want, got string) (bool, string) {
	same, fired, detail := c.match(want, got)
	for _, f := range fired {
		c.fire(f, want, got)
	}
	return same, detail
}

// match compares two lines: whether they are equal, the rules that hid a
// difference, or what differs.
func (c *comparison) match(want, got string) (bool, []string, string) {
	if want == got {
		return true, nil, ""
	}
	// Numbers within tolerance need no rule (and the rules' regular
	// expressions cost more than the tokenizer).
	if same, tolerated, _ := c.equalTokens(tokenize(want), tokenize(got)); same {
		if tolerated {
			return true, []string{"tolerance"}, ""
		}
		return true, nil, ""
	}
	mw, mg, fired := c.m.maskPair(want, got)
	same, tolerated, detail := c.equalTokens(tokenize(mw), tokenize(mg))
	if !same {
		return false, nil, detail
	}
	if tolerated {
		fired = append(fired, "tolerance")
	}
	return true, fired, ""
}

// equalTokens compares two tokenized lines: text exactly, numbers within
// tolerance. tolerated says a number differed within it.
func (c *comparison) equalTokens(w, g []token) (same, tolerated bool, detail string) {
	for i := 0; i < min(len(w), len(g)); i++ {
		a, b := w[i], g[i]
		switch {
		case a.isNum != b.isNum || !a.isNum && a.text != b.text:
			x, y := differingWords(a.text, b.text)
			return false, false, fmt.Sprintf("%s vs %s", shown(x), shown(y))
		case a.isNum && !closeEnough(a, b, c.rules):
			return false, false, fmt.Sprintf("%s vs %s: beyond rtol %g, atol %g", a.text, b.text, c.rules.RelTol, c.rules.AbsTol)
		case a.isNum && a.text != b.text:
			tolerated = true
		}
	}
	if len(w) != len(g) {
		return false, false, "the lines end differently"
	}
	return true, tolerated, ""
}

// differingWords trims the words two texts share at both ends, so the
// detail shows "PASS" vs "FAIL" rather than two whole lines.
func differingWords(a, b string) (string, string) {
	p := 0
	for p < min(len(a), len(b)) && a[p] == b[p] {
		p++
	}
	for p > 0 && a[p-1] != ' ' {
		p--
	}
	a, b = a[p:], b[p:]
	q := 0
	for q < min(len(a), len(b)) && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	for q > 0 && a[len(a)-q] != ' ' {
		q--
	}
	return a[:len(a)-q], b[:len(b)-q]
}

// shown quotes masked text for a detail line.
func shown(s string) string {
	for _, b := range builtins {
		s = strings.ReplaceAll(s, placeholder(b.name), "<"+b.name+">")
	}
	return fmt.Sprintf("%q", s)
}

func (c *comparison) fire(rule, want, got string) {
	f, ok := c.fired[rule]
	if !ok {
		f = &Fired{Rule: rule, Example: fmt.Sprintf("%q vs %q", clip(want), clip(got))}
		c.fired[rule] = f
		c.order = append(c.order, rule)
	}
	f.Count++
}

// firedList lists the rules fired, most often first.
func (c *comparison) firedList() []Fired {
	out := make([]Fired, 0, len(c.order))
	for _, name := range c.order {
		out = append(out, *c.fired[name])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	if len(out) == 0 {
		return nil
	}
	return out
}

// context gives the lines before the first difference (same on both
// sides), the differing pair, and what follows on each side.
func (c *comparison) context(want, have []string, i int) []string {
	var out []string
	for j := max(0, i-contextLines); j < i; j++ {
		out = append(out, "  "+have[j])
	}
	for j := i; j < i+contextLines && (j < len(want) || j < len(have)); j++ {
		if j < len(want) && j < len(have) {
			if same, _, _ := c.match(want[j], have[j]); same {
				out = append(out, "  "+have[j])
				continue
			}
		}
		if j < len(want) {
			out = append(out, "- "+want[j])
		}
		if j < len(have) {
			out = append(out, "+ "+have[j])
		}
	}
	return out
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// splitLines splits output into lines: "\r\n" is "\n", and a final newline
// ends the last line rather than starting an empty one.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r \t")
	}
	return lines
}

// clip shortens a line for an example.
func clip(s string) string {
	const n = 120
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
