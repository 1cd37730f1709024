// Package slurm runs rocmk's compile jobs on a Slurm cluster, each running
// rocmk's worker mode on a node, in one of three modes (Modes): srun steps
// inside one allocation, one srun job per compile, or sbatch array jobs;
// with bounded retries, a cap on jobs in flight, and scancel of every job
// on cancel. The results come back through the cache, not through this
// package.
package slurm

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocmk/rocmk/compile/runner"
)

// Worker exit codes: what a job's srun returns when the worker ran.
const (
	ExitCompileFailed = 65 // the compiler failed: a job failure
	ExitMismatch      = 66 // the node's toolchain is not the planner's
	ExitWorker        = 67 // the worker could not run (a node problem: retried)
)

// Options are the [slurm] table of rocmk.toml.
type Options struct {
	Partition string `toml:"partition"`
	Account   string `toml:"account"`
	Time      string `toml:"time"`         // srun --time (minutes, or [days-]hh:mm:ss)
	CPUs      int    `toml:"cpus_per_job"` // srun --cpus-per-task (default 1)
	// MaxInFlight caps the jobs submitted at once (default: the
	// partition's CPUs / CPUs per job, as Check reads them; 8 before).
	// More than the cluster runs at once wait in the queue, and a queued
	// job starts ~1.3 s after a slot frees (docs/build.md, measured).
	MaxInFlight int `toml:"max_in_flight"`
	Retries     int `toml:"retries"` // re-submissions of a killed job (default 2)
	// Wait is how long a job may wait for resources before Slurm counts as
	// full (srun --immediate, seconds; default 60).
	Wait int `toml:"wait_seconds"`
	// Mode is how jobs are submitted (Modes; default DefaultMode).
	Mode string `toml:"mode"`
	// Dir is a directory on the filesystem the nodes share, for the
	// array mode's scripts, logs and exit markers (the session sets it
	// under the cache directory).
	Dir string `toml:"-"`
}

// The submission modes (docs/build.md has the measurements behind the
// default).
const (
	ModeSteps = "steps" // one allocation (salloc), an srun step per job
	ModeJob   = "job"   // one srun job (own allocation) per job
	ModeArray = "array" // sbatch array jobs of the jobs waiting at once
)

// Modes are the values of --slurm-mode and [slurm] mode.
var Modes = []string{ModeSteps, ModeJob, ModeArray}

// DefaultMode is the mode of an empty Options.Mode.
const DefaultMode = ModeSteps

// Runner runs one Slurm command (srun, scancel, sinfo) and returns its
// output and exit code; ExecRunner is the real one, tests fake it. A
// cancelled ctx must not kill srun: Executor cancels its jobs with scancel
// and srun then exits.
type Runner interface {
	Run(ctx context.Context, argv []string) (stdout, stderr []byte, code int, err error)
}

// ExecRunner runs the commands through runner.ExecRunner (the one place
// rocmk starts programs, each in its own process group: a terminal's
// Ctrl-C reaches rocmk, which scancels, not srun). A cancelled ctx kills a
// program only when it has not exited 30 s later. err: it could not start.
type ExecRunner struct{}

// Run runs argv to its end (see Runner).
func (ExecRunner) Run(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(30*time.Second, cancel) })
	defer stop()
	out, err := runner.ExecRunner{}.Run(run, runner.Cmd{Argv: argv})
	code := 0
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		code, err = ec.ExitCode(), nil
	}
	return out.Stdout, out.Stderr, code, err
}

// ErrUnavailable says Slurm is down or full: the build goes on locally.
var ErrUnavailable = errors.New("slurm unavailable")

// ErrGaveUp says a job was killed on every try: compile it locally.
var ErrGaveUp = errors.New("slurm job killed on every try")

// MismatchError is a node whose toolchain is not the planner's.
type MismatchError struct{ Node, Msg string }

func (e *MismatchError) Error() string { return fmt.Sprintf("node %s: %s", e.Node, e.Msg) }

// JobError is a job that ran and failed: the compiler's error, or a step
// cancelled at its time limit (Timeout).
type JobError struct {
	Node    string
	Timeout bool
	Stderr  []byte
}

func (e *JobError) Error() string {
	if e.Timeout {
		return fmt.Sprintf("slurm job timed out on node %s", e.Node)
	}
	return fmt.Sprintf("compile failed on node %s", e.Node)
}

// Executor submits jobs. Its methods are safe for concurrent use.
type Executor struct {
	Opt  Options
	Run  Runner
	Name string // job name of this build's jobs (New: rocmk-<pid>-<random>)
	Warn func(format string, a ...any)

	slots  chan struct{}
	alloc  allocation // ModeSteps
	array  batcher    // ModeArray
	mu     sync.Mutex
	down   error // set once: every later job goes local
	warned bool
	cancel sync.Once
}

