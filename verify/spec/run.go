package spec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rocmk/rocmk/verify"
)

// RunOptions says where and how a spec's cases run.
type RunOptions struct {
	Runtime verify.Runtime
	Module  verify.Module // the loaded image holding the kernel
	// Symbol is the kernel's symbol in that image (see Resolve). A spec
	// with steps launches the symbols Resolve recorded for its steps (the
	// kernels as written when it was not called).
	Symbol string
	// Time measures every case that ran with events (2 warm-ups, 10
	// launches of each step).
	Time bool
	// LaunchTimeout bounds each launch (default 20s), so a hung kernel is
	// an error rather than a hung rocmk.
	LaunchTimeout time.Duration
	// Progress, when set, is called after each case.
	Progress func(*CaseResult)
}

// Result is the outcome of one spec.
type Result struct {
	Spec   string       `json:"spec"`
	Kernel string       `json:"kernel"`
	Symbol string       `json:"symbol"`
	OK     bool         `json:"ok"`
	Cases  []CaseResult `json:"cases"`
	// Worst is the output comparison with the largest relative error over
	// all cases (the first failing one when a case failed).
	Worst *OutputResult `json:"worst,omitempty"`
}

// Failed counts the cases that did not pass.
func (r *Result) Failed() int {
	n := 0
	for _, c := range r.Cases {
		if !c.OK {
			n++
		}
	}
	return n
}

// CaseResult is the outcome of one case.
type CaseResult struct {
	Case    string           `json:"case"`
	Sizes   map[string]int64 `json:"sizes,omitempty"`
	Grid    [3]int           `json:"grid"` // the first launch's
	Block   [3]int           `json:"block"`
	Shared  int              `json:"shared_bytes"`
	OK      bool             `json:"ok"`
	Error   string           `json:"error,omitempty"`
	Outputs []OutputResult   `json:"outputs,omitempty"`
	RefTime time.Duration    `json:"reference_ns"`
	// GPUTime is the median of the launch (the sum of the steps' medians).
	GPUTime time.Duration `json:"gpu_median_ns,omitempty"`
	// Steps are the launches of a spec with steps.
	Steps []StepResult `json:"steps,omitempty"`
}

// StepResult is one launch of a case of a spec with steps.
type StepResult struct {
	Step    string        `json:"step"`
	Symbol  string        `json:"symbol"`
	Grid    [3]int        `json:"grid"`
	Block   [3]int        `json:"block"`
	Shared  int           `json:"shared_bytes"`
	GPUTime time.Duration `json:"gpu_median_ns,omitempty"`
}

// OutputResult is one output buffer's comparison (the runner's).
type OutputResult = verify.OutputResult

func fmtNum(v float64) string { return fmt.Sprintf("%.8g", v) }

// Tolerance is the tolerance for output name: the spec's values over the
// dtype's defaults (verify.DefaultTolerance).
// A key given as 0 means 0: { atol = 0, rtol = 0 } (or { ulp = 0 }) asks
// for equal values.
func (s *Spec) ToleranceFor(name string) verify.Tolerance {
	a := s.arg(name)
	d, _ := parseDType(a.DType)
	t := verify.DefaultTolerance(d.V)
	ts, ok := s.Tolerance[name]
	if !ok {
		return t
	}
	given := s.tolGiven[name]
	if given["atol"] || given["rtol"] || ts.ATol != 0 || ts.RTol != 0 {
		t.ATol, t.RTol = ts.ATol, ts.RTol
	}
	switch {
	case ts.ULP > 0:
		t.MaxULP = ts.ULP
	case given["ulp"]:
		t.ATol, t.RTol, t.MaxULP = 0, 0, 0
	}
	return t
}

// scalarArg passes a scalar value as the kernel expects it: the dtype's
// bytes at the dtype's alignment.
func scalarArg(v *Value) verify.Arg {
	switch v.DType.V {
	case verify.F32:
		return verify.Float32(float32(v.Scalar))
	case verify.F64:
		return verify.Float64(v.Scalar)
	case verify.I32:
		return verify.Int32(int32(v.Scalar))
	case verify.U32:
		return verify.Uint32(uint32(v.Scalar))
	case verify.I64:
		return verify.Int64(int64(v.Scalar))
	}
	return verify.Raw(v.DType.Encode([]float64{v.Scalar}), v.DType.Size)
}

