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
	// RefReused is set when the reference was computed for an earlier case
	// with the same RefKey (the same op on the same logical input).
	RefReused bool `json:"reference_reused,omitempty"`
	// Where the time went. GenTime and RefTime are spent on every core
	// while the device side works on earlier cases; RunTime is the device
	// side: CopyTime (uploads, poisoning, downloads), TimeTime (the timing
	// launches) and CompareWait (waiting for the comparison after them).
	GenTime     time.Duration `json:"cpu_gen_ns"`
	RefTime     time.Duration `json:"cpu_ref_ns"`
	RunTime     time.Duration `json:"run_ns"`
	CopyTime    time.Duration `json:"copy_ns"`
	TimeTime    time.Duration `json:"timing_ns"`
	CompareWait time.Duration `json:"compare_wait_ns"`
	// InputWait is how long the device side waited for this case's inputs
	// and reference (the CPU side was behind).
	InputWait time.Duration `json:"input_wait_ns"`
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
	c        *Case
	refs     [][]byte
	reused   bool
	gen, ref time.Duration
}

// lookahead is how many prepared cases (inputs + references) may wait for
// the device side; each holds a few hundred MB at the default size.
const lookahead = 4

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
	sh := newSharing(cases)
	ch := make(chan prepared, lookahead)
	go func() {
		defer close(ch)
		for _, c := range cases {
			t0 := time.Now()
			if c.Gen != nil {
				c.Gen(c)
			}
			t1 := time.Now()
			refs, reused := sh.reference(c)
			select {
			case ch <- prepared{c: c, refs: refs, reused: reused, gen: t1.Sub(t0), ref: time.Since(t1)}:
			case <-ctx.Done():
				return
			}
		}
	}()

	mods := map[string]Module{}
	modErr := map[string]error{}
	pool := &devPool{rt: rt}
	defer func() { pool.drain(false) }()
	outs := &outPool{rt: rt}
	defer func() { outs.drain(false) }() // after the pending comparisons (deferred below) are done
	defer func() {
		for _, m := range mods {
			m.Close()
		}
	}()
	var firstErr string
	var lost error // set when a fault left the device unusable for this process
	// Cases whose outputs are still being compared on the CPU while the
	// device side goes on; they are finished (counted, reported) in order.
	type pendingCase struct {
		res    *CaseResult
		p      prepared
		finish func()
	}
	var pending []pendingCase
	finishOne := func() {
		pc := pending[0]
		pending = pending[1:]
		res, c := pc.res, pc.p.c
		if pc.finish != nil {
			t0 := time.Now()
			pc.finish()
			res.CompareWait = time.Since(t0)
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
		sh.release(c, pc.p.refs, pool)
		rep.Cases = append(rep.Cases, *res)
		if o.Progress != nil {
			o.Progress(len(rep.Cases), len(cases), *res)
		}
	}
	defer func() { // on early returns: let the comparisons end before the buffers go
		for _, pc := range pending {
			if pc.finish != nil {
				pc.finish()
			}
		}
	}()
	idleSince := time.Now()
	for p := range ch {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		c := p.c
		res := &CaseResult{Name: c.Name, Family: c.Family, Kernel: c.Kernel, DType: c.DType.String(), Elems: c.Elems, Note: c.Note,
			RefReused: p.reused, GenTime: p.gen, RefTime: p.ref, InputWait: time.Since(idleSince)}
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
		var finish func()
		if err == nil {
			t0 := time.Now()
			finish, err = runCase(ctx, rt, pool, outs, sh, mod, c, p.refs, o, res)
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
				// Comparisons still running read pinned memory the reset frees.
				for len(pending) > 0 {
					finishOne()
				}
				pool.drain(true)
				outs.drain(false)
				sh.forgetDevice()
				if rerr := rt.Reset(); rerr != nil {
					lost = fmt.Errorf("not run: the GPU context is unusable after %s faulted (%s); rerun the remaining kernels", c.Name, re.Name)
					res.Error += " (the context could not be recreated: later cases are not run)"
				} else {
					res.Error += " (context recreated)" // modules reload themselves
				}
			}
		}
		pending = append(pending, pendingCase{res, p, finish})
		for len(pending) > comparesInFlight {
			finishOne()
		}
		idleSince = time.Now()
	}
	for len(pending) > 0 {
		finishOne()
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

// comparesInFlight is how many cases' comparisons may still run while the
// device side starts the next case (each holds its outputs' host copies).
const comparesInFlight = 2

// runCase runs one case on the device and fills res, except for the
// comparison of its outputs: that runs on the CPU while the GPU times the
// kernel and the device side goes on to the next cases; finish waits for
// it and records it (the host copies of the outputs go back to the pool).
func runCase(ctx context.Context, rt Runtime, pool *devPool, outs *outPool, sh *sharing, mod Module, c *Case, refs [][]byte, o RunOptions, res *CaseResult) (finish func(), err error) {
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
	tCopy := time.Now()
	for i, b := range c.Buffers {
		n := b.Elems() * b.DType.Size()
		sizes[i] = n
		p, err := pool.alloc(n)
		if err != nil {
			return nil, fmt.Errorf("buffer %s (%d bytes): %w", b.Name, n, err)
		}
		ptrs[i] = p
		if b.Out {
			// Poison outputs, so an element the kernel never writes mismatches.
			if err := rt.Memset(p, 0x7f, n); err != nil {
				return nil, err
			}
		} else if err := sh.upload(rt, pool, b, p, n); err != nil {
			return nil, fmt.Errorf("buffer %s: %w", b.Name, err)
		}
	}
	res.CopyTime = time.Since(tCopy)
	args := make([]Arg, len(c.Args))
	for i, a := range c.Args {
		if bi, ok := a.IsBuf(); ok {
			if bi < 0 || bi >= len(ptrs) {
				return nil, fmt.Errorf("argument %d names buffer %d of %d", i, bi, len(ptrs))
			}
			args[i] = Ptr(ptrs[bi])
			continue
		}
		args[i] = a
	}
	lctx, cancel := context.WithTimeout(ctx, o.LaunchTimeout)
	err = mod.Launch(lctx, c.Kernel, c.Grid, c.Block, c.Shared, args...)
	cancel()
	if err != nil {
		return nil, err
	}
	res.Status = StatusPass
	// Copy every output back; compare them on the CPU while the GPU runs
	// the timing launches (which only rewrite device memory) and later cases.
	type outCmp struct {
		b    Buffer
		got  []byte
		want []byte
		tol  Tolerance
	}
	var cmps []outCmp
	var gots [][]byte
	tCopy = time.Now()
	for i, b := range c.Buffers {
		if !b.Out {
			continue
		}
		got := outs.get(b.DType, b.Elems())
		gots = append(gots, got)
		if err := rt.CopyOut(got, ptrs[i]); err != nil {
			outs.put(gots...)
			return nil, fmt.Errorf("buffer %s: %w", b.Name, err)
		}
		if len(cmps) >= len(refs) {
			outs.put(gots...)
			return nil, fmt.Errorf("reference returned %d outputs, case has more", len(refs))
		}
		tol := DefaultTolerance(b.DType)
		if b.Tol != nil {
			tol = *b.Tol
		}
		if o.Tol != nil {
			tol = *o.Tol
		}
		cmps = append(cmps, outCmp{b, got, refs[len(cmps)], tol})
	}
	res.CopyTime += time.Since(tCopy)
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
	finish = func() {
		for _, or := range <-compared {
			res.Outputs = append(res.Outputs, or)
			if !or.Comparison.OK() && res.Status == StatusPass {
				res.Status = StatusMismatch
			}
		}
		outs.put(gots...)
	}
	if o.Repeats > 0 {
		tctx, cancel := context.WithTimeout(ctx, o.LaunchTimeout*time.Duration(1+o.Warmup+o.Repeats))
		t0 := time.Now()
		t, err := mod.Time(tctx, o.Warmup, o.Repeats, c.Kernel, c.Grid, c.Block, c.Shared, args...)
		res.TimeTime = time.Since(t0)
		cancel()
		if err != nil {
			finish() // the comparison reads buffers the caller recycles
			return nil, fmt.Errorf("timing: %w", err)
		}
		res.Time = &t
		if t.Median > 0 && c.Bytes > 0 {
			res.GBps = float64(c.Bytes) / t.Median.Seconds() / 1e9
			if peak := rt.Device().PeakBandwidth(); peak > 0 {
				res.PeakPct = 100 * res.GBps * 1e9 / peak
			}
		}
	}
	failed = false
	return finish, nil
}
