package verify

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Plan is what one case runs on the device: its buffers, its launches in
// order (arguments name buffers with [Buf]) and the expected contents of
// each output. The bundled suite (a [Case]) and specs (verify/spec) both
// build Plans; a [Runner] runs them.
type Plan struct {
	Name string
	// Buffers, inputs and outputs, in the order Buf indexes them. An output
	// with Data starts with it (an in/out buffer); one without is poisoned,
	// so an element the kernels never write mismatches.
	Buffers  []Buffer
	Launches []Launch
	// Want holds the expected bytes of each output buffer, in order.
	Want [][]byte
	// Bytes is what a perfect kernel moves through memory (for GB/s; 0:
	// not reported).
	Bytes int64
	// Ref, when set, computes the outputs from the inputs: the fake runtime
	// runs it as the kernel (without it, the fake writes Want).
	Ref func(bufs []Buffer) [][]byte
}

// Launch is one kernel launch of a Plan.
type Launch struct {
	Label  string // "steps[1] (scale)" for a launch of several; "" for one
	Kernel string // the symbol
	Grid   Dim3
	Block  Dim3
	Shared int
	Args   []Arg
}

// AddrTable fills a buffer with device addresses: buffer Buf's address plus
// each offset, in elements of Buf's dtype (a table of pointers into it).
type AddrTable struct {
	Buf     int
	Offsets []int64
}

// Outcome is what running one Plan found: the one result of the runner,
// which the suite's CaseResult embeds and a spec's CaseResult reports.
type Outcome struct {
	Status  string         `json:"status"`
	Error   string         `json:"error,omitempty"`
	Outputs []OutputResult `json:"outputs,omitempty"`
	// Time is the GPU time of the whole plan (each launch timed alone;
	// with several launches, the sums of their statistics).
	Time *Timing `json:"gpu_time,omitempty"`
	// Steps are the launches' own timings when the plan has several.
	Steps []Timing `json:"-"`
	// CopyTime: uploads, poisoning, downloads; TimeTime: the timing
	// launches; CompareWait: waiting for the comparison after them.
	CopyTime    time.Duration `json:"copy_ns"`
	TimeTime    time.Duration `json:"timing_ns"`
	CompareWait time.Duration `json:"compare_wait_ns"`
}

// OK reports whether the plan ran and every output matched.
func (o *Outcome) OK() bool { return o.Status == StatusPass }

// OutputResult is the comparison of one output buffer.
type OutputResult struct {
	// Case names the case where a report lists outputs of several cases.
	Case       string     `json:"case,omitempty"`
	Name       string     `json:"name"`
	DType      string     `json:"dtype"`
	Tolerance  Tolerance  `json:"tolerance"`
	Comparison Comparison `json:"comparison"`
	Got        JSONFloat  `json:"worst_got"` // NaN and infinities as strings
	Want       JSONFloat  `json:"worst_want"`
}

// Describe is "y[123]: got 1.5 want 1.25 (abs err 0.25, rel err 0.2)".
func (o *OutputResult) Describe() string {
	c := o.Comparison
	if c.Worst < 0 {
		return o.Name + ": empty"
	}
	return fmt.Sprintf("%s[%d]: got %s want %s (abs err %.3g, rel err %.3g)",
		o.Name, c.Worst, fmtVal(float64(o.Got)), fmtVal(float64(o.Want)), c.MaxAbs, c.MaxRel)
}

// RunnerOptions is the one launch and timing policy of a case.
type RunnerOptions struct {
	// Warmup and Repeats time each launch with events (Repeats 0: no
	// timing). Every case that ran is timed, matching or not.
	Warmup, Repeats int
	// LaunchTimeout bounds each launch (default 20s), so a hung kernel is
	// an error rather than a hung rocmk; the timing of a launch gets
	// LaunchTimeout for each of its 1+Warmup+Repeats launches.
	LaunchTimeout time.Duration
	// Tol, when set, replaces every output's tolerance.
	Tol *Tolerance
}

// Runner runs Plans on one runtime: the one place verify launches a
// kernel for a case. It reuses device buffers and page-locked host buffers
// from one plan to the next; Close frees them. Not safe for concurrent use.
type Runner struct {
	rt   Runtime
	o    RunnerOptions
	pool *devPool
	outs *outPool
	sh   *sharing
	lost error // set when a fault left the device unusable for this process
}

// NewRunner returns a Runner for rt.
func NewRunner(rt Runtime, o RunnerOptions) *Runner {
	return newRunner(rt, o, newSharing(nil))
}

func newRunner(rt Runtime, o RunnerOptions, sh *sharing) *Runner {
	if o.LaunchTimeout <= 0 {
		o.LaunchTimeout = 20 * time.Second
	}
	return &Runner{rt: rt, o: o, pool: &devPool{rt: rt}, outs: &outPool{rt: rt}, sh: sh}
}

// Close frees the buffers the Runner kept for reuse.
func (r *Runner) Close() {
	r.pool.drain(false)
	r.outs.drain(false)
}

// Lost is the error that ended the device for this process (a fault the
// context could not be recreated after), or nil.
func (r *Runner) Lost() error { return r.lost }