// Run runs every case of s and compares the outputs with the reference.
// With nil cases it goes through the whole sweep one case at a time (a case
// is built, filled, run and dropped before the next). A case that ran but did
// not match is a failed case in the result, not an error; errors are for what
// stops the run (runtime failures, bad specs, ctx ending).
func Run(ctx context.Context, s *Spec, cases []*Case, o RunOptions) (*Result, error) {
	res := &Result{Spec: s.Label(), Kernel: s.Kernel, Symbol: o.Symbol, OK: true}
	ro := verify.RunnerOptions{LaunchTimeout: o.LaunchTimeout}
	if o.Time {
		ro.Warmup, ro.Repeats = 2, 10
	}
	r := verify.NewRunner(o.Runtime, ro)
	defer r.Close()
	seq := s.Cases()
	if cases != nil {
		seq = func(yield func(*Case, error) bool) {
			for _, c := range cases {
				if !yield(c, nil) {
					return
				}
			}
		}
	}
	for c, err := range seq {
		if err != nil {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		cr, err := runCase(ctx, c, r, o)
		c.release()
		if err != nil {
			return res, err
		}
		if !cr.OK {
			res.OK = false
		}
		res.Cases = append(res.Cases, *cr)
		for i := range cr.Outputs {
			out := cr.Outputs[i]
			out.Case = cr.Case
			worse := res.Worst == nil ||
				(!out.Comparison.OK() && res.Worst.Comparison.OK()) ||
				(out.Comparison.OK() == res.Worst.Comparison.OK() && worseErr(out.Comparison, res.Worst.Comparison))
			if worse {
				res.Worst = &out
			}
		}
		if o.Progress != nil {
			o.Progress(cr)
		}
	}
	return res, nil
}

// CheckCases builds every case, fills its inputs and computes its
// reference on the CPU, one case at a time: what can be checked without a
// GPU (a reference reading out of a buffer's bounds, a geometry that is not
// whole, an init file too short). It returns the first error, or ctx's.
func (s *Spec) CheckCases(ctx context.Context) error {
	for c, err := range s.Cases() {
		if err != nil {
			return err
		}
		_, err := c.ReferenceContext(ctx)
		c.release()
		if err != nil {
			return err
		}
	}
	return nil
}

func worseErr(a, b verify.Comparison) bool {
	if a.MaxRel != b.MaxRel && !math.IsNaN(a.MaxRel) {
		return a.MaxRel > b.MaxRel
	}
	return a.MaxAbs > b.MaxAbs
}

// symbol is the symbol step i launches.
func (s *Spec) symbol(i int, o RunOptions) string {
	switch {
	case len(s.steps) == 1 && o.Symbol != "":
		return o.Symbol
	case len(s.symbols) == len(s.steps):
		return s.symbols[i]
	}
	return s.steps[i].kernel
}

// runCase runs c through the runner: a case that faulted is a failed case
// (the context was recreated); any other error stops the run.
func runCase(ctx context.Context, c *Case, r *verify.Runner, o RunOptions) (*CaseResult, error) {
	cr := &CaseResult{Case: c.Name, Sizes: c.Sizes, Grid: c.Grid, Block: c.Block, Shared: c.Shared}
	t0 := time.Now()
	want, err := c.ReferenceContext(ctx)
	if err != nil {
		return nil, err
	}
	cr.RefTime = time.Since(t0)
	rt := o.Runtime
	if _, device, _ := c.hostBytes(); rt.Device().MemBytes > 0 && uint64(device) > rt.Device().MemBytes {
		return nil, c.errAt("", "the case needs %s of device memory, %s has %s", fmtBytes(device), rt.Device().Name, fmtBytes(int64(rt.Device().MemBytes)))
	}
	p := c.plan(o, want)
	out, err := r.Run(ctx, o.Module, p)
	if err != nil {
		var ve *verify.Error
		if !errors.As(err, &ve) || !ve.Sticky() {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		if r.Lost() != nil {
			return nil, fmt.Errorf("%s: %s: %w", c.Name, out.Error, err)
		}
	}
	cr.OK, cr.Error, cr.Outputs = out.OK(), out.Error, out.Outputs
	for i := range cr.Outputs {
		// The reference's own value, before it was rounded to the dtype.
		if or := &cr.Outputs[i]; or.Comparison.Worst >= 0 {
			or.Want = verify.JSONFloat(want[or.Name][or.Comparison.Worst])
		}
	}
	if out.Time != nil {
		cr.GPUTime = out.Time.Median
	}
	if len(p.Launches) > 1 {
		for i, l := range c.Launches {
			st := StepResult{Step: l.Label, Symbol: p.Launches[i].Kernel, Grid: l.Grid, Block: l.Block, Shared: l.Shared}
			if i < len(out.Steps) {
				st.GPUTime = out.Steps[i].Median
			}
			cr.Steps = append(cr.Steps, st)
		}
	}
	return cr, nil
}

// plan is what the runner runs for c: a buffer for each buffer argument
// that is not null, each launch's arguments, and want's encoding for each
// output. An output with an init starts with it; one without is poisoned.
func (c *Case) plan(o RunOptions, want map[string][]float64) *verify.Plan {
	p := &verify.Plan{Name: c.Name}
	args := make([]verify.Arg, len(c.Args))
	var bufs []int // the buffer arguments, in Buf order
	for i := range c.Args {
		v := &c.Args[i]
		switch {
		case v.Arg.IsStruct():
			args[i] = verify.Raw(encodeStruct(v.Arg, v.Fields), structLayout(v.Arg).align)
		case !v.Arg.IsBuffer():
			args[i] = scalarArg(v)
		case v.Null:
			args[i] = verify.Ptr(0)
		default:
			args[i] = verify.Buf(len(bufs))
			bufs = append(bufs, i)
		}
	}
	for _, i := range bufs {
		p.Buffers = append(p.Buffers, c.buffer(&c.Args[i], args))
	}
	for _, l := range c.Launches {
		la := verify.Launch{Label: l.Label, Kernel: c.Spec.symbol(l.Step, o), Shared: l.Shared,
			Grid:  verify.Dim3{X: uint32(l.Grid[0]), Y: uint32(l.Grid[1]), Z: uint32(l.Grid[2])},
			Block: verify.Dim3{X: uint32(l.Block[0]), Y: uint32(l.Block[1]), Z: uint32(l.Block[2])}}
		for _, ai := range l.Args {
			la.Args = append(la.Args, args[ai])
		}
		p.Launches = append(p.Launches, la)
	}
	for i := range c.Args {
		if v := &c.Args[i]; v.Arg.Output && v.Arg.IsBuffer() && !v.Null {
			p.Want = append(p.Want, v.DType.Encode(want[v.Arg.Name]))
		}
	}
	return p
}

// buffer is buffer argument v of the plan; args are the case's arguments
// (a table of pointers points into the buffer of one of them).
func (c *Case) buffer(v *Value, args []verify.Arg) verify.Buffer {
	b := verify.Buffer{Name: v.Arg.Name, DType: v.DType.V, Len: len(v.Data), Out: v.Arg.Output}
	if v.Arg.Output {
		tol := c.Spec.ToleranceFor(v.Arg.Name)
		b.Tol = &tol
	}
	in, _ := parseInit(v.Arg.Init)
	switch {
	case in.Kind == "pointers":
		b.Addrs = &verify.AddrTable{Buf: -1}
		for i := range c.Args {
			t := &c.Args[i]
			if bi, ok := args[i].IsBuf(); ok && t.Arg.Name == in.Pointers && t.Arg == c.Spec.arg(in.Pointers) {
				b.Addrs.Buf = bi
			}
		}
		for _, off := range v.Data {
			b.Addrs.Offsets = append(b.Addrs.Offsets, int64(off))
		}
	case !v.Arg.Output || v.Arg.Init != nil:
		b.Data = v.DType.Encode(v.Data)
	}
	return b
}
