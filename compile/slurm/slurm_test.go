package slurm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRunner answers each Slurm command with f, and records the calls.
type fakeRunner struct {
	mu    sync.Mutex
	calls [][]string
	f     func(ctx context.Context, argv []string) ([]byte, []byte, int, error)
}

func (r *fakeRunner) Run(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
	r.mu.Lock()
	r.calls = append(r.calls, argv)
	r.mu.Unlock()
	return r.f(ctx, argv)
}

func (r *fakeRunner) count(prog string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c[0] == prog {
			n++
		}
	}
	return n
}

func newTest(o Options, f func(ctx context.Context, argv []string) ([]byte, []byte, int, error)) (*Executor, *fakeRunner, *[]string) {
	if o.Mode == "" {
		o.Mode = ModeJob // slurm_test.go's tests are of one srun job per compile
	}
	r := &fakeRunner{f: f}
	var warnings []string
	var mu sync.Mutex
	e := New(o, r, func(format string, a ...any) {
		mu.Lock()
		warnings = append(warnings, fmt.Sprintf(format, a...))
		mu.Unlock()
	})
	return e, r, &warnings
}

var worker = []string{"/bin/rocmk", "__compile-job", "SPEC"}

func TestSrunArgvCarriesTheOptions(t *testing.T) {
	e, r, _ := newTest(Options{Partition: "gpu", Account: "proj1", Time: "10", CPUs: 4, Wait: 30}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		return []byte("rocmk-worker node n7\n"), nil, 0, nil
	})
	node, err := e.Compile(context.Background(), worker)
	require.NoError(t, err)
	assert.Equal(t, "n7", node)
	argv := r.calls[0]
	assert.Equal(t, "srun", argv[0])
	for _, want := range []string{"--job-name=" + e.Name, "--partition=gpu", "--account=proj1", "--time=10", "--cpus-per-task=4", "--immediate=30", "--ntasks=1"} {
		assert.Contains(t, argv, want)
	}
	assert.Equal(t, worker, argv[len(argv)-3:], "the worker's command line comes last, whole")
	assert.True(t, strings.HasPrefix(e.Name, "rocmk-"))
}

func TestJobFailuresAreNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   int
		stderr string
		check  func(t *testing.T, err error)
	}{
		{"compile error", ExitCompileFailed, "a.hip:3:1: error: unknown type name 'x'", func(t *testing.T, err error) {
			var je *JobError
			require.ErrorAs(t, err, &je)
			assert.False(t, je.Timeout)
			assert.Contains(t, string(je.Stderr), "unknown type name")
		}},
		{"toolchain mismatch", ExitMismatch, "toolchain identity abc is not the planner's def", func(t *testing.T, err error) {
			var me *MismatchError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, "n1", me.Node)
			assert.Contains(t, err.Error(), "node n1: toolchain identity abc")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, r, _ := newTest(Options{}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
				return []byte("rocmk-worker node n1\n"), []byte(tc.stderr), tc.code, nil
			})
			_, err := e.Compile(context.Background(), worker)
			tc.check(t, err)
			assert.Equal(t, 1, r.count("srun"), "a job failure is the job's answer, not a fault")
		})
	}
}

func TestTimeLimitNamesTheNode(t *testing.T) {
	e, _, _ := newTest(Options{Time: "1"}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		return []byte("rocmk-worker node n3\n"), []byte("slurmstepd: error: *** STEP 41.0 ON n3 CANCELLED AT 2026-11-28T03:30:00 DUE TO TIME LIMIT ***\n"), 143, nil
	})
	node, err := e.Compile(context.Background(), worker)
	var je *JobError
	require.ErrorAs(t, err, &je)
	assert.True(t, je.Timeout)
	assert.Equal(t, "n3", node)
	assert.Equal(t, "slurm job timed out on node n3", err.Error())
}

