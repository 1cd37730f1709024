package outcmp

import (
	"fmt"
	"regexp"
	"strings"
)

// Rules say how two runs are compared.
type Rules struct {
	// Numbers a and b are equal when |a-b| <= AbsTol + RelTol*max(|a|,|b|)
	// plus half a unit in the last printed digit of each (closeEnough).
	RelTol float64 `json:"rtol"`
	AbsTol float64 `json:"atol"`
	// Ignore are regular expressions: a line that matches one on both sides
	// is masked whole.
	Ignore []string `json:"ignore,omitempty"`
	// Expect, when set, must match the port's stdout (and the reference's:
	// the Verdict says which side failed), as benchmark suites check their
	// programs.
	Expect string `json:"expect,omitempty"`
	// Files are the files the program writes that are compared too: as
	// text like stdout, or byte for byte when either side is binary.
	Files []string `json:"files,omitempty"`
	// CompareStderr compares stderr like stdout (off by default: runtimes
	// print their own warnings there).
	CompareStderr bool `json:"compare_stderr,omitempty"`
	// Disable names built-in rules not to apply ("time", "device"...).
	Disable []string `json:"disable_rules,omitempty"`
}

// DefaultRules are the rules with no flags and no rocmk.toml: numpy
// allclose's tolerances, and all built-in rules on.
func DefaultRules() Rules {
	return Rules{RelTol: 1e-5, AbsTol: 1e-8}
}

// A builtin rule masks what differs by nature between two runs. re's first
// group (or the whole match when it has none) is what is masked; whole
// masks the line.
type builtin struct {
	name  string
	re    *regexp.Regexp
	whole bool
	// hints: re can only match a line whose lower case holds one of these
	// (a cheap test before the regular expression).
	hints []string
	// unit and keyword make a number rule (instead of re): a number is
	// masked when unit matches what follows it or a match of keyword ends
	// where it starts.
	unit, keyword *regexp.Regexp
	// digitSep, when set, is the cheap test instead: a digit, one of these
	// bytes, a digit ("12:50", "2026-11").
	digitSep string
}

// builtins in the order they are applied: whole-line masks first, then the
// longer spans (a bandwidth's "/s" is not a time).
var builtins = []builtin{
	{name: "device", hints: []string{"device", "capability", "version", "gcnarch", "using", "pci", "uuid"}, whole: true, re: regexp.MustCompile(`(?i)(?:\bGPU Device\b|\bDevice\s*\d*\s*:|\bdevice name\b|\bcompute capability\b|\bCUDA Capability\b|\bDriver Version\b|\bRuntime Version\b|\bgcnArchName\b|\busing (?:CUDA |HIP )?(?:GPU|device)\b|\bPCI (?:Bus|Domain|Device) ID\b|\bUUID\b)`)},
	{name: "date", digitSep: ":-", re: regexp.MustCompile(`(\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d\d:\d\d:\d\d(?: [A-Z]{3,5})? \d{4}\b|\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)?\b|\b\d\d:\d\d:\d\d(?:\.\d+)?\b)`)},
	{name: "pointer", hints: []string{"0x"}, re: regexp.MustCompile(`\b(0[xX][0-9a-fA-F]{9,16})\b`)},
	{name: "bandwidth", hints: []string{"/s", "flops", "bandwidth", "throughput", "performance", "per second"},
		unit:    regexp.MustCompile(`(?i)^\s*(?:[a-z]+/s(?:ec)?\b|[kmgtp]?flops\b)`),
		keyword: regexp.MustCompile(`(?i)(?:\b(?:bandwidth|throughput|performance|per second|[kmgtp]?flops)|\b[a-z]+/s(?:ec)?)\s*[=:]\s*`)},
	{name: "time", hints: []string{"s", "min", "time", "took", "duration", "elapsed"},
		unit:    regexp.MustCompile(`(?i)^\s*(?:ms|msecs?|milliseconds?|us|usecs?|µs|microseconds?|ns|nsecs?|nanoseconds?|s|secs?|seconds?|mins?|minutes?)\b`),
		keyword: regexp.MustCompile(`(?i)\b(?:time|elapsed|took|duration)\b\s*[=:]?\s*`)},
	{name: "pid", hints: []string{"pid", "process id"}, re: regexp.MustCompile(`(?i)\b(?:pid|process id)\b\s*[=:#]?\s*(\d+)`)},
}

