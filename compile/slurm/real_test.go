//go:build linux

package slurm

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/slurm/slurmtest"
)

// startSlurm starts a one-host Slurm and points this process's Slurm
// tools at it (skipped in the short lane, or where it cannot start).
func startSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm (full lane)")
	}
	conf, _ := slurmtest.Start(t, "../../scripts/slurm-local.sh")
	t.Setenv("SLURM_CONF", conf)
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