// Run runs p with mod and compares its outputs. The error says why the
// plan did not run (out.Status is then StatusError); a mismatch is no
// error. After a sticky fault the context is recreated (Lost says when it
// could not be).
func (r *Runner) Run(ctx context.Context, mod Module, p *Plan) (*Outcome, error) {
	out := &Outcome{}
	finish, err := r.start(ctx, mod, p, out)
	if err == nil {
		t0 := time.Now()
		finish()
		out.CompareWait = time.Since(t0)
		return out, nil
	}
	r.failed(p.Name, out, err)
	return out, err
}

// failed records err as p's failure and recovers from a sticky fault. The
// caller has finished every comparison still running (they read host
// memory a reset frees).
func (r *Runner) failed(name string, out *Outcome, err error) {
	out.Status, out.Error = StatusError, err.Error()
	var re *Error
	if r.lost != nil || !errors.As(err, &re) || !re.Sticky() {
		return
	}
	// A fault poisons the context. Recreate it; where the runtime cannot
	// (CUDA: illegal address and traps are fatal to the process), later
	// plans are not run.
	r.pool.drain(true)
	r.outs.drain(false)
	r.sh.forgetDevice()
	if rerr := r.rt.Reset(); rerr != nil {
		r.lost = fmt.Errorf("not run: the GPU context is unusable after %s faulted (%s); rerun the remaining kernels", name, re.Name)
		out.Error += " (the context could not be recreated: later cases are not run)"
		return
	}
	out.Error += " (context recreated)" // modules reload themselves
}

// preparer is implemented by runtimes that need to see a plan before it is
// launched (the fake runtime executes the plan's reference).
type preparer interface{ PreparePlan(p *Plan) }

// start runs p on the device and fills out, except for the comparison of
// its outputs: that runs on the CPU while the GPU times the kernels (and,
// in a suite, the device side goes on to the next cases); finish waits
// for it and records it (the host copies go back to the pool).
func (r *Runner) start(ctx context.Context, mod Module, p *Plan, out *Outcome) (finish func(), err error) {
	if r.lost != nil {
		return nil, r.lost
	}
	if pr, ok := r.rt.(preparer); ok {
		pr.PreparePlan(p)
	}
	ptrs, sizes := make([]DevPtr, len(p.Buffers)), make([]int, len(p.Buffers))
	failed := true
	defer func() { r.release(ptrs, sizes, failed) }()
	t0 := time.Now()
	if err := r.upload(p, ptrs, sizes); err != nil {
		return nil, err
	}
	out.CopyTime = time.Since(t0)
	launches, err := resolve(p.Launches, ptrs)
	if err != nil {
		return nil, err
	}
	for i := range launches {
		if err := r.launch(ctx, mod, launches, i); err != nil {
			return nil, err
		}
	}
	out.Status = StatusPass
	t0 = time.Now()
	finish, err = r.compare(p, ptrs, out)
	out.CopyTime += time.Since(t0)
	if err != nil {
		return nil, err
	}
	if r.o.Repeats > 0 {
		t0 = time.Now()
		err = r.time(ctx, mod, launches, p, out)
		out.TimeTime = time.Since(t0)
		if err != nil {
			finish() // the comparison reads buffers the caller recycles
			return nil, fmt.Errorf("timing: %w", err)
		}
	}
	failed = false
	return finish, nil
}

// release hands p's device buffers back to the pool, or frees them after a
// failure (after a fault the memory may be gone with the context).
func (r *Runner) release(ptrs []DevPtr, sizes []int, failed bool) {
	for i, d := range ptrs {
		switch {
		case d == 0:
		case failed:
			r.rt.Free(d)
		default:
			r.pool.put(sizes[i], d)
		}
	}
}

// upload allocates every buffer and fills it: inputs and in/out buffers
// with their data, address tables with the addresses, other outputs with
// poison (0x7f bytes).
func (r *Runner) upload(p *Plan, ptrs []DevPtr, sizes []int) error {
	for i, b := range p.Buffers {
		n := b.Elems() * b.DType.Size()
		d, err := r.pool.alloc(max(n, 1))
		if err != nil {
			return fmt.Errorf("buffer %s (%d bytes): %w", b.Name, n, err)
		}
		ptrs[i], sizes[i] = d, max(n, 1)
	}
	for i, b := range p.Buffers {
		n := b.Elems() * b.DType.Size()
		var err error
		switch {
		case b.Addrs != nil && (b.Addrs.Buf < 0 || b.Addrs.Buf >= len(ptrs)):
			err = fmt.Errorf("a table of addresses into buffer %d of %d", b.Addrs.Buf, len(ptrs))
		case b.Addrs != nil:
			err = r.rt.CopyIn(ptrs[i], addrTable(p, b.Addrs, ptrs))
		case b.Out && b.Data == nil:
			err = r.rt.Memset(ptrs[i], 0x7f, n)
		case n > 0:
			err = r.sh.upload(r.rt, r.pool, b, ptrs[i], n)
		}
		if err != nil {
			return fmt.Errorf("buffer %s: %w", b.Name, err)
		}
	}
	return nil
}

