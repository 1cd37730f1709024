//go:build linux

package slurm

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startSlurm starts a one-host Slurm with scripts/slurm-local.sh and
// points this process's Slurm tools at it; it skips, with the reason,
// where Slurm is not installed or cannot start.
func startSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm (full lane)")
	}
	for _, p := range []string{"srun", "salloc", "sbatch", "squeue", "scancel"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not found: install slurm-wlm and munge (make setup)", p)
		}
	}
	dir, err := os.MkdirTemp("", "rocmk-slurm-") // short: munged's socket path has a length limit
	require.NoError(t, err)
	script, err := filepath.Abs("../../scripts/slurm-local.sh")
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("bash", script, "start", dir)
	cmd.Env = append(os.Environ(), "ROCMK_SLURM_PORT="+strconv.Itoa(port))
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() {
		_ = exec.Command("bash", script, "stop", dir).Run()
		os.RemoveAll(dir)
	})
	if err != nil {
		t.Skipf("Slurm could not start here: %v\n%s", err, out)
	}
	t.Setenv("SLURM_CONF", filepath.Join(dir, "slurm.conf"))
}

// TestRealModesOverhead measures what each mode adds to a job: n jobs
// of `sleep 1` through the cluster's slots, against the ideal of
// n/slots seconds. docs/build.md records the numbers.
func TestRealModesOverhead(t *testing.T) {
	startSlurm(t)
	const n = 20
	shared := t.TempDir()
	job := []string{"sh", "-c", "echo rocmk-worker node $SLURMD_NODENAME; sleep 1"}
	for _, mode := range Modes {
		t.Run(mode, func(t *testing.T) {
			e := New(Options{Mode: mode, Dir: shared}, nil, t.Logf)
			_, err := e.Check(context.Background())
			require.NoError(t, err)
			slots := e.Opt.MaxInFlight
			start := time.Now()
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = e.Compile(context.Background(), job)
				}()
			}
			wg.Wait()
			e.Close()
			wall := time.Since(start)
			for _, err := range errs {
				require.NoError(t, err)
			}
			ideal := time.Duration(n/slots) * time.Second
			t.Logf("mode %s: %d jobs of 1 s on %d slots in %v (ideal %v): %.0f ms a job of slot time",
				mode, n, slots, wall.Round(time.Millisecond), ideal, float64((wall-ideal)*time.Duration(slots))/float64(n)/1e6)
			out, err := exec.Command("squeue", "-h").CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Empty(t, strings.TrimSpace(string(out)), "nothing left in the queue, the allocation included")
		})
	}
}
