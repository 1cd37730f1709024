package compile

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/slurm"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// WorkerCommand is the hidden first argument of rocmk's worker mode: it
// compiles one job on a cluster node (main.go calls RunWorker).
const WorkerCommand = "__compile-job"

// Executors are the values of --executor and rocmk.toml's executor.
var Executors = []string{"local", "slurm"}

// WorkerSpec is one job as the submitter planned it: what to compile, the
// identity and key the node must arrive at, and the session to open
// there (the cache must be on a filesystem the nodes share).
type WorkerSpec struct {
	Src         string   `json:"src"`
	Dir         string   `json:"dir"`
	Target      string   `json:"target"`
	Flags       []string `json:"flags"`
	ToolchainID string   `json:"toolchain_id"`
	Key         string   `json:"key"`
	ROCmPath    string   `json:"rocm_path,omitempty"`
	Layout      string   `json:"layout,omitempty"`
	Clang       string   `json:"clang,omitempty"`
	CacheDir    string   `json:"cache_dir"`
	// Probe only compares the toolchain identity (doctor): no compile.
	Probe bool `json:"probe,omitempty"`
}

// Remote sends the jobs that miss the cache to a cluster.
type Remote struct {
	Exec *slurm.Executor
	Self string     // the rocmk binary the nodes run (same path there)
	Spec WorkerSpec // the session fields of every job
	Warn func(string, ...any)
	// local bounds the compiles that fall back to this machine: the
	// pool is as wide as the cluster, this machine is not.
	local chan struct{}
}

// poolSize is the builder's pool width with a cluster: wide enough to
// keep every node busy, or, for arrays, to gather a whole plan's misses
// into one submission.
func (r *Remote) poolSize(jobs int) int {
	n := r.Exec.Opt.MaxInFlight
	if r.Exec.Opt.Mode == slurm.ModeArray {
		n = 1000
	}
	return max(jobs, n)
}

// localSlot waits for a slot of this machine's compiles; release frees it.
func (r *Remote) localSlot(ctx context.Context) (release func(), ok bool) {
	if r == nil || r.local == nil {
		return func() {}, true
	}
	select {
	case r.local <- struct{}{}:
		return func() { <-r.local }, true
	case <-ctx.Done():
		return nil, false
	}
}

// remote compiles j on the cluster. It returns false when the job is to
// be compiled here (Slurm down or full, killed on every try, or a result
// that does not verify); otherwise res says how the job ended.
func (b *Builder) remote(ctx context.Context, tc toolchain.Toolchain, tcID string, base cache.ActionID, j toolchain.Job, res *Result) bool {
	spec := b.Remote.Spec
	spec.Src, spec.Dir, spec.Target, spec.Flags, spec.ToolchainID, spec.Key = j.Src, j.Dir, j.Target.String(), j.Flags, tcID, base.String()
	arg, err := json.Marshal(spec)
	if err != nil {
		return false
	}
	node, err := b.Remote.Exec.Compile(ctx, []string{b.Remote.Self, WorkerCommand, base64.StdEncoding.EncodeToString(arg)})
	var je *slurm.JobError
	var me *slurm.MismatchError
	switch {
	case ctx.Err() != nil:
		res.Status, res.Err = StatusSkipped, ctx.Err()
		return true
	case errors.As(err, &je):
		b.fail(res, je.Stderr, je)
		return true
	case errors.As(err, &me):
		b.fail(res, []byte(me.Error()), me)
		return true
	case errors.Is(err, slurm.ErrUnavailable):
		return false // warned once by the executor
	case err != nil:
		b.Remote.Warn("%s [%s]: %v; compiling locally", j.Src, j.Target, err)
		return false
	}
	// The node stored the object: it is used only as any cache entry is,
	// after the lookup's checks.
	co, _, _, ok := b.lookup(base, j, readRoots(tc, j, b.environ()))
	if !ok {
		b.Remote.Warn("%s [%s]: node %s stored no object that verifies; compiling locally", j.Src, j.Target, node)
		return false
	}
	res.Status, res.Where = StatusCompiled, "slurm:"+node
	b.finish(res, co)
	return true
}

// RunWorker is the worker mode: it compiles the job arg names (a
// WorkerSpec, base64 JSON) into the shared cache, after checking that this
// node's toolchain identity and the job's key are the planner's. Exit
// codes are slurm's Exit* (0: stored, or already in the cache).
func RunWorker(ctx context.Context, arg string, stdout, stderr io.Writer) int {
	node := os.Getenv("SLURMD_NODENAME")
	if node == "" {
		node, _ = os.Hostname()
	}
	fmt.Fprintf(stdout, "rocmk-worker node %s\n", node)
	code, err := runWorker(ctx, arg)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
	}
	return code
}