// New makes an executor with defaults filled in.
func New(o Options, run Runner, warn func(string, ...any)) *Executor {
	if o.CPUs <= 0 {
		o.CPUs = 1
	}
	if o.Retries < 0 {
		o.Retries = 0
	} else if o.Retries == 0 {
		o.Retries = 2
	}
	if o.Wait <= 0 {
		o.Wait = 60
	}
	if o.Mode == "" {
		o.Mode = DefaultMode
	}
	if run == nil {
		run = ExecRunner{}
	}
	if warn == nil {
		warn = func(string, ...any) {}
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return &Executor{Opt: o, Run: run, Warn: warn, Name: fmt.Sprintf("rocmk-%d-%s", os.Getpid(), hex.EncodeToString(r[:])),
		slots: make(chan struct{}, cmp.Or(o.MaxInFlight, 8))}
}

// Check asks the controller for the partitions (sinfo): an error makes
// the executor unavailable, with its one warning.
func (e *Executor) Check(ctx context.Context) ([]string, error) {
	argv := []string{"sinfo", "-h", "-o", "%P %a %D %C"}
	if e.Opt.Partition != "" {
		argv = append(argv, "-p", e.Opt.Partition)
	}
	if _, ok := e.Run.(ExecRunner); ok {
		if err := confMissing(); err != nil {
			e.setDown(err)
			return nil, e.Down()
		}
	}
	out, stderr, code, err := e.Run.Run(ctx, argv)
	if err == nil && code != 0 {
		err = fmt.Errorf("sinfo: exit %d: %s", code, firstLine(stderr))
	}
	if err == nil && len(bytes.TrimSpace(out)) == 0 {
		err = fmt.Errorf("sinfo: no partition %q", e.Opt.Partition)
	}
	if err != nil {
		e.setDown(err)
		return nil, e.Down()
	}
	parts := strings.Split(strings.TrimSpace(string(out)), "\n")
	if e.Opt.MaxInFlight <= 0 {
		e.Opt.MaxInFlight = 8
		if cpus := totalCPUs(parts); cpus > 0 {
			e.Opt.MaxInFlight = max(1, cpus/e.Opt.CPUs)
		}
		e.slots = make(chan struct{}, e.Opt.MaxInFlight)
	}
	return parts, nil
}

// totalCPUs sums the last field of sinfo's "%C" (allocated/idle/other/
// total) over the partitions listed.
func totalCPUs(parts []string) int {
	n := 0
	for _, p := range parts {
		f := strings.Fields(p)
		if len(f) == 0 {
			continue
		}
		c := strings.Split(f[len(f)-1], "/")
		if t, err := strconv.Atoi(c[len(c)-1]); err == nil && len(c) == 4 {
			n += t
		}
	}
	return n
}

// confMissing says why the Slurm tools have no configuration: without
// one, sinfo retries for 60 s before it fails.
func confMissing() error {
	conf := os.Getenv("SLURM_CONF")
	if conf == "" {
		conf = "/etc/slurm/slurm.conf"
	}
	if _, err := os.Stat(conf); err != nil {
		return fmt.Errorf("no Slurm configuration (%v; set SLURM_CONF)", err)
	}
	return nil
}

// Down is why the executor stopped submitting (nil: it has not).
func (e *Executor) Down() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.down
}

