package verify

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RunOptions controls Run.
type RunOptions struct {
	// Image returns the image of a suite source (e.g. "binary.hip"); Run
	// calls it once per module, the first time a case needs it, and loads
	// the result through Store. Required.
	Image func(ctx context.Context, module string) (Image, error)
	// Store is the module store to load into (nil: one of Run's own,
	// closed when Run returns).
	Store *Store
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
	// Libraries are modules that are libraries, not images (a case whose
	// Module names one launches library calls: "blas"), opened on first
	// use; an error wrapping ErrSkip skips every case of the module.
	Libraries map[string]func() (Module, error)
	// CopyBytes is the buffer of the copy-bandwidth measurement that goals
	// are measured against (0: 512 MiB); taken when a timed case has a Goal.
	CopyBytes int
}

// Status of a case.
const (
	StatusPass     = "pass"
	StatusMismatch = "mismatch"
	StatusError    = "error"
	// StatusSkipped: the case cannot run here, for a reason that is no
	// failure (its library is not installed); Error says why.
	StatusSkipped = "skipped"
)

// CaseResult is one case's outcome.
type CaseResult struct {
	Name   string `json:"name"`
	Family string `json:"family"`
	Kernel string `json:"kernel"`
	DType  string `json:"dtype"`
	Elems  int64  `json:"elements"`
	// Outcome is what the runner found (status, error, outputs, GPU time,
	// copy, timing and comparison times; its keys are this object's).
	Outcome
	GBps    float64 `json:"gb_per_s,omitempty"`
	PeakPct float64 `json:"peak_pct,omitempty"`
	Note    string  `json:"note,omitempty"`
	// Goal is how the timed case did against its Case.Goal.
	Goal *GoalResult `json:"goal,omitempty"`
	// RefReused is set when the reference was computed for an earlier case
	// with the same RefKey (the same op on the same logical input).
	RefReused bool `json:"reference_reused,omitempty"`
	// Where the time went. GenTime and RefTime are spent on every core
	// while the device side works on earlier cases; RunTime is the device
	// side (the Outcome's CopyTime, TimeTime and CompareWait are its parts).
	GenTime time.Duration `json:"cpu_gen_ns"`
	RefTime time.Duration `json:"cpu_ref_ns"`
	RunTime time.Duration `json:"run_ns"`
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
				o.Name, o.Comparison.Mismatches, o.Comparison.N, o.Comparison.Worst, fmtVal(float64(o.Got)), fmtVal(float64(o.Want)),
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
	Device   Device       `json:"device"`
	Cases    []CaseResult `json:"cases"`
	Passed   int          `json:"passed"`
	Mismatch int          `json:"mismatched"`
	Errors   int          `json:"errors"`
	Skipped  int          `json:"skipped,omitempty"`
	// CopyBandwidth is the device's measured copy bandwidth (bytes/s; see
	// MeasureCopyBandwidth), taken when a timed case has a Goal.
	CopyBandwidth      float64 `json:"copy_bandwidth_bytes_per_s,omitempty"`
	CopyBandwidthError string  `json:"copy_bandwidth_error,omitempty"`
	// BelowGoal counts the timed cases under their goal (no failure).
	BelowGoal int           `json:"below_goal,omitempty"`
	Wall      time.Duration `json:"wall_ns"`
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

type prepared struct {
	c        *Case
	refs     [][]byte
	reused   bool
	gen, ref time.Duration
}

// lookahead is how many prepared cases (inputs + references) may wait for
// the device side; each holds a few hundred MB at the default size.
const lookahead = 4

// comparesInFlight is how many cases' comparisons may still run while the
// device side starts the next case (each holds its outputs' host copies).
const comparesInFlight = 2

// Run verifies cases on rt. Inputs and references of the next case are
// computed (on every core) while the GPU runs the current one. It returns
// the report and: nil when everything matched, a *CaseError when a case
// failed to run, else a *MismatchError when results were wrong.
func Run(ctx context.Context, rt Runtime, cases []*Case, o RunOptions) (*Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	start := o.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sh := newSharing(cases)
	s := &suiteRun{o: o, total: len(cases), rep: &Report{Device: rt.Device()}, sh: sh,
		r:     newRunner(rt, RunnerOptions{Warmup: o.Warmup, Repeats: o.Repeats, LaunchTimeout: o.LaunchTimeout, Tol: o.Tol}, sh),
		store: o.Store}
	if s.store == nil {
		s.store = NewStore(rt)
		defer s.store.Close()
	}
	defer s.close()
	skip := s.openLibraries(cases)
	idleSince := time.Now()
	for p := range produce(ctx, cases, sh, skip) {
		if err := ctx.Err(); err != nil {
			return s.rep, err
		}
		if err := s.runOne(ctx, p, time.Since(idleSince)); err != nil {
			return s.rep, err
		}
		idleSince = time.Now()
	}
	for len(s.pending) > 0 {
		s.finishOne()
	}
	if err := ctx.Err(); err != nil {
		return s.rep, err
	}
	s.goals(ctx, rt, cases)
	rep := s.rep
	rep.Wall = o.Now().Sub(start)
	switch total := len(rep.Cases); {
	case rep.Errors > 0:
		return rep, &CaseError{Failed: rep.Errors, Total: total, First: s.firstErr}
	case rep.Mismatch > 0:
		return rep, &MismatchError{Failed: rep.Mismatch, Total: total}
	}
	return rep, nil
}

// produce computes inputs and references up to lookahead cases ahead, so
// a long GPU case (argsort) lets it bank work for the short ones.
// Cases skip says cannot run get neither (their inputs may be large).
func produce(ctx context.Context, cases []*Case, sh *sharing, skip func(*Case) bool) <-chan prepared {
	ch := make(chan prepared, lookahead)
	go func() {
		defer close(ch)
		for _, c := range cases {
			t0 := time.Now()
			if skip(c) {
				select {
				case ch <- prepared{c: c}:
					continue
				case <-ctx.Done():
					return
				}
			}
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
	return ch
}

// suiteRun is the device side of one Run.
type suiteRun struct {
	o        RunOptions
	total    int
	rep      *Report
	r        *Runner
	sh       *sharing
	store    *Store
	firstErr string
	// Cases whose outputs are still being compared on the CPU while the
	// device side goes on; they are finished (counted, reported) in order.
	pending []pendingCase
	libs    map[string]libEntry // library modules opened, or why not
}

type libEntry struct {
	mod Module
	err error
}

type pendingCase struct {
	res    *CaseResult
	p      prepared
	finish func()
}

// Plan is what a Runner runs for c, whose reference is refs (c.Ref of its
// generated buffers, for one case run alone).
func (c *Case) Plan(refs [][]byte) *Plan {
	return &Plan{Name: c.Name, Buffers: c.Buffers, Want: refs, Bytes: c.Bytes, Ref: c.Ref,
		Launches: []Launch{{Kernel: c.Kernel, Grid: c.Grid, Block: c.Block, Shared: c.Shared, Args: c.Args}}}
}

// runOne starts case p on the device; its comparison may go on after.
func (s *suiteRun) runOne(ctx context.Context, p prepared, inputWait time.Duration) error {
	c := p.c
	res := &CaseResult{Name: c.Name, Family: c.Family, Kernel: c.Kernel, DType: c.DType.String(), Elems: c.Elems, Note: c.Note,
		RefReused: p.reused, GenTime: p.gen, RefTime: p.ref, InputWait: inputWait}
	mod, err := s.module(ctx, c.Module)
	var finish func()
	if err == nil {
		t0 := time.Now()
		finish, err = s.r.start(ctx, mod, c.Plan(p.refs), &res.Outcome)
		res.RunTime = time.Since(t0)
	}
	switch {
	case errors.Is(err, ErrSkip):
		res.Status, res.Error = StatusSkipped, err.Error()
	case err != nil:
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return err
		}
		if re := (*Error)(nil); s.r.lost == nil && errors.As(err, &re) && re.Sticky() {
			// Comparisons still running read pinned memory the reset frees.
			for len(s.pending) > 0 {
				s.finishOne()
			}
		}
		s.r.failed(c.Name, &res.Outcome, err)
	case res.Time != nil && res.Time.Median > 0 && c.Bytes > 0:
		t := res.Time
		res.GBps = float64(c.Bytes) / t.Median.Seconds() / 1e9
		if peak := s.rep.Device.PeakBandwidth(); peak > 0 {
			res.PeakPct = 100 * res.GBps * 1e9 / peak
		}
	}
	s.pending = append(s.pending, pendingCase{res, p, finish})
	for len(s.pending) > comparesInFlight {
		s.finishOne()
	}
	return nil
}

// openLibraries opens the library modules the cases use, before any
// input is generated, and returns which cases are skipped (their library
// is missing: no inputs or references are made for them).
func (s *suiteRun) openLibraries(cases []*Case) func(*Case) bool {
	s.libs = map[string]libEntry{}
	for _, c := range cases {
		if _, done := s.libs[c.Module]; done {
			continue
		}
		if open, ok := s.o.Libraries[c.Module]; ok {
			var e libEntry
			e.mod, e.err = open()
			s.libs[c.Module] = e
		}
	}
	return func(c *Case) bool {
		e, ok := s.libs[c.Module]
		return ok && errors.Is(e.err, ErrSkip)
	}
}

// module loads a suite module once (or says why it could not).
func (s *suiteRun) module(ctx context.Context, name string) (Module, error) {
	if s.r.lost != nil {
		return nil, s.r.lost
	}
	if e, ok := s.libs[name]; ok {
		return e.mod, e.err
	}
	l, err := s.store.Get(ctx, name, func(ctx context.Context) (Image, error) { return s.o.Image(ctx, name) })
	if err != nil {
		return nil, err
	}
	return l.Module, nil
}

// finishOne waits for the oldest pending comparison and reports its case.
func (s *suiteRun) finishOne() {
	pc := s.pending[0]
	s.pending = s.pending[1:]
	res, c, rep := pc.res, pc.p.c, s.rep
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
	case StatusSkipped:
		rep.Skipped++
	default:
		rep.Errors++
		if s.firstErr == "" {
			s.firstErr = c.Name + ": " + res.Error
		}
	}
	// Release the inputs and references: a suite must not hold every case
	// in memory, and reusing the buffers saves page faults.
	s.sh.release(c, pc.p.refs, s.r.pool)
	rep.Cases = append(rep.Cases, *res)
	if s.o.Progress != nil {
		s.o.Progress(len(rep.Cases), s.total, *res)
	}
}

// close ends an early return: the comparisons end before their buffers
// go, then the modules and the runner's buffers.
func (s *suiteRun) close() {
	for _, pc := range s.pending {
		if pc.finish != nil {
			pc.finish()
		}
	}
	for _, e := range s.libs {
		if e.mod != nil {
			e.mod.Close()
		}
	}
	s.r.Close()
}

// goals measures the copy bandwidth when a timed case has a Goal, and
// rates every such case against its goal (Report.BelowGoal counts those
// under it: reported, not failed).
func (s *suiteRun) goals(ctx context.Context, rt Runtime, cases []*Case) {
	goals, bytes := map[string]*Goal{}, map[string]int64{}
	for _, c := range cases {
		bytes[c.Name] = c.Bytes
		if c.Goal != nil {
			goals[c.Name] = c.Goal
		}
	}
	timed := false
	for _, c := range s.rep.Cases {
		timed = timed || (goals[c.Name] != nil && c.Time != nil)
	}
	if !timed || s.r.lost != nil {
		return
	}
	bw, err := MeasureCopyBandwidth(ctx, rt, s.o.CopyBytes, s.o.Warmup, s.o.Repeats)
	if err != nil {
		s.rep.CopyBandwidthError = err.Error()
	}
	s.rep.CopyBandwidth = bw
	applyGoals(s.rep.Cases, goals, bytes, bw)
	for _, c := range s.rep.Cases {
		if c.Goal != nil && c.Goal.Below {
			s.rep.BelowGoal++
		}
	}
}