func runWorker(ctx context.Context, arg string) (int, error) {
	var spec WorkerSpec
	data, err := base64.StdEncoding.DecodeString(arg)
	if err == nil {
		err = json.Unmarshal(data, &spec)
	}
	if err != nil {
		return slurm.ExitWorker, fmt.Errorf("worker: bad job: %v", err)
	}
	t, err := inspect.ParseTarget(spec.Target)
	if err != nil || spec.CacheDir == "" {
		return slurm.ExitWorker, fmt.Errorf("worker: bad job: target %q, cache %q", spec.Target, spec.CacheDir)
	}
	s, err := OpenSession(SessionOptions{ROCmPath: spec.ROCmPath, Layout: spec.Layout, Clang: spec.Clang, CacheDir: spec.CacheDir,
		Getenv: os.Getenv, Jobs: 1})
	if err != nil {
		return slurm.ExitWorker, err
	}
	defer s.Close(ctx)
	if s.CacheDir() == "" {
		return slurm.ExitWorker, fmt.Errorf("worker: cache %s cannot be opened here", spec.CacheDir)
	}
	b, err := s.Builder(BuildOptions{})
	if err != nil {
		return slurm.ExitMismatch, fmt.Errorf("no toolchain: %v", err)
	}
	tmp, removeTmp, err := safefile.MkdirTemp("rocmk-worker-")
	if err != nil {
		return slurm.ExitWorker, err
	}
	defer removeTmp()
	j := toolchain.Job{Src: spec.Src, Dir: spec.Dir, Target: t, Flags: spec.Flags, Out: filepath.Join(tmp, "out.hsaco")}
	j.DepFile = j.Out + ".d"
	tc, id, err := b.toolchain(ctx, t)
	if err != nil {
		return slurm.ExitMismatch, fmt.Errorf("toolchain for %s: %v", t, err)
	}
	if id != spec.ToolchainID {
		return slurm.ExitMismatch, fmt.Errorf("toolchain identity %s (%s) is not the planner's %s: this node has another ROCm", short(id), tc.Name(), short(spec.ToolchainID))
	}
	if spec.Probe {
		return 0, nil
	}
	base, err := b.baseKey(tc, id, j)
	if err != nil {
		return slurm.ExitWorker, err
	}
	if base.String() != spec.Key {
		return slurm.ExitMismatch, fmt.Errorf("job key %s is not the planner's %s (device libraries, environment or source differ here)", short(base.String()), short(spec.Key))
	}
	res := &Result{Src: spec.Src, Target: t, Out: j.Out}
	b.do(ctx, j, res)
	if res.Status == StatusFailed {
		var ce *CompileError
		if errors.As(res.Err, &ce) && len(ce.Stderr) > 0 {
			return slurm.ExitCompileFailed, errors.New(strings.TrimRight(string(ce.Stderr), "\n"))
		}
		return slurm.ExitCompileFailed, res.Err
	}
	return 0, nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// ExecutorCheck is what doctor shows of the Slurm executor.
type ExecutorCheck struct {
	Executor   string   `json:"executor"` // the project's ("" = local)
	Srun       string   `json:"srun"`     // where srun is
	Partitions []string `json:"partitions,omitempty"`
	Node       string   `json:"node,omitempty"` // the node a probe job ran on
	// ToolchainMatch: the node's toolchain identity is this machine's
	// (nil: not probed).
	ToolchainMatch *bool  `json:"toolchain_match,omitempty"`
	Error          string `json:"error,omitempty"`
}

// CheckExecutor is doctor's look at Slurm, when srun is on PATH or the
// project (./rocmk.toml) asks for it (nil: neither): the partitions, and
// one probe job whose worker compares the node's toolchain identity for
// the first of targets with this machine's, compiling nothing.
func (s *Session) CheckExecutor(ctx context.Context, targets []string) *ExecutorCheck {
	c := &ExecutorCheck{}
	var o slurm.Options
	p, _ := FindProject("") // a bad rocmk.toml is build's to report
	if p != nil {
		c.Executor, o = p.Executor, p.Slurm
	}
	look := s.o.LookPath
	switch {
	case look != nil:
	case s.o.Root != "": // a test's fake machine: no PATH search (as FindOptions)
		look = func(string) (string, error) { return "", errors.New("no PATH search under Root") }
	default:
		look = exec.LookPath
	}
	c.Srun, _ = look("srun")
	if c.Srun == "" && c.Executor != "slurm" {
		return nil
	}
	if c.Srun == "" {
		c.Error = "srun not found: builds with executor slurm compile locally"
		return c
	}
	o.Mode = slurm.ModeJob // one probe: no allocation or array to set up
	e := slurm.New(o, nil, nil)
	var err error
	if c.Partitions, err = e.Check(ctx); err != nil {
		c.Error = err.Error()
		return c
	}
	if len(targets) == 0 {
		c.Error = "no target to probe the nodes' toolchain with (--arch)"
		return c
	}
	t, err := inspect.ParseTarget(targets[0])
	if err != nil {
		c.Error = err.Error()
		return c
	}
	if s.local == nil { // doctor opens the cache only if it exists; the probe stores into it
		c.Error = "no probe: the nodes return results through the cache directory, which does not exist yet: run a build first (or pass --cache-dir)"
		return c
	}
	r, err := s.remote(ctx, Request{Slurm: o})
	if err != nil || r == nil {
		c.Error = fmt.Sprint("no probe: ", err)
		return c
	}
	b, err := s.Builder(BuildOptions{})
	var id string
	if err == nil {
		_, id, err = b.toolchain(ctx, t)
	}
	if err != nil {
		c.Error = err.Error()
		return c
	}
	spec := r.Spec
	spec.Target, spec.ToolchainID, spec.Probe = t.String(), id, true
	arg, _ := json.Marshal(spec)
	c.Node, err = e.Compile(ctx, []string{r.Self, WorkerCommand, base64.StdEncoding.EncodeToString(arg)})
	var me *slurm.MismatchError
	switch {
	case errors.As(err, &me):
		c.ToolchainMatch = new(bool)
		c.Error = me.Error()
	case err != nil:
		c.Error = err.Error()
	default:
		c.ToolchainMatch = new(bool)
		*c.ToolchainMatch = true
	}
	return c
}
