package verify

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RunOptions controls Run.
type RunOptions struct {
	// Load returns the module for a suite source (e.g. "binary.hip"); Run
	// calls it once per module. Required.
	Load func(ctx context.Context, module string) (Module, error)
	// Warmup and Repeats control timing; Repeats 0 skips timing.
	Warmup, Repeats int
	// LaunchTimeout bounds each launch (default 20s): a kernel that hangs
	// gives an error, not a hung rocmk.
	LaunchTimeout time.Duration
	// Tol, when set, replaces every output's tolerance (--rtol/--atol/--max-ulp).
	Tol *Tolerance
	// Progress is called after each case (nil: none).
	Progress func(done, total int, r CaseResult)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Status of a case.
const (
	StatusPass     = "pass"
	StatusMismatch = "mismatch"
	StatusError    = "error"
)

// OutputResult is the comparison of one output buffer.
type OutputResult struct {
	Name       string     `json:"name"`
	DType      string     `json:"dtype"`
	Tolerance  Tolerance  `json:"tolerance"`
	Comparison Comparison `json:"comparison"`
	WorstGot   string     `json:"worst_got"`
	WorstWant  string     `json:"worst_want"`
}

// CaseResult is one case's outcome.
type CaseResult struct {
	Name    string         `json:"name"`
	Family  string         `json:"family"`
	Kernel  string         `json:"kernel"`
	DType   string         `json:"dtype"`
	Elems   int64          `json:"elements"`
	Status  string         `json:"status"`
	Error   string         `json:"error,omitempty"`
	Outputs []OutputResult `json:"outputs,omitempty"`
	Time    *Timing        `json:"gpu_time,omitempty"`
	GBps    float64        `json:"gb_per_s,omitempty"`
	PeakPct float64        `json:"peak_pct,omitempty"`
	Note    string         `json:"note,omitempty"`
	// RefTime is the time spent on this case's inputs and reference (on
	// every core, while the previous case ran); RunTime the time on the
	// device side (buffers, copies, launch, comparison, timing).
	RefTime time.Duration `json:"cpu_ref_ns"`
	RunTime time.Duration `json:"run_ns"`
}

// Summary is the worst comparison over the outputs, for one-line reports.
func (r CaseResult) Summary() string {
	if r.Error != "" {
		return r.Error
	}
	for _, o := range r.Outputs {
		if !o.Comparison.OK() {
			return fmt.Sprintf("%s: %d/%d mismatched; worst [%d] got %s want %s (abs %.3g, rel %.3g; %s)",
				o.Name, o.Comparison.Mismatches, o.Comparison.N, o.Comparison.Worst, o.WorstGot, o.WorstWant,
				o.Comparison.MaxAbs, o.Comparison.MaxRel, o.Tolerance)
		}
	}
	var abs, rel float64
	for _, o := range r.Outputs {
		abs = max(abs, o.Comparison.MaxAbs)
		rel = max(rel, o.Comparison.MaxRel)
	}
	return fmt.Sprintf("max abs %.3g, max rel %.3g", abs, rel)
}

// Report is the outcome of a Run.
type Report struct {
	Device   Device        `json:"device"`
	Cases    []CaseResult  `json:"cases"`
	Passed   int           `json:"passed"`
	Mismatch int           `json:"mismatched"`
	Errors   int           `json:"errors"`
	Wall     time.Duration `json:"wall_ns"`
}

// CaseError reports cases that could not run (launch failure, trap, timeout).
type CaseError struct {
	Failed int
	Total  int
	First  string
}

func (e *CaseError) Error() string {
	return fmt.Sprintf("%d of %d cases failed to run (first: %s)", e.Failed, e.Total, e.First)
}

// preparer is implemented by runtimes that need to see a case before it is
// launched (the fake runtime executes the case's reference).
type preparer interface{ PrepareCase(c *Case) }

type prepared struct {
	c    *Case
	refs [][]byte
	dur  time.Duration
}

// lookahead is how many prepared cases (inputs + references) may wait for
// the device side; each holds a few hundred MB at the default size.
const lookahead = 2

// Run verifies cases on rt. Inputs and references of the next case are
// computed (on every core) while the GPU runs the current one. It returns
// the report and: nil when everything matched, a *CaseError when a case
// failed to run, else a *MismatchError when results were wrong.
func Run(ctx context.Context, rt Runtime, cases []*Case, o RunOptions) (*Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LaunchTimeout == 0 {
		o.LaunchTimeout = 20 * time.Second
	}
	start := o.Now()
	rep := &Report{Device: rt.Device()}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Producer: inputs and references, up to lookahead cases ahead, so a
	// long GPU case (argsort) lets it bank work for the short ones.
	ch := make(chan prepared, lookahead)
	go func() {
		defer close(ch)
		for _, c := range cases {
			t0 := time.Now()
			if c.Gen != nil {
				c.Gen(c)
			}
			var refs [][]byte
			if c.Ref != nil {
				refs = c.Ref(c.Buffers)
			}
			select {
			case ch <- prepared{c: c, refs: refs, dur: time.Since(t0)}:
			case <-ctx.Done():
				return
			}
		}
	}()

	mods := map[string]Module{}
	modErr := map[string]error{}
	pool := &devPool{rt: rt}
	defer func() { pool.drain(false) }()
	defer func() {
		for _, m := range mods {
			m.Close()
		}
	}()
	var firstErr string
	var lost error // set when a fault left the device unusable for this process
	done := 0
	for p := range ch {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		c := p.c
		res := CaseResult{Name: c.Name, Family: c.Family, Kernel: c.Kernel, DType: c.DType.String(), Elems: c.Elems, Note: c.Note, RefTime: p.dur}
		mod, ok := mods[c.Module]
		err := modErr[c.Module]
		if lost != nil {
			err = lost
		} else if !ok && err == nil {
			mod, err = o.Load(ctx, c.Module)
			if err != nil {
				modErr[c.Module] = err
			} else {
				mods[c.Module] = mod
			}
		}
		if err == nil {
			t0 := time.Now()
			err = runCase(ctx, rt, pool, mod, c, p.refs, o, &res)
			res.RunTime = time.Since(t0)
		}
		if err != nil {
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return rep, err
			}
			res.Status, res.Error = StatusError, err.Error()
			var re *Error
			if lost == nil && errors.As(err, &re) && re.Sticky() {
				// A fault poisons the context. Recreate it; where the
				// runtime cannot (CUDA: illegal address and traps are fatal
				// to the process), the remaining cases are not run.
				pool.drain(true)
				if rerr := rt.Reset(); rerr != nil {
					lost = fmt.Errorf("not run: the GPU context is unusable after %s faulted (%s); rerun the remaining kernels", c.Name, re.Name)
					res.Error += " (the context could not be recreated: later cases are not run)"
				} else {
					res.Error += " (context recreated)" // modules reload themselves
				}
			}
		}
		switch res.Status {
		case StatusPass:
			rep.Passed++
		case StatusMismatch:
			rep.Mismatch++
		default:
			rep.Errors++
			if firstErr == "" {
				firstErr = c.Name + ": " + res.Error
			}
		}
		// Release the inputs and references: a suite must not hold every
		// case in memory, and reusing the buffers saves page faults.
		Recycle(p.refs...)
		for i := range c.Buffers {
			if c.Gen != nil {
				Recycle(c.Buffers[i].Data)
				c.Buffers[i].Data = nil
			}
		}
		rep.Cases = append(rep.Cases, res)
		done++
		if o.Progress != nil {
			o.Progress(done, len(cases), res)
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	rep.Wall = o.Now().Sub(start)
	total := len(rep.Cases)
	switch {
	case rep.Errors > 0:
		return rep, &CaseError{Failed: rep.Errors, Total: total, First: firstErr}
	case rep.Mismatch > 0:
		return rep, &MismatchError{Failed: rep.Mismatch, Total: total}
	}
	return rep, nil
}

// runCase runs one case on the device and fills res.
func runCase(ctx context.Context, rt Runtime, pool *devPool, mod Module, c *Case, refs [][]byte, o RunOptions, res *CaseResult) error {
	if p, ok := rt.(preparer); ok {
		p.PrepareCase(c)
	}
	ptrs := make([]DevPtr, len(c.Buffers))
	sizes := make([]int, len(c.Buffers))
	failed := true
	defer func() {
		for i, p := range ptrs {
			if p == 0 {
				continue
			}
			if failed { // after a fault the memory may be gone with the context
				rt.Free(p)
			} else {
				pool.put(sizes[i], p)
			}
		}
	}()
	for i, b := range c.Buffers {
		n := b.Elems() * b.DType.Size()
		sizes[i] = n
		p, err := pool.alloc(n)
		if err != nil {
			return fmt.Errorf("buffer %s (%d bytes): %w", b.Name, n, err)
		}
		ptrs[i] = p
		if b.Out {
			// Poison outputs, so an element the kernel never writes mismatches.
			if err := rt.Memset(p, 0x7f, n); err != nil {
				return err
			}
		} else if err := rt.CopyIn(p, b.Data); err != nil {
			return fmt.Errorf("buffer %s: %w", b.Name, err)
		}
	}
	args := make([]Arg, len(c.Args))
	for i, a := range c.Args {
		if bi, ok := a.IsBuf(); ok {
			if bi < 0 || bi >= len(ptrs) {
				return fmt.Errorf("argument %d names buffer %d of %d", i, bi, len(ptrs))
			}
			args[i] = Ptr(ptrs[bi])
			continue
		}
		args[i] = a
	}
	lctx, cancel := context.WithTimeout(ctx, o.LaunchTimeout)
	err := mod.Launch(lctx, c.Kernel, c.Grid, c.Block, c.Shared, args...)
	cancel()
	if err != nil {
		return err
	}
	res.Status = StatusPass
	// Copy every output back, then compare them on the CPU while the GPU
	// runs the timing launches (which only rewrite device memory).
	type outCmp struct {
		b    Buffer
		got  []byte
		want []byte
		tol  Tolerance
	}
	var cmps []outCmp
	oi := 0
	for i, b := range c.Buffers {
		if !b.Out {
			continue
		}
		got := AllocBuffer(b.DType, b.Elems())
		defer Recycle(got)
		if err := rt.CopyOut(got, ptrs[i]); err != nil {
			return fmt.Errorf("buffer %s: %w", b.Name, err)
		}
		if oi >= len(refs) {
			return fmt.Errorf("reference returned %d outputs, case has more", len(refs))
		}
		tol := DefaultTolerance(b.DType)
		if b.Tol != nil {
			tol = *b.Tol
		}
		if o.Tol != nil {
			tol = *o.Tol
		}
		cmps = append(cmps, outCmp{b, got, refs[oi], tol})
		oi++
	}
	compared := make(chan []OutputResult, 1)
	go func() {
		ors := make([]OutputResult, len(cmps))
		for i, x := range cmps {
			cmp := CompareParallel(x.b.DType, x.got, x.want, x.tol)
			ors[i] = OutputResult{Name: x.b.Name, DType: x.b.DType.String(), Tolerance: x.tol, Comparison: cmp,
				WorstGot: fmtVal(cmp.WorstGot), WorstWant: fmtVal(cmp.WorstWant)}
		}
		compared <- ors
	}()
	// Always wait for the comparison: it reads buffers recycled on return.
	waitCompared := func() {
		for _, or := range <-compared {
			res.Outputs = append(res.Outputs, or)
			if !or.Comparison.OK() {
				res.Status = StatusMismatch
			}
		}
	}
	waited := false
	defer func() {
		if !waited {
			waitCompared()
		}
	}()
	if o.Repeats > 0 {
		tctx, cancel := context.WithTimeout(ctx, o.LaunchTimeout*time.Duration(1+o.Warmup+o.Repeats))
		t, err := mod.Time(tctx, o.Warmup, o.Repeats, c.Kernel, c.Grid, c.Block, c.Shared, args...)
		cancel()
		if err != nil {
			return fmt.Errorf("timing: %w", err)
		}
		res.Time = &t
		if t.Median > 0 && c.Bytes > 0 {
			res.GBps = float64(c.Bytes) / t.Median.Seconds() / 1e9
			if peak := rt.Device().PeakBandwidth(); peak > 0 {
				res.PeakPct = 100 * res.GBps * 1e9 / peak
			}
		}
	}
	waited = true
	waitCompared()
	failed = false
	return nil
}
