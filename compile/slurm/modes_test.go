package slurm

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func argOf(argv []string, prefix string) string {
	for _, a := range argv {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return v
		}
	}
	return ""
}

func compileN(t *testing.T, e *Executor, n int) ([]string, []error) {
	t.Helper()
	nodes, errs := make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = e.Compile(context.Background(), worker)
		}()
	}
	wg.Wait()
	return nodes, errs
}

func TestStepsShareOneAllocationAndReleaseIt(t *testing.T) {
	e, r, _ := newTest(Options{Mode: ModeSteps, MaxInFlight: 3, CPUs: 2, Partition: "gpu", Time: "5"}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		switch argv[0] {
		case "salloc":
			return nil, []byte("salloc: Granted job allocation 42\n"), 0, nil
		case "srun":
			return []byte("rocmk-worker node n1\n"), nil, 0, nil
		}
		return nil, nil, 0, nil
	})
	nodes, errs := compileN(t, e, 7)
	for i := range nodes {
		require.NoError(t, errs[i])
		assert.Equal(t, "n1", nodes[i])
	}
	assert.Equal(t, 1, r.count("salloc"), "one allocation for the build")
	assert.Equal(t, 7, r.count("srun"))
	for _, c := range r.calls {
		switch c[0] {
		case "salloc":
			for _, want := range []string{"--no-shell", "--job-name=" + e.Name, "--ntasks=3", "--cpus-per-task=2", "--partition=gpu", "--immediate=60"} {
				assert.Contains(t, c, want)
			}
		case "srun":
			for _, want := range []string{"--jobid=42", "--exact", "--cpus-per-task=2", "--time=5"} {
				assert.Contains(t, c, want)
			}
			assert.Equal(t, worker, c[len(c)-3:])
		}
	}
	assert.Zero(t, r.count("scancel"))
	e.Close()
	e.Close()
	assert.Equal(t, []string{"scancel", "42"}, r.calls[len(r.calls)-1], "Close gives the allocation back, once")
	assert.Equal(t, 1, r.count("scancel"))
}

func TestStepsLostAllocationIsMadeAnew(t *testing.T) {
	var mu sync.Mutex
	allocs := 0
	e, r, _ := newTest(Options{Mode: ModeSteps}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		mu.Lock()
		defer mu.Unlock()
		switch argv[0] {
		case "salloc":
			allocs++
			return nil, []byte("salloc: Granted job allocation " + strconv.Itoa(41+allocs) + "\n"), 0, nil
		case "srun":
			if argOf(argv, "--jobid=") == "42" { // its node died
				return nil, []byte("srun: error: Unable to create step for job 42: Job/step already completing or completed\n"), 1, nil
			}
			return []byte("rocmk-worker node n2\n"), nil, 0, nil
		case "squeue":
			return []byte("NODE_FAIL\n"), nil, 0, nil
		}
		return nil, nil, 0, nil
	})
	node, err := e.Compile(context.Background(), worker)
	require.NoError(t, err)
	assert.Equal(t, "n2", node)
	assert.Equal(t, 2, r.count("salloc"))
	assert.Contains(t, r.calls, []string{"scancel", "42"}, "the lost allocation is cancelled, not leaked")
	assert.Contains(t, r.calls, []string{"squeue", "-h", "-j", "42", "-o", "%T"})
}

func TestStepsSallocRefusedGoesLocalWithOneWarning(t *testing.T) {
	e, r, warnings := newTest(Options{Mode: ModeSteps}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		return nil, []byte("salloc: Pending job allocation 9\nsalloc: error: Unable to allocate resources: Requested node configuration is not available\n"), 1, nil
	})
	_, errs := compileN(t, e, 4)
	for _, err := range errs {
		assert.ErrorIs(t, err, ErrUnavailable)
	}
	assert.Equal(t, 1, r.count("salloc"), "after one refusal nothing more is submitted")
	require.Len(t, *warnings, 1)
	assert.Equal(t, "slurm: salloc: Unable to allocate resources: Requested node configuration is not available; compiling locally", (*warnings)[0])
}

func TestStepsCancelScancelsTheAllocation(t *testing.T) {
	cancelled := make(chan struct{})
	var once sync.Once
	e, r, _ := newTest(Options{Mode: ModeSteps}, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		switch argv[0] {
		case "salloc":
			return nil, []byte("salloc: Granted job allocation 7\n"), 0, nil
		case "srun":
			<-cancelled // srun ends when scancel kills its step
			return nil, []byte("srun: error: n1: task 0: Terminated\n"), 143, nil
		case "scancel":
			once.Do(func() { close(cancelled) })
		}
		return nil, nil, 0, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := e.Compile(ctx, worker); done <- err }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	e.Close()
	var scancels [][]string
	for _, c := range r.calls {
		if c[0] == "scancel" {
			scancels = append(scancels, c)
		}
	}
	require.Len(t, scancels, 2)
	assert.Equal(t, "--name="+e.Name, scancels[0][1], "cancel sweeps every job of the build, the allocation included")
	assert.Equal(t, []string{"scancel", "7"}, scancels[1])
}

