package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ModeArray gathers the jobs that wait at once into one sbatch array job
// (one task per job, MaxInFlight running at once through the array's %
// throttle): a large plan costs one submission instead of one per job.
// Each task writes its worker's stdout and stderr, then an exit marker,
// into a directory of Options.Dir; a poller reads the markers, and asks
// squeue which tasks still live, to tell a task that died from one that
// has yet to run.
const (
	arrayLinger   = 200 * time.Millisecond // gathers the jobs that arrive together
	arrayMaxTasks = 1000                   // under slurm.conf's default MaxArraySize (1001)
	arrayPoll     = 300 * time.Millisecond
)

// batcher gathers ModeArray's jobs into arrays.
type batcher struct {
	mu      sync.Mutex
	queue   []*arrayTask
	timer   *time.Timer
	batches int
	wg      sync.WaitGroup
}

type arrayTask struct {
	worker []string
	done   chan taskEnd // buffered: the poller never blocks
}

type taskEnd struct {
	out, stderr []byte
	code        int
	err         error
}

// arrayRun runs worker as a task of the next array, like one srun.
func (e *Executor) arrayRun(ctx context.Context, worker []string) ([]byte, []byte, int, error) {
	if e.Opt.Dir == "" {
		return nil, nil, 0, errors.New("array mode: no shared directory for the tasks' logs")
	}
	t := &arrayTask{worker: worker, done: make(chan taskEnd, 1)}
	b := &e.array
	b.mu.Lock()
	b.queue = append(b.queue, t)
	switch {
	case len(b.queue) >= arrayMaxTasks:
		e.flushLocked()
	case b.timer == nil:
		b.timer = time.AfterFunc(arrayLinger, e.flush)
	default:
		b.timer.Reset(arrayLinger)
	}
	b.mu.Unlock()
	select {
	case r := <-t.done:
		return r.out, r.stderr, r.code, r.err
	case <-ctx.Done():
		return nil, nil, 0, ctx.Err()
	}
}

func (e *Executor) flush() {
	e.array.mu.Lock()
	defer e.array.mu.Unlock()
	e.flushLocked()
}

// flushLocked submits the queued jobs as one array (e.array.mu held).
func (e *Executor) flushLocked() {
	b := &e.array
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.queue) == 0 {
		return
	}
	tasks := b.queue
	b.queue = nil
	b.batches++
	dir := filepath.Join(e.Opt.Dir, fmt.Sprintf("%s-%d", e.Name, b.batches))
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		e.runArray(dir, tasks)
	}()
}

// stop waits for the pollers (Close): each ends when its tasks have.
func (b *batcher) stop() { b.wg.Wait() }

