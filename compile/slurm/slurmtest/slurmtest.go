// Package slurmtest starts the one-host Slurm of scripts/slurm-local.sh
// for the full-lane tests of the Slurm executor.
package slurmtest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Start starts a one-host Slurm with script (scripts/slurm-local.sh) in
// a fresh directory on a free port, stopped at the end of t, and returns
// its SLURM_CONF and directory. It skips t, with the reason, where Slurm
// is not installed or cannot start.
func Start(t testing.TB, script string) (conf, dir string) {
	t.Helper()
	for _, p := range []string{"srun", "salloc", "sbatch", "squeue", "scancel"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not found: install slurm-wlm and munge (make setup)", p)
		}
	}
	dir, err := os.MkdirTemp("", "rocmk-slurm-") // short: munged's socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	script, err = filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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
	return filepath.Join(dir, "slurm.conf"), dir
}
