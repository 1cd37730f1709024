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
	Symbol  string        // the kernel's symbol in that image (see Resolve)
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
	Grid    [3]int           `json:"grid"`
	Block   [3]int           `json:"block"`
	Shared  int              `json:"shared_bytes"`
	OK      bool             `json:"ok"`
	Error   string           `json:"error,omitempty"`
	Outputs []OutputResult   `json:"outputs,omitempty"`
	RefTime time.Duration    `json:"reference_ns"`
	GPUTime time.Duration    `json:"gpu_median_ns,omitempty"`
}

// OutputResult is one output buffer's comparison.
type OutputResult struct {
	Case       string            `json:"case,omitempty"`
	Name       string            `json:"name"`
	DType      string            `json:"dtype"`
	Tolerance  verify.Tolerance  `json:"tolerance"`
	Comparison verify.Comparison `json:"comparison"`
	Got        float64           `json:"worst_got"`
	Want       float64           `json:"worst_want"`
}

// Describe is "y[123]: got 1.5 want 1.25 (abs 0.25, rel 0.2)".
func (o *OutputResult) Describe() string {
	c := o.Comparison
	if c.Worst < 0 {
		return o.Name + ": empty"
	}
	return fmt.Sprintf("%s[%d]: got %s want %s (abs err %.3g, rel err %.3g)",
		o.Name, c.Worst, fmtNum(o.Got), fmtNum(o.Want), c.MaxAbs, c.MaxRel)
}

func fmtNum(v float64) string { return fmt.Sprintf("%.8g", v) }

// Tolerance is the tolerance for output name: the spec's values over the
// dtype's defaults (verify.DefaultTolerance).
func (s *Spec) ToleranceFor(name string) verify.Tolerance {
	a := s.arg(name)
	d, _ := parseDType(a.DType)
	t := verify.DefaultTolerance(d.V)
	if ts, ok := s.Tolerance[name]; ok {
		if ts.ATol != 0 || ts.RTol != 0 {
			t.ATol, t.RTol = ts.ATol, ts.RTol
		}
		if ts.ULP > 0 {
			t.MaxULP = ts.ULP
		}
	}
	return t
}

// scalarArg passes a scalar value as the kernel expects it.
func scalarArg(v *Value) (verify.Arg, error) {
	switch v.DType.V {
	case verify.F32:
		return verify.Float32(float32(v.Scalar)), nil
	case verify.F64:
		return verify.Float64(v.Scalar), nil
	case verify.I32:
		return verify.Int32(int32(v.Scalar)), nil
	case verify.U32:
		return verify.Uint32(uint32(v.Scalar)), nil
	case verify.I64:
		return verify.Int64(int64(v.Scalar)), nil
	}
	return verify.Arg{}, fmt.Errorf("scalar %s: %s scalars are not supported (use f32, f64, i32, u32 or i64)", v.Arg.Name, v.DType.Name)
}

// Run runs every case of s and compares the outputs with the reference.
// A case that ran but did not match is a failed case in the result, not an
// error; errors are for what stops the run (runtime failures, bad specs).
func Run(ctx context.Context, s *Spec, cases []*Case, o RunOptions) (*Result, error) {
	res := &Result{Spec: s.Label(), Kernel: s.Kernel, Symbol: o.Symbol, OK: true}
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		cr, err := runCase(ctx, c, o)
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

func worseErr(a, b verify.Comparison) bool {
	if a.MaxRel != b.MaxRel && !math.IsNaN(a.MaxRel) {
		return a.MaxRel > b.MaxRel
	}
	return a.MaxAbs > b.MaxAbs
}

func runCase(ctx context.Context, c *Case, o RunOptions) (*CaseResult, error) {
	cr := &CaseResult{Case: c.Name, Sizes: c.Sizes, Grid: c.Grid, Block: c.Block, Shared: c.Shared}
	t0 := time.Now()
	want, err := c.Reference()
	if err != nil {
		return nil, err
	}
	cr.RefTime = time.Since(t0)
	rt := o.Runtime
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
		if !v.Arg.IsBuffer() {
			a, err := scalarArg(v)
			if err != nil {
				return nil, &Error{File: c.Spec.file, Spec: c.Spec.Label(), Msg: err.Error()}
			}
			args[i] = a
			continue
		}
		n := len(v.Data) * v.DType.Size
		p, err := rt.Alloc(max(n, 1))
		if err != nil {
			return nil, fmt.Errorf("%s: alloc %s (%d bytes): %w", c.Name, v.Arg.Name, n, err)
		}
		ptrs = append(ptrs, p)
		dev[i] = p
		if n > 0 {
			if err := rt.CopyIn(p, v.DType.Encode(v.Data)); err != nil {
				return nil, fmt.Errorf("%s: copy %s to the device: %w", c.Name, v.Arg.Name, err)
			}
		}
		args[i] = verify.Ptr(p)
	}
	grid := verify.Dim3{X: uint32(c.Grid[0]), Y: uint32(c.Grid[1]), Z: uint32(c.Grid[2])}
	block := verify.Dim3{X: uint32(c.Block[0]), Y: uint32(c.Block[1]), Z: uint32(c.Block[2])}
	if o.LaunchTimeout <= 0 {
		o.LaunchTimeout = 20 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, o.LaunchTimeout)
	err = o.Module.Launch(lctx, o.Symbol, grid, block, c.Shared, args...)
	cancel()
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%s: %s did not finish within %s (a hung kernel?)", c.Name, o.Symbol, o.LaunchTimeout)
	}
	if err != nil {
		var ve *verify.Error
		if errors.As(err, &ve) && ve.Sticky() {
			// The kernel faulted: report it as this case's failure and
			// recover the context for the next one.
			cr.Error = err.Error()
			ptrs = nil
			if rerr := rt.Reset(); rerr != nil {
				return nil, fmt.Errorf("%s: %v; reset failed: %w", c.Name, err, rerr)
			}
			return cr, nil
		}
		return nil, fmt.Errorf("%s: launch %s: %w", c.Name, o.Symbol, err)
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
		tol := c.Spec.ToleranceFor(v.Arg.Name)
		cmp := verify.CompareParallel(v.DType.V, got, v.DType.Encode(want[v.Arg.Name]), tol)
		or := OutputResult{Name: v.Arg.Name, DType: v.DType.Name, Tolerance: tol, Comparison: cmp}
		if cmp.Worst >= 0 {
			or.Got = verify.Decode(v.DType.V, got, cmp.Worst)
			or.Want = want[v.Arg.Name][cmp.Worst]
		}
		if !cmp.OK() {
			cr.OK = false
		}
		cr.Outputs = append(cr.Outputs, or)
	}
	if o.Time && cr.OK {
		tctx, cancel := context.WithTimeout(ctx, 13*o.LaunchTimeout)
		t, err := o.Module.Time(tctx, 2, 10, o.Symbol, grid, block, c.Shared, args...)
		cancel()
		if err == nil {
			cr.GPUTime = t.Median
		}
	}
	return cr, nil
}