// arrayScript is the batch script of an array: task i runs tasks[i]'s
// worker, then writes its exit code into dir/i.rc (atomically: a marker
// is whole or absent).
func arrayScript(dir string, tasks []*arrayTask) string {
	var s strings.Builder
	s.WriteString("#!/bin/sh\ncase \"$SLURM_ARRAY_TASK_ID\" in\n")
	for i, t := range tasks {
		fmt.Fprintf(&s, "%d) set --", i)
		for _, a := range t.worker {
			s.WriteString(" " + shellQuote(a))
		}
		s.WriteString(" ;;\n")
	}
	d := shellQuote(dir)
	s.WriteString("*) exit 2 ;;\nesac\n\"$@\"\nrc=$?\n")
	fmt.Fprintf(&s, "echo $rc >%s/$SLURM_ARRAY_TASK_ID.rc.tmp && mv %s/$SLURM_ARRAY_TASK_ID.rc.tmp %s/$SLURM_ARRAY_TASK_ID.rc\nexit $rc\n", d, d, d)
	return s.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// sbatchArgv is the sbatch command line of an array of n tasks.
func (e *Executor) sbatchArgv(dir string, n int) []string {
	o := e.Opt
	argv := []string{"sbatch", "--parsable", "--no-requeue", "--job-name=" + e.Name,
		fmt.Sprintf("--array=0-%d%%%d", n-1, cap(e.slots)), "--ntasks=1", "--nodes=1", "--cpus-per-task=" + strconv.Itoa(o.CPUs),
		"--output=" + filepath.Join(dir, "%a.out"), "--error=" + filepath.Join(dir, "%a.err")}
	argv = append(argv, e.common()...)
	if o.Time != "" {
		argv = append(argv, "--time="+o.Time)
	}
	return append(argv, filepath.Join(dir, "job.sh"))
}

// runArray submits tasks as one array and delivers each task's end.
func (e *Executor) runArray(dir string, tasks []*arrayTask) {
	end := func(i int, r taskEnd) {
		if tasks[i] != nil {
			tasks[i].done <- r
			tasks[i] = nil
		}
	}
	endAll := func(r taskEnd) {
		for i := range tasks {
			end(i, r)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		endAll(taskEnd{err: err})
		return
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "job.sh"), []byte(arrayScript(dir, tasks)), 0o755); err != nil {
		endAll(taskEnd{err: err})
		return
	}
	if err := e.Down(); err != nil {
		endAll(taskEnd{err: err})
		return
	}
	out, stderr, code, err := e.Run.Run(context.Background(), e.sbatchArgv(dir, len(tasks)))
	if err != nil || code != 0 {
		endAll(taskEnd{out: out, stderr: stderr, code: code, err: err}) // classify says down or retry
		return
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	e.pollArray(id, dir, tasks, end)
}

// pollArray waits for array id's tasks: a marker ends a task; a task
// that left the queue without one died (its node failed, or it was
// killed: its stderr says whether at its time limit). When no task has
// run or ended for Wait seconds, Slurm counts as full: the array is
// cancelled and the executor goes down (the rest compiles locally).
func (e *Executor) pollArray(id, dir string, tasks []*arrayTask, end func(int, taskEnd)) {
	progress := time.Now()
	for {
		left := 0
		for i := range tasks {
			if tasks[i] != nil && e.marker(dir, i, end) {
				progress = time.Now()
			}
			if tasks[i] != nil {
				left++
			}
		}
		if left == 0 {
			return
		}
		if err := e.Down(); err != nil {
			e.scancel(id)
			for i := range tasks {
				end(i, taskEnd{err: err})
			}
			return
		}
		if live, running, ok := e.arrayLive(id); ok {
			if running {
				progress = time.Now()
			}
			for i := range tasks {
				if tasks[i] != nil && !live[i] && !e.marker(dir, i, end) {
					errb, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+".err"))
					outb, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+".out"))
					end(i, taskEnd{out: outb, stderr: append(errb, "\narray task ended without an exit marker"...), code: -1})
				}
			}
		}
		if time.Since(progress) > time.Duration(e.Opt.Wait)*time.Second {
			e.setDown(fmt.Errorf("array job %s: no task ran for %d s", id, e.Opt.Wait))
			continue // the next pass cancels it
		}
		time.Sleep(arrayPoll)
	}
}

// marker ends task i when its exit marker is there.
func (e *Executor) marker(dir string, i int, end func(int, taskEnd)) bool {
	base := filepath.Join(dir, strconv.Itoa(i))
	rc, err := os.ReadFile(base + ".rc")
	if err != nil {
		return false
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(rc)))
	if err != nil {
		code = ExitWorker
	}
	out, _ := os.ReadFile(base + ".out")
	stderr, _ := os.ReadFile(base + ".err")
	end(i, taskEnd{out: out, stderr: stderr, code: code})
	return true
}

// arrayLive asks squeue which tasks of array id are queued or running.
// ok false: squeue did not answer (the controller is busy or restarting).
func (e *Executor) arrayLive(id string) (live map[int]bool, running, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, stderr, code, err := e.Run.Run(ctx, []string{"squeue", "-h", "-r", "-j", id, "-o", "%K %T"})
	live = map[int]bool{}
	switch {
	case err == nil && code != 0 && strings.Contains(string(stderr), "Invalid job id"):
		return live, false, true // the whole array has left the queue
	case err != nil || code != 0:
		return nil, false, false
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		if i, err := strconv.Atoi(f[0]); err == nil {
			live[i] = true
			running = running || f[1] == "RUNNING" || f[1] == "COMPLETING"
		}
	}
	return live, running, true
}