func TestKilledJobIsRetriedThenGivenUp(t *testing.T) {
	var n atomic.Int32
	e, r, _ := newTest(Options{Retries: 2}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		n.Add(1)
		return nil, []byte("srun: error: n2: task 0: Killed\nsrun: error: Node failure on n2"), 137, nil
	})
	_, err := e.Compile(context.Background(), worker)
	require.ErrorIs(t, err, ErrGaveUp)
	assert.Equal(t, 3, r.count("srun"), "one try and two retries")
	assert.Contains(t, err.Error(), "Killed")

	// A retry that succeeds is a success.
	n.Store(0)
	e2, _, _ := newTest(Options{Retries: 2}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		if n.Add(1) == 1 {
			return nil, []byte("srun: error: Node failure on n2"), 1, nil
		}
		return []byte("rocmk-worker node n4\n"), nil, 0, nil
	})
	node, err := e2.Compile(context.Background(), worker)
	require.NoError(t, err)
	assert.Equal(t, "n4", node)
}

func TestDownOrFullWarnsOnceAndStopsSubmitting(t *testing.T) {
	e, r, warnings := newTest(Options{}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		return nil, []byte("srun: error: Unable to allocate resources: Immediate execution impossible, insufficient priority\n"), 1, nil
	})
	for i := 0; i < 5; i++ {
		_, err := e.Compile(context.Background(), worker)
		require.ErrorIs(t, err, ErrUnavailable)
	}
	assert.Equal(t, 1, r.count("srun"), "after the first refusal nothing more is submitted")
	require.Len(t, *warnings, 1)
	assert.Contains(t, (*warnings)[0], "Unable to allocate resources")

	// srun missing altogether: the same.
	e2, _, w2 := newTest(Options{}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		return nil, nil, -1, errors.New(`exec: "srun": executable file not found in $PATH`)
	})
	_, err := e2.Compile(context.Background(), worker)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Len(t, *w2, 1)
}

func TestCheckReadsThePartitions(t *testing.T) {
	e, r, _ := newTest(Options{Partition: "gpu", CPUs: 2}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		return []byte("gpu up 4 3/13/0/16\n"), nil, 0, nil
	})
	parts, err := e.Check(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"gpu up 4 3/13/0/16"}, parts)
	assert.Equal(t, []string{"sinfo", "-h", "-o", "%P %a %D %C", "-p", "gpu"}, r.calls[0])
	assert.Equal(t, 8, e.Opt.MaxInFlight, "16 CPUs, 2 per job: 8 in flight, none queued")

	down, _, warnings := newTest(Options{}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		return nil, []byte("slurm_load_partitions: Unable to contact slurm controller (connect failure)"), 1, nil
	})
	_, err = down.Check(context.Background())
	require.ErrorIs(t, err, ErrUnavailable)
	require.Len(t, *warnings, 1)
	assert.Contains(t, (*warnings)[0], "Unable to contact slurm controller")
}

func TestCancelScancelsEveryJobOnce(t *testing.T) {
	started := make(chan struct{}, 4)
	release := make(chan struct{})
	e, r, _ := newTest(Options{MaxInFlight: 4}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		switch argv[0] {
		case "scancel":
			close(release) // srun ends when its job is cancelled
			return nil, nil, 0, nil
		}
		started <- struct{}{}
		<-release
		return nil, []byte("srun: error: *** STEP CANCELLED ***"), 1, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = e.Compile(ctx, worker) }()
	}
	for range errs {
		<-started
	}
	cancel()
	wg.Wait()
	for _, err := range errs {
		assert.ErrorIs(t, err, context.Canceled)
	}
	assert.Equal(t, 1, r.count("scancel"))
	for _, c := range r.calls {
		if c[0] == "scancel" {
			assert.Contains(t, c, "--name="+e.Name)
		}
	}
	_, err := e.Compile(context.Background(), worker)
	assert.Error(t, err, "nothing is submitted after a cancel")
	assert.Equal(t, 4, r.count("srun"))
}

func TestMaxInFlightBoundsSubmissions(t *testing.T) {
	var cur, peak atomic.Int32
	e, _, _ := newTest(Options{MaxInFlight: 3}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		cur.Add(-1)
		return []byte("rocmk-worker node n\n"), nil, 0, nil
	})
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = e.Compile(context.Background(), worker) }()
	}
	wg.Wait()
	assert.Equal(t, int32(3), peak.Load())
}
