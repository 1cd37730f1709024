package inspect

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Feature is the state of a target-ID feature (xnack or sramecc).
type Feature int8

const (
	FeatureAny Feature = iota // omitted in the target ID: code runs in either mode
	FeatureOff                // "feature-"
	FeatureOn                 // "feature+"
)

func (f Feature) String() string {
	switch f {
	case FeatureOff:
		return "off"
	case FeatureOn:
		return "on"
	}
	return "any"
}

func (f Feature) sign() string {
	switch f {
	case FeatureOff:
		return "-"
	case FeatureOn:
		return "+"
	}
	return ""
}

// Target is an AMDGPU target ID: a processor and the xnack/sramecc settings.
// The zero Feature is "any" (omitted).
type Target struct {
	Proc           string
	SRAMECC, XNACK Feature
}

// TargetPrefix is the triple prefix clang and code-object bundles put in
// front of a target ID.
const TargetPrefix = "amdgcn-amd-amdhsa--"

// ErrInvalidTarget is wrapped by every ParseTarget error.
var ErrInvalidTarget = errors.New("invalid target ID")

// TargetError says which part of a target ID is wrong.
type TargetError struct {
	Input string // the whole input
	Part  string // the bad part ("gfx91", "xnack+", "foo+", ...)
	Msg   string // what is wrong with it
}

func (e *TargetError) Error() string {
	if e.Part == "" || e.Part == e.Input {
		return fmt.Sprintf("invalid target ID %q: %s", e.Input, e.Msg)
	}
	return fmt.Sprintf("invalid target ID %q: %q: %s", e.Input, e.Part, e.Msg)
}

func (e *TargetError) Unwrap() error { return ErrInvalidTarget }

// ParseTarget parses and canonicalises a target ID: "gfx90a",
// "gfx90a:xnack+", "gfx908:xnack-:sramecc+" (features in any order),
// generic targets ("gfx11-generic"), with an optional "amdgcn-amd-amdhsa--"
// prefix. It follows clang's rules: only xnack and sramecc, each at most
// once, each only where the processor supports it, always with + or -.
// Surrounding space is ignored and names are case-insensitive.
func ParseTarget(s string) (Target, error) {
	in := s
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, TargetPrefix)
	bad := func(part, format string, args ...any) (Target, error) {
		return Target{}, &TargetError{Input: in, Part: part, Msg: fmt.Sprintf(format, args...)}
	}
	if s == "" {
		return bad("", "empty target")
	}
	parts := strings.Split(s, ":")
	name := parts[0]
	if name == "" {
		return bad("", "missing processor name before ':'")
	}
	p, ok := LookupProcessor(name)
	if !ok {
		msg := "unknown processor"
		if strings.HasPrefix(name, "sm_") || strings.HasPrefix(name, "compute_") {
			msg += " (an NVIDIA architecture; AMD targets look like gfx90a)"
		} else if sug := SuggestProcessors(name, 3); len(sug) > 0 {
			msg += "; did you mean " + strings.Join(sug, ", ") + "?"
		}
		return bad(name, "%s", msg)
	}
	t := Target{Proc: p.Name}
	seen := map[string]bool{}
	for _, f := range parts[1:] {
		if f == "" {
			return bad(":", "empty feature (stray ':')")
		}
		sign := f[len(f)-1]
		fname := f[:len(f)-1]
		if sign != '+' && sign != '-' {
			fname = f
		}
		if fname != "xnack" && fname != "sramecc" {
			known := "only xnack and sramecc may appear in a target ID"
			switch fname {
			case "cumode", "wavefrontsize64", "tgsplit":
				known += "; use the -m" + fname + " / -mno-" + fname + " compiler flag"
			}
			return bad(f, "unknown feature: %s", known)
		}
		if sign != '+' && sign != '-' {
			return bad(f, "feature needs + or - (e.g. %s+ or %s-); omit it for any", fname, fname)
		}
		if seen[fname] {
			return bad(f, "duplicate feature %s", fname)
		}
		seen[fname] = true
		v := FeatureOff
		if sign == '+' {
			v = FeatureOn
		}
		switch fname {
		case "xnack":
			if !p.XNACK {
				return bad(f, "feature xnack not supported by processor %s", p.Name)
			}
			t.XNACK = v
		case "sramecc":
			if !p.SRAMECC {
				return bad(f, "feature sramecc not supported by processor %s", p.Name)
			}
			t.SRAMECC = v
		}
	}
	return t, nil
}