// BuiltinRules are the names of the built-in rules, for Rules.Disable.
func BuiltinRules() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}

// masker is Rules compiled: the user's patterns and the built-in rules in
// use.
type masker struct {
	ignore   []*regexp.Regexp
	builtins []builtin
}

func (r Rules) compile() (*masker, error) {
	m := &masker{}
	for _, p := range r.Ignore {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("ignore pattern %q: %v", p, err)
		}
		m.ignore = append(m.ignore, re)
	}
	off := map[string]bool{}
	for _, d := range r.Disable {
		if !isBuiltin(d) {
			return nil, fmt.Errorf("unknown built-in rule %q: want one of %s", d, strings.Join(BuiltinRules(), ", "))
		}
		off[d] = true
	}
	for _, b := range builtins {
		if !off[b.name] {
			m.builtins = append(m.builtins, b)
		}
	}
	return m, nil
}

func isBuiltin(name string) bool {
	for _, b := range builtins {
		if b.name == name {
			return true
		}
	}
	return false
}

// placeholder stands for a masked span; it holds no digit, so it is text
// to the number tokenizer.
func placeholder(rule string) string { return "\x00" + rule + "\x00" }

// maskPair masks a pair of lines that differ. It returns the masked lines
// and the rules that hid a difference (what they masked is not the same on
// both sides).
func (m *masker) maskPair(want, got string) (string, string, []string) {
	for i, re := range m.ignore {
		if re.MatchString(want) && re.MatchString(got) {
			return "", "", []string{"ignore: " + m.ignore[i].String()}
		}
	}
	var fired []string
	lw, lg := strings.ToLower(want), strings.ToLower(got)
	for _, b := range m.builtins {
		if !b.hinted(lw) && !b.hinted(lg) {
			continue
		}
		w, wspans := b.mask(want)
		g, gspans := b.mask(got)
		if wspans == nil && gspans == nil {
			continue
		}
		want, got = w, g
		if strings.Join(wspans, "\x00") != strings.Join(gspans, "\x00") {
			fired = append(fired, b.name)
		}
	}
	return want, got, fired
}

func (b builtin) hinted(lower string) bool {
	if b.digitSep != "" {
		for i := 1; i+1 < len(lower); i++ {
			if isDigit(lower[i-1]) && isDigit(lower[i+1]) && strings.IndexByte(b.digitSep, lower[i]) >= 0 {
				return true
			}
		}
		return false
	}
	for _, h := range b.hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

// numbers are the spans a number rule masks: numbers found by the
// tokenizer's scanner, tested with anchored expressions (a regular
// expression that starts with a number is slow to search for).
func (b builtin) numbers(line string) [][]int {
	var locs [][]int
	after := map[int]bool{}
	for _, k := range b.keyword.FindAllStringIndex(line, -1) {
		after[k[1]] = true
	}
	for _, sp := range numberSpans(line) {
		if after[sp[0]] || b.unit.MatchString(line[sp[1]:]) {
			locs = append(locs, sp[:])
		}
	}
	return locs
}

// mask replaces what b matches in line by its placeholder and returns the
// spans it replaced.
func (b builtin) mask(line string) (string, []string) {
	if b.whole {
		if b.re.MatchString(line) {
			return placeholder(b.name), []string{line}
		}
		return line, nil
	}
	var locs [][]int
	if b.unit != nil {
		locs = b.numbers(line)
	} else {
		locs = b.re.FindAllStringSubmatchIndex(line, -1)
	}
	if locs == nil {
		return line, nil
	}
	var sb strings.Builder
	var spans []string
	last := 0
	for _, loc := range locs {
		s, e := loc[0], loc[1]
		for g := 2; g+1 < len(loc); g += 2 { // the first group that took part
			if loc[g] >= 0 {
				s, e = loc[g], loc[g+1]
				break
			}
		}
		sb.WriteString(line[last:s])
		sb.WriteString(placeholder(b.name))
		spans = append(spans, line[s:e])
		last = e
	}
	sb.WriteString(line[last:])
	return sb.String(), spans
}