// addrTable encodes t's addresses (8 bytes each).
func addrTable(p *Plan, t *AddrTable, ptrs []DevPtr) []byte {
	out := make([]byte, 8*len(t.Offsets))
	size := int64(p.Buffers[t.Buf].DType.Size())
	for j, off := range t.Offsets {
		binary.LittleEndian.PutUint64(out[8*j:], uint64(ptrs[t.Buf])+uint64(off*size))
	}
	return out
}

// resolve replaces the Buf arguments of each launch by device pointers.
func resolve(ls []Launch, ptrs []DevPtr) ([]Launch, error) {
	out := make([]Launch, len(ls))
	for li, l := range ls {
		args := make([]Arg, len(l.Args))
		for i, a := range l.Args {
			bi, ok := a.IsBuf()
			switch {
			case !ok:
				args[i] = a
			case bi < 0 || bi >= len(ptrs):
				return nil, fmt.Errorf("argument %d names buffer %d of %d", i, bi, len(ptrs))
			default:
				args[i] = Ptr(ptrs[bi])
			}
		}
		l.Args = args
		out[li] = l
	}
	return out, nil
}

// what names launch i in messages: its symbol, and its step when there are
// several.
func what(ls []Launch, i int) string {
	if len(ls) == 1 || ls[i].Label == "" {
		return ls[i].Kernel
	}
	return fmt.Sprintf("%s (step %d of %d, %s)", ls[i].Label, i+1, len(ls), ls[i].Kernel)
}

// launch runs launch i and waits for it, at most LaunchTimeout.
func (r *Runner) launch(ctx context.Context, mod Module, ls []Launch, i int) error {
	l := ls[i]
	lctx, cancel := context.WithTimeout(ctx, r.o.LaunchTimeout)
	err := mod.Launch(lctx, l.Kernel, l.Grid, l.Block, l.Shared, l.Args...)
	cancel()
	switch {
	case err == nil:
		return nil
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s did not finish within %s (a hung kernel?): %w", what(ls, i), r.o.LaunchTimeout, err)
	}
	return fmt.Errorf("launch %s: %w", what(ls, i), err)
}

// compare copies every output back and starts comparing them with p.Want
// on the CPU; finish waits for the comparison and records it in out.
func (r *Runner) compare(p *Plan, ptrs []DevPtr, out *Outcome) (finish func(), err error) {
	type outCmp struct {
		b         Buffer
		got, want []byte
		tol       Tolerance
	}
	var cmps []outCmp
	var gots [][]byte
	for i, b := range p.Buffers {
		if !b.Out {
			continue
		}
		got := r.outs.get(b.DType, b.Elems())
		gots = append(gots, got)
		if len(got) > 0 {
			if err := r.rt.CopyOut(got, ptrs[i]); err != nil {
				r.outs.put(gots...)
				return nil, fmt.Errorf("buffer %s: %w", b.Name, err)
			}
		}
		if len(cmps) >= len(p.Want) {
			r.outs.put(gots...)
			return nil, fmt.Errorf("reference returned %d outputs, case has more", len(p.Want))
		}
		tol := DefaultTolerance(b.DType)
		if b.Tol != nil {
			tol = *b.Tol
		}
		if r.o.Tol != nil {
			tol = *r.o.Tol
		}
		cmps = append(cmps, outCmp{b, got, p.Want[len(cmps)], tol})
	}
	compared := make(chan []OutputResult, 1)
	go func() {
		ors := make([]OutputResult, len(cmps))
		for i, x := range cmps {
			cmp := CompareParallel(x.b.DType, x.got, x.want, x.tol)
			ors[i] = OutputResult{Name: x.b.Name, DType: x.b.DType.String(), Tolerance: x.tol, Comparison: cmp,
				Got: JSONFloat(cmp.WorstGot), Want: JSONFloat(cmp.WorstWant)}
		}
		compared <- ors
	}()
	return func() {
		for _, or := range <-compared {
			out.Outputs = append(out.Outputs, or)
			if !or.Comparison.OK() && out.Status == StatusPass {
				out.Status = StatusMismatch
			}
		}
		r.outs.put(gots...)
	}, nil
}

// time times each launch alone; the plan's time sums theirs.
func (r *Runner) time(ctx context.Context, mod Module, ls []Launch, p *Plan, out *Outcome) error {
	budget := r.o.LaunchTimeout * time.Duration(1+r.o.Warmup+r.o.Repeats)
	var total Timing
	for i, l := range ls {
		tctx, cancel := context.WithTimeout(ctx, budget)
		t, err := mod.Time(tctx, r.o.Warmup, r.o.Repeats, l.Kernel, l.Grid, l.Block, l.Shared, l.Args...)
		cancel()
		if err != nil {
			if len(ls) > 1 {
				return fmt.Errorf("%s: %w", what(ls, i), err)
			}
			return err
		}
		total.Repeats = t.Repeats
		total.Median += t.Median
		total.Min += t.Min
		total.Mean += t.Mean
		if len(ls) > 1 {
			out.Steps = append(out.Steps, t)
		}
	}
	out.Time = &total
	return nil
}