// fakeArray plays sbatch and squeue for the array mode: task i of each
// array ends as task(array number, i) says, by writing its files as a
// node would.
func fakeArray(t *testing.T, o Options, task func(n, i int) (out, stderr string, rc int, marker bool), squeueOut string) (*Executor, *fakeRunner) {
	o.Mode, o.Dir = ModeArray, t.TempDir()
	var mu sync.Mutex
	arrays := 0
	e, r, _ := newTest(o, func(ctx context.Context, argv []string) ([]byte, []byte, int, error) {
		switch argv[0] {
		case "sbatch":
			mu.Lock()
			arrays++
			n := arrays
			mu.Unlock()
			dir := filepath.Dir(argOf(argv, "--output="))
			rng := strings.Split(strings.TrimPrefix(argOf(argv, "--array="), "0-"), "%")
			last, err := strconv.Atoi(rng[0])
			require.NoError(t, err)
			for i := 0; i <= last; i++ {
				out, stderr, rc, marker := task(n, i)
				base := filepath.Join(dir, strconv.Itoa(i))
				require.NoError(t, os.WriteFile(base+".out", []byte(out), 0o644))
				require.NoError(t, os.WriteFile(base+".err", []byte(stderr), 0o644))
				if marker {
					require.NoError(t, os.WriteFile(base+".rc", []byte(strconv.Itoa(rc)+"\n"), 0o644))
				}
			}
			return []byte(strconv.Itoa(100+n) + "\n"), nil, 0, nil
		case "squeue":
			return []byte(squeueOut), nil, 0, nil
		}
		return nil, nil, 0, nil
	})
	return e, r
}

func TestArrayGathersTheWaitingJobsIntoOneSubmission(t *testing.T) {
	e, r := fakeArray(t, Options{MaxInFlight: 4, Time: "9"}, func(n, i int) (string, string, int, bool) {
		return "rocmk-worker node n" + strconv.Itoa(i%2) + "\n", "", 0, true
	}, "")
	nodes, errs := compileN(t, e, 10)
	for i := range nodes {
		require.NoError(t, errs[i])
		assert.Regexp(t, `^n[01]$`, nodes[i])
	}
	e.Close()
	require.Equal(t, 1, r.count("sbatch"), "ten jobs, one array")
	sb := r.calls[0]
	for _, want := range []string{"--array=0-9%4", "--no-requeue", "--job-name=" + e.Name, "--time=9", "--parsable"} {
		assert.Contains(t, sb, want)
	}
	entries, err := os.ReadDir(e.Opt.Dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "each array's directory is removed when its tasks end")
}

func TestArrayScriptRunsTheWorkerAndWritesTheMarker(t *testing.T) {
	s := arrayScript("/shared/d", []*arrayTask{{worker: []string{"/bin/rocmk", "__compile-job", "it's"}}})
	assert.Contains(t, s, `0) set -- '/bin/rocmk' '__compile-job' 'it'\''s' ;;`)
	assert.Contains(t, s, `mv '/shared/d'/$SLURM_ARRAY_TASK_ID.rc.tmp '/shared/d'/$SLURM_ARRAY_TASK_ID.rc`)
}

func TestArrayTaskWithoutMarkerIsRetried(t *testing.T) {
	e, r := fakeArray(t, Options{}, func(n, i int) (string, string, int, bool) {
		if n == 1 { // the first array's node died: no marker, gone from the queue
			return "rocmk-worker node n1\n", "", 0, false
		}
		return "rocmk-worker node n2\n", "", 0, true
	}, "")
	node, err := e.Compile(context.Background(), worker)
	require.NoError(t, err)
	assert.Equal(t, "n2", node)
	assert.Equal(t, 2, r.count("sbatch"))
	e.Close()
}

func TestArrayTimeLimitNamesTheNode(t *testing.T) {
	e, _ := fakeArray(t, Options{}, func(n, i int) (string, string, int, bool) {
		return "rocmk-worker node n3\n", "slurmstepd: error: *** JOB 101 ON n3 CANCELLED AT 2026-11-28T10:00:00 DUE TO TIME LIMIT ***\n", 0, false
	}, "")
	_, err := e.Compile(context.Background(), worker)
	var je *JobError
	require.ErrorAs(t, err, &je)
	assert.True(t, je.Timeout)
	assert.Equal(t, "n3", je.Node)
	e.Close()
}

func TestArrayThatNeverRunsGoesLocal(t *testing.T) {
	e, r := fakeArray(t, Options{Wait: 1}, func(n, i int) (string, string, int, bool) {
		return "", "", 0, false
	}, "0 PENDING\n")
	start := time.Now()
	_, err := e.Compile(context.Background(), worker)
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.Less(t, time.Since(start), 10*time.Second)
	e.Close()
	assert.Contains(t, r.calls, []string{"scancel", "101"}, "the stuck array is cancelled")
}
