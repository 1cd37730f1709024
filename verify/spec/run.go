package spec

import (
	"context"
	"encoding/binary"
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
	// Time measures passing cases with events (2 warm-ups, 10 launches).
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

// OutputResult is one output buffer's comparison.
type OutputResult struct {
	Case       string            `json:"case,omitempty"`
	Name       string            `json:"name"`
	DType      string            `json:"dtype"`
	Tolerance  verify.Tolerance  `json:"tolerance"`
	Comparison verify.Comparison `json:"comparison"`
	Got        verify.JSONFloat  `json:"worst_got"` // NaN and infinities as strings
	Want       verify.JSONFloat  `json:"worst_want"`
}

// Describe is "y[123]: got 1.5 want 1.25 (abs 0.25, rel 0.2)".
func (o *OutputResult) Describe() string {
	c := o.Comparison
	if c.Worst < 0 {
		return o.Name + ": empty"
	}
	return fmt.Sprintf("%s[%d]: got %s want %s (abs err %.3g, rel err %.3g)",
		o.Name, c.Worst, fmtNum(float64(o.Got)), fmtNum(float64(o.Want)), c.MaxAbs, c.MaxRel)
}

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
		cr, err := runCase(ctx, c, o)
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

// pointerTable encodes a table of device addresses: the target buffer's
// address plus each element's offset (v.Data) in the target's elements.
func (c *Case) pointerTable(v *Value, in Init, dev []verify.DevPtr) []byte {
	out := make([]byte, 8*len(v.Data))
	for i := range c.Args {
		t := &c.Args[i]
		if t.Arg.Name != in.Pointers || t.Arg != c.Spec.arg(in.Pointers) {
			continue
		}
		for j, off := range v.Data {
			binary.LittleEndian.PutUint64(out[8*j:], uint64(dev[i])+uint64(int64(off)*int64(t.DType.Size)))
		}
	}
	return out
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

func runCase(ctx context.Context, c *Case, o RunOptions) (*CaseResult, error) {
	s := c.Spec
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
	var ptrs []verify.DevPtr
	defer func() {
		for _, p := range ptrs {
			_ = rt.Free(p)
		}
	}()
	args := make([]verify.Arg, len(c.Args))
	dev := make([]verify.DevPtr, len(c.Args))
	for i := range c.Args {
		v := &c.Args[i]
		switch {
		case v.Arg.IsStruct():
			args[i] = verify.Raw(encodeStruct(v.Arg, v.Fields), structLayout(v.Arg).align)
			continue
		case !v.Arg.IsBuffer():
			args[i] = scalarArg(v)
			continue
		case v.Null:
			args[i] = verify.Ptr(0)
			continue
		}
		n := len(v.Data) * v.DType.Size
		p, err := rt.Alloc(max(n, 1))
		if err != nil {
			return nil, fmt.Errorf("%s: alloc %s (%d bytes): %w", c.Name, v.Arg.Name, n, err)
		}
		ptrs = append(ptrs, p)
		dev[i] = p
		args[i] = verify.Ptr(p)
	}
	for i := range c.Args {
		v := &c.Args[i]
		if dev[i] == 0 || len(v.Data) == 0 {
			continue
		}
		data := v.DType.Encode(v.Data)
		if in, _ := parseInit(v.Arg.Init); in.Kind == "pointers" {
			data = c.pointerTable(v, in, dev)
		}
		if err := rt.CopyIn(dev[i], data); err != nil {
			return nil, fmt.Errorf("%s: copy %s to the device: %w", c.Name, v.Arg.Name, err)
		}
	}
	if o.LaunchTimeout <= 0 {
		o.LaunchTimeout = 20 * time.Second
	}
	type launch struct {
		symbol      string
		grid, block verify.Dim3
		shared      int
		args        []verify.Arg
	}
	var launches []launch
	for _, l := range c.Launches {
		la := launch{symbol: s.symbol(l.Step, o), shared: l.Shared,
			grid:  verify.Dim3{X: uint32(l.Grid[0]), Y: uint32(l.Grid[1]), Z: uint32(l.Grid[2])},
			block: verify.Dim3{X: uint32(l.Block[0]), Y: uint32(l.Block[1]), Z: uint32(l.Block[2])}}
		for _, ai := range l.Args {
			la.args = append(la.args, args[ai])
		}
		launches = append(launches, la)
		if len(c.Launches) > 1 {
			cr.Steps = append(cr.Steps, StepResult{Step: l.Label, Symbol: la.symbol, Grid: l.Grid, Block: l.Block, Shared: l.Shared})
		}
	}
	for li, la := range launches {
		what := la.symbol
		if l := c.Launches[li]; l.Label != "" {
			what = fmt.Sprintf("%s (step %d of %d, %s)", l.Label, li+1, len(launches), la.symbol)
		}
		lctx, cancel := context.WithTimeout(ctx, o.LaunchTimeout)
		err = o.Module.Launch(lctx, la.symbol, la.grid, la.block, la.shared, la.args...)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: %s did not finish within %s (a hung kernel?)", c.Name, what, o.LaunchTimeout)
		}
		if err != nil {
			var ve *verify.Error
			if errors.As(err, &ve) && ve.Sticky() {
				// The kernel faulted: report it as this case's failure and
				// recover the context for the next one.
				cr.Error = err.Error()
				if len(launches) > 1 {
					cr.Error = what + ": " + cr.Error
				}
				ptrs = nil
				if rerr := rt.Reset(); rerr != nil {
					return nil, fmt.Errorf("%s: %v; reset failed: %w", c.Name, err, rerr)
				}
				return cr, nil
			}
			return nil, fmt.Errorf("%s: launch %s: %w", c.Name, what, err)
		}
	}
	cr.OK = true
	for i := range c.Args {
		v := &c.Args[i]
		if !v.Arg.Output {
			continue
		}
		got := make([]byte, len(v.Data)*v.DType.Size)
		if len(got) > 0 {
			if err := rt.CopyOut(got, dev[i]); err != nil {
				return nil, fmt.Errorf("%s: copy %s from the device: %w", c.Name, v.Arg.Name, err)
			}
		}
		tol := s.ToleranceFor(v.Arg.Name)
		cmp := verify.CompareParallel(v.DType.V, got, v.DType.Encode(want[v.Arg.Name]), tol)
		or := OutputResult{Name: v.Arg.Name, DType: v.DType.Name, Tolerance: tol, Comparison: cmp}
		if cmp.Worst >= 0 {
			or.Got = verify.JSONFloat(verify.Decode(v.DType.V, got, cmp.Worst))
			or.Want = verify.JSONFloat(want[v.Arg.Name][cmp.Worst])
		}
		if !cmp.OK() {
			cr.OK = false
		}
		cr.Outputs = append(cr.Outputs, or)
	}
	if o.Time && cr.OK {
		var total time.Duration
		for li, la := range launches {
			tctx, cancel := context.WithTimeout(ctx, 13*o.LaunchTimeout)
			t, err := o.Module.Time(tctx, 2, 10, la.symbol, la.grid, la.block, la.shared, la.args...)
			cancel()
			if err != nil {
				total = 0
				break
			}
			total += t.Median
			if len(cr.Steps) > 0 {
				cr.Steps[li].GPUTime = t.Median
			}
		}
		cr.GPUTime = total
	}
	return cr, nil
}
