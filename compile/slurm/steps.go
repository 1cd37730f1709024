package slurm

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// allocation is ModeSteps' one Slurm job: salloc --no-shell holds the
// CPUs of MaxInFlight jobs, and every compile is an srun step inside it,
// so a job pays for a step, not for a scheduling pass and an allocation.
type allocation struct {
	mu sync.Mutex
	id string // "" before the first job, and after it was lost
}

var (
	grantedRE = regexp.MustCompile(`Granted job allocation (\d+)`)
	gone      = regexp.MustCompile(`already completing or completed|Invalid job id`)
)

// allocArgv is the salloc command line of the build's allocation.
func (e *Executor) allocArgv() []string {
	o := e.Opt
	argv := []string{"salloc", "--no-shell", "--job-name=" + e.Name, "--ntasks=" + strconv.Itoa(cap(e.slots)),
		"--cpus-per-task=" + strconv.Itoa(o.CPUs), "--immediate=" + strconv.Itoa(o.Wait)}
	return append(argv, e.common()...)
}

// common is the partition and account options of every submission.
func (e *Executor) common() []string {
	var argv []string
	if e.Opt.Partition != "" {
		argv = append(argv, "--partition="+e.Opt.Partition)
	}
	if e.Opt.Account != "" {
		argv = append(argv, "--account="+e.Opt.Account)
	}
	return argv
}

// stepArgv is the srun command line of one job as a step of allocation id.
func (e *Executor) stepArgv(id string, worker []string) []string {
	argv := []string{"srun", "--jobid=" + id, "--ntasks=1", "--nodes=1", "--cpus-per-task=" + strconv.Itoa(e.Opt.CPUs),
		"--exact", "--kill-on-bad-exit=1", "--quiet"}
	if e.Opt.Time != "" {
		argv = append(argv, "--time="+e.Opt.Time)
	}
	return append(argv, worker...)
}

// allocate returns the allocation's job id, making it on first use.
// Errors: the executor is down (salloc could not get resources within
// Wait seconds, or Slurm does not answer).
func (e *Executor) allocate(ctx context.Context) (string, error) {
	e.alloc.mu.Lock()
	defer e.alloc.mu.Unlock()
	if err := e.Down(); err != nil {
		return "", err
	}
	if e.alloc.id != "" {
		return e.alloc.id, nil
	}
	_, stderr, code, err := e.Run.Run(ctx, e.allocArgv())
	if err != nil {
		return "", err // salloc missing: classify takes the executor down
	}
	m := grantedRE.FindSubmatch(stderr)
	if code != 0 || m == nil {
		msg := firstLine(stderr)
		if i := bytes.Index(stderr, []byte("error: ")); i >= 0 { // past "Pending job allocation" lines
			msg = firstLine(stderr[i+len("error: "):])
		}
		e.setDown(errors.New("salloc: " + msg))
		return "", e.Down()
	}
	e.alloc.id = string(m[1])
	if e.Down() != nil { // cancelled while salloc ran: CancelAll's sweep may have missed it
		e.scancel(e.alloc.id)
	}
	return e.alloc.id, nil
}

// lost forgets the allocation when Slurm no longer runs it (its node
// died, or it hit its time limit), so that the next try makes another.
func (e *Executor) lost(ctx context.Context) {
	if e.Opt.Mode != ModeSteps {
		return
	}
	e.alloc.mu.Lock()
	defer e.alloc.mu.Unlock()
	if e.alloc.id == "" {
		return
	}
	out, _, code, err := e.Run.Run(ctx, []string{"squeue", "-h", "-j", e.alloc.id, "-o", "%T"})
	if err == nil && code == 0 && strings.TrimSpace(string(out)) == "RUNNING" {
		return
	}
	e.scancel(e.alloc.id)
	e.alloc.id = ""
}

// release gives the allocation back.
func (e *Executor) release() {
	e.alloc.mu.Lock()
	defer e.alloc.mu.Unlock()
	if e.alloc.id != "" {
		e.scancel(e.alloc.id)
		e.alloc.id = ""
	}
}

// scancel cancels one Slurm job (an allocation, an array), warning when
// it cannot.
func (e *Executor) scancel(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), scancelTimeout)
	defer cancel()
	_, stderr, code, err := e.Run.Run(ctx, []string{"scancel", id})
	if err == nil && code != 0 && gone.Match(stderr) {
		return // ended already (scancel --name on Ctrl-C, or its node died)
	}
	if err != nil || code != 0 {
		e.Warn("slurm: scancel %s: exit %d %v %s", id, code, err, firstLine(stderr))
	}
}
