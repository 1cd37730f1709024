package gpu

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rocmk/rocmk/inspect"
)

// Object is one code object a program ships: its target ID, its bytes and
// where it came from (for messages).
type Object struct {
	Target inspect.Target
	Data   []byte
	From   string // "embedded", "bundle vadd.hipfb", ...
}

// Match says how an Object fits a device, best first.
type Match int

const (
	MatchNone       Match = iota
	MatchGeneric          // the family's generic target (code object v6)
	MatchCompatible       // same processor, xnack/sramecc "any" where the device has on or off
	MatchExact            // the device's target ID
)

func (m Match) String() string {
	return [...]string{"none", "generic", "compatible", "exact"}[m]
}

// Choice is the object chosen for a device, and why.
type Choice struct {
	Device inspect.Target
	Object Object
	Match  Match
	// Rejected explains, for every other object, why it was not taken.
	Rejected []string
}

// Explain is one line: which object was chosen for which device, and the rule.
func (c Choice) Explain() string {
	var why string
	switch c.Match {
	case MatchExact:
		why = "exact target ID"
	case MatchCompatible:
		why = "compatible: " + featureWhy(c.Device, c.Object.Target)
	case MatchGeneric:
		why = fmt.Sprintf("generic target covering %s (no object for the processor itself)", c.Device.Proc)
	}
	s := fmt.Sprintf("device %s: chose %s from %s (%s)", c.Device, c.Object.Target, c.Object.From, why)
	if len(c.Rejected) > 0 {
		s += "; passed over " + strings.Join(c.Rejected, ", ")
	}
	return s
}

// ErrNoObject is wrapped by Choose's error when no object fits.
var ErrNoObject = errors.New("no code object fits the device")

// NoObjectError lists every object and why it does not fit.
type NoObjectError struct {
	Device   inspect.Target
	Rejected []string
}

func (e *NoObjectError) Error() string {
	if len(e.Rejected) == 0 {
		return fmt.Sprintf("device %s: no code objects to choose from", e.Device)
	}
	return fmt.Sprintf("device %s: no code object fits: %s", e.Device, strings.Join(e.Rejected, "; "))
}

func (e *NoObjectError) Unwrap() error { return ErrNoObject }

// Choose picks the object for device (a target ID as the runtime reports
// it, e.g. gfx90a:sramecc+:xnack-) by LLVM's target-ID rules: the exact
// target ID first; then the same processor where each of the object's
// features is "any" or equals the device's; then a generic target whose
// members include the processor, under the same feature rule. Among equals
// the object with more features set wins (it was built for the mode the
// device runs in). A device feature left out ("any": unknown) only accepts
// objects that leave it out too.
func Choose(device string, objs []Object) (Choice, error) {
	dev, err := inspect.ParseTarget(device)
	if err != nil {
		return Choice{}, fmt.Errorf("device target: %w", err)
	}
	best, bestM, bestSet := -1, MatchNone, -1
	why := make([]string, len(objs))
	for i, o := range objs {
		m, reason := matchOf(dev, o.Target)
		why[i] = fmt.Sprintf("%s from %s: %s", o.Target, o.From, reason)
		set := featuresSet(o.Target)
		if m > bestM || (m == bestM && m != MatchNone && set > bestSet) {
			best, bestM, bestSet = i, m, set
		}
	}
	if best < 0 {
		return Choice{}, &NoObjectError{Device: dev, Rejected: why}
	}
	c := Choice{Device: dev, Object: objs[best], Match: bestM}
	for i := range objs {
		if i != best {
			c.Rejected = append(c.Rejected, why[i])
		}
	}
	return c, nil
}

// matchOf rates object target o for device dev, with the reason.
func matchOf(dev, o inspect.Target) (Match, string) {
	if o.String() == dev.String() {
		return MatchExact, "exact"
	}
	m := MatchCompatible
	if o.Proc != dev.Proc {
		p := o.Processor()
		if !p.Generic || !contains(p.Members, dev.Proc) {
			return MatchNone, fmt.Sprintf("another processor (%s is not %s)", o.Proc, dev.Proc)
		}
		m = MatchGeneric
	}
	if r := featureClash("xnack", dev.XNACK, o.XNACK); r != "" {
		return MatchNone, r
	}
	if r := featureClash("sramecc", dev.SRAMECC, o.SRAMECC); r != "" {
		return MatchNone, r
	}
	return m, m.String()
}

// featureClash is why an object built with feature obj cannot run on a
// device in mode dev ("" when it can): "any" runs in either mode, on/off
// only in its own, and a device of unknown mode takes only "any".
func featureClash(name string, dev, obj inspect.Feature) string {
	if obj == inspect.FeatureAny || obj == dev {
		return ""
	}
	if dev == inspect.FeatureAny {
		return fmt.Sprintf("built for %s %s, the device's %s mode is unknown", name, obj, name)
	}
	return fmt.Sprintf("built for %s %s, the device runs %s %s", name, obj, name, dev)
}

// featureWhy describes the "any" features of a compatible object.
func featureWhy(dev, o inspect.Target) string {
	var parts []string
	if o.XNACK == inspect.FeatureAny && dev.XNACK != inspect.FeatureAny {
		parts = append(parts, "xnack any runs with the device's xnack "+dev.XNACK.String())
	}
	if o.SRAMECC == inspect.FeatureAny && dev.SRAMECC != inspect.FeatureAny {
		parts = append(parts, "sramecc any runs with the device's sramecc "+dev.SRAMECC.String())
	}
	return strings.Join(parts, ", ")
}

func featuresSet(t inspect.Target) int {
	n := 0
	if t.XNACK != inspect.FeatureAny {
		n++
	}
	if t.SRAMECC != inspect.FeatureAny {
		n++
	}
	return n
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// FromEmbedded turns one source's map of `rocmk build --embed go`
// (Objects[source]: target ID -> bytes) into Objects, in target order.
func FromEmbedded(m map[string][]byte) ([]Object, error) {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Object, 0, len(ids))
	for _, id := range ids {
		t, err := inspect.ParseTarget(id)
		if err != nil {
			return nil, fmt.Errorf("embedded object %q: %w", id, err)
		}
		out = append(out, Object{Target: t, Data: m[id], From: "embedded"})
	}
	return out, nil
}

// FromBundle reads the code objects of an offload bundle (compressed or
// not), a code object, or a host binary with a .hip_fatbin; name is for
// messages.
func FromBundle(name string, data []byte) ([]Object, error) {
	f, err := inspect.Parse(name, data)
	if err != nil {
		return nil, err
	}
	var out []Object
	for _, co := range f.Objects {
		from := name
		if co.Entry != "" {
			from = name + " entry " + co.Entry
		}
		out = append(out, Object{Target: co.Target, Data: co.Data, From: from})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no AMDGPU code objects in it (%s)", name, f.Kind)
	}
	return out, nil
}