// MustParseTarget is ParseTarget for constants in code and tests; it panics on error.
func MustParseTarget(s string) Target {
	t, err := ParseTarget(s)
	if err != nil {
		panic(err)
	}
	return t
}

// String returns the canonical target ID: processor, then sramecc, then
// xnack (alphabetical), "any" features omitted: "gfx908:sramecc+:xnack-".
func (t Target) String() string {
	var b strings.Builder
	b.WriteString(t.Proc)
	if t.SRAMECC != FeatureAny {
		b.WriteString(":sramecc" + t.SRAMECC.sign())
	}
	if t.XNACK != FeatureAny {
		b.WriteString(":xnack" + t.XNACK.sign())
	}
	return b.String()
}

// Processor returns the table entry of t's processor (zero value if unknown).
func (t Target) Processor() Processor {
	p, _ := LookupProcessor(t.Proc)
	return p
}

// MarshalText makes a Target a JSON string.
func (t Target) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses a target ID.
func (t *Target) UnmarshalText(b []byte) error {
	v, err := ParseTarget(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// ValidateTargets applies clang's rules to a list of targets for one
// compilation: no duplicate target IDs, and for each processor a feature is
// given (on or off) in all of its entries or in none. "gfx90a:xnack-" with
// "gfx90a:xnack+" is fine (two code objects); "gfx90a" with "gfx90a:xnack-"
// is not.
func ValidateTargets(ts []Target) error {
	seen := map[string]bool{}
	first := map[string]Target{}
	for _, t := range ts {
		if !t.Processor().Known() {
			return &TargetError{Input: t.String(), Part: t.Proc, Msg: "unknown processor"}
		}
		id := t.String()
		if seen[id] {
			return fmt.Errorf("%w: duplicate target %q", ErrInvalidTarget, id)
		}
		seen[id] = true
		f, ok := first[t.Proc]
		if !ok {
			first[t.Proc] = t
			continue
		}
		if (f.XNACK == FeatureAny) != (t.XNACK == FeatureAny) ||
			(f.SRAMECC == FeatureAny) != (t.SRAMECC == FeatureAny) {
			return fmt.Errorf("%w: invalid offload arch combinations: %q and %q (a feature must be given in all or none of %s's targets)",
				ErrInvalidTarget, f.String(), id, t.Proc)
		}
	}
	return nil
}

// ParseTargetList parses a list of target IDs separated by commas,
// semicolons or white space (the forms of --offload-arch, GPU_TARGETS and
// PYTORCH_ROCM_ARCH), validates the combination and returns them in input
// order.
func ParseTargetList(s string) ([]Target, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n'
	})
	var out []Target
	for _, f := range fields {
		t, err := ParseTarget(f)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if err := ValidateTargets(out); err != nil {
		return nil, err
	}
	return out, nil
}

// SortTargets sorts targets in processor order, then by feature settings.
func SortTargets(ts []Target) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := ProcessorIndex(ts[i].Proc), ProcessorIndex(ts[j].Proc)
		if a != b {
			return a < b
		}
		return ts[i].String() < ts[j].String()
	})
}

// SuggestProcessors returns up to n known processor names close to name
// (edit distance at most 2, or sharing a prefix), closest first.
func SuggestProcessors(name string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, p := range procList {
		d := editDistance(name, p.Name)
		if d <= 2 {
			cs = append(cs, cand{p.Name, d})
		}
	}
	prefix := func(s string) int {
		n := 0
		for n < len(s) && n < len(name) && s[n] == name[n] {
			n++
		}
		return n
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return prefix(cs[i].name) > prefix(cs[j].name)
	})
	var out []string
	for _, c := range cs {
		if len(out) == n {
			break
		}
		out = append(out, c.name)
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