func (e *Executor) setDown(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down == nil {
		e.down = fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if !e.warned {
		e.warned = true
		e.Warn("slurm: %v; compiling locally", err)
	}
}

// srunArgv is the srun command line of one job running worker.
func (e *Executor) srunArgv(worker []string) []string {
	o := e.Opt
	argv := []string{"srun", "--job-name=" + e.Name, "--ntasks=1", "--nodes=1", "--cpus-per-task=" + strconv.Itoa(o.CPUs),
		"--immediate=" + strconv.Itoa(o.Wait), "--kill-on-bad-exit=1", "--quiet"}
	argv = append(argv, e.common()...)
	if o.Time != "" {
		argv = append(argv, "--time="+o.Time)
	}
	return append(argv, worker...)
}

// Compile runs worker (rocmk's worker command line) as one Slurm job and
// returns the node it ran on. Errors: ErrUnavailable (Slurm down or full:
// go local), ErrGaveUp (killed on every try: go local), *MismatchError,
// *JobError, or ctx's error after a cancel (every job of the build is
// scancel'ed).
func (e *Executor) Compile(ctx context.Context, worker []string) (string, error) {
	if e.Opt.Mode != ModeArray { // an array throttles its own tasks
		select {
		case e.slots <- struct{}{}:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		defer func() { <-e.slots }()
	}
	stop := context.AfterFunc(ctx, e.CancelAll)
	defer stop()
	var last error
	for try := 0; try <= e.Opt.Retries; try++ {
		if err := e.Down(); err != nil {
			return "", err
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		out, stderr, code, err := e.submit(ctx, worker)
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		node, err := e.classify(out, stderr, code, err)
		if err == nil || !errors.Is(err, errRetry) {
			return node, err
		}
		last = err
		e.lost(ctx) // a dead allocation is made anew on the next try
	}
	return "", fmt.Errorf("%w (%d tries, last: %v)", ErrGaveUp, e.Opt.Retries+1, last)
}

var errRetry = errors.New("retry")

// submit runs worker once, in the executor's mode.
func (e *Executor) submit(ctx context.Context, worker []string) ([]byte, []byte, int, error) {
	switch e.Opt.Mode {
	case ModeSteps:
		id, err := e.allocate(ctx)
		if err != nil {
			return nil, nil, 0, err
		}
		return e.Run.Run(ctx, e.stepArgv(id, worker))
	case ModeArray:
		return e.arrayRun(ctx, worker)
	}
	return e.Run.Run(ctx, e.srunArgv(worker))
}

// Close ends the build's use of Slurm: it releases the allocation
// (ModeSteps) and stops the array poller; safe to call more than once.
func (e *Executor) Close() {
	e.release()
	e.array.stop()
}

var (
	toolPrefixRE  = regexp.MustCompile(`^(srun|salloc|sbatch): (error: )?`)
	timeLimitRE   = regexp.MustCompile(`ON (\S+) CANCELLED AT \S+ DUE TO TIME LIMIT`)
	nodeRE        = regexp.MustCompile(`(?m)^rocmk-worker node (\S+)$`)
	unavailableRE = regexp.MustCompile(`Unable to allocate resources|Unable to contact slurm controller|Immediate execution impossible|` +
		`Invalid partition|Invalid account|Job violates accounting|Requested node configuration is not available|` +
		`Socket timed out|Connection refused|Zero Bytes were transmitted|cannot be satisfied`)
)

// classify turns one srun's end into the node and an error.
func (e *Executor) classify(out, stderr []byte, code int, err error) (string, error) {
	if err != nil { // srun itself is missing
		e.setDown(err)
		return "", e.Down()
	}
	node := ""
	if m := nodeRE.FindSubmatch(out); m != nil {
		node = string(m[1])
	}
	if m := timeLimitRE.FindSubmatch(stderr); m != nil {
		return string(m[1]), &JobError{Node: string(m[1]), Timeout: true, Stderr: stderr}
	}
	switch {
	case code == 0 && node != "":
		return node, nil
	case code == ExitCompileFailed && node != "":
		return node, &JobError{Node: node, Stderr: stderr}
	case code == ExitMismatch && node != "":
		return node, &MismatchError{Node: node, Msg: firstLine(stderr)}
	case node == "" && unavailableRE.Match(stderr):
		e.setDown(errors.New(firstLine(stderr)))
		return "", e.Down()
	}
	// Killed, node failure, a worker that could not run: another try.
	return node, fmt.Errorf("%w: exit %d on node %q: %s", errRetry, code, node, firstLine(stderr))
}

// CancelAll cancels every job of this build (scancel --name), once; no
// job starts after it.
func (e *Executor) CancelAll() {
	e.cancel.Do(func() {
		e.mu.Lock()
		if e.down == nil {
			e.down = errors.New("slurm: cancelled")
		}
		e.mu.Unlock()
		e.Sweep()
	})
}

// Sweep cancels whatever job of this build is still queued or running
// (scancel --name): after a cancelled build's last srun has returned, it
// catches a job submitted while CancelAll ran.
func (e *Executor) Sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), scancelTimeout)
	defer cancel()
	_, stderr, code, err := e.Run.Run(ctx, []string{"scancel", "--name=" + e.Name, "--user=" + currentUser()})
	if err != nil || code != 0 {
		e.Warn("slurm: scancel --name=%s: exit %d %v %s", e.Name, code, err, firstLine(stderr))
	}
}

const scancelTimeout = 30 * time.Second

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if os.Getuid() == 0 {
		return "root"
	}
	return strconv.Itoa(os.Getuid())
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	for _, l := range strings.Split(s, "\n") {
		l = toolPrefixRE.ReplaceAllString(strings.TrimSpace(l), "")
		if l != "" {
			return l
		}
	}
	return s
}
