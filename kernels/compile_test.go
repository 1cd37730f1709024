package kernels

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The suite's HIP sources compile with Debian's ROCm toolchain (hipcc,
// clang-15) for CDNA2 (gfx90a, wave64), CDNA1 (gfx908, wave64) and RDNA2
// (gfx1030, wave32), and every kernel the registry names is in the code
// object. Slow (about a minute on 2 cores): skipped with -short.
func TestSuiteCompilesForAMDTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles 39 code objects; skipped with -short")
	}
	hipcc, err := exec.LookPath("hipcc")
	if err != nil {
		t.Skip("hipcc not installed (apt install hipcc)")
	}
	want := map[string][]string{}
	for _, s := range Registry() {
		want[s.Module] = append(want[s.Module], s.Name)
	}
	dir := t.TempDir()
	for _, name := range Sources() {
		src, err := Source(name)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), src, 0o644))
	}
	targets := []string{"gfx90a", "gfx908", "gfx1030"}
	type job struct{ src, target string }
	var jobs []job
	for _, s := range Sources() {
		for _, tg := range targets {
			jobs = append(jobs, job{s, tg})
		}
	}
	var mu sync.Mutex
	results := map[job][]string{}
	errs := map[job]string{}
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func(j job) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out := filepath.Join(dir, strings.TrimSuffix(j.src, ".hip")+"-"+j.target+".hsaco")
			cmd := exec.Command(hipcc, "--genco", "--offload-arch="+j.target, "-O3", "-Werror", "--no-gpu-bundle-output", "-o", out, filepath.Join(dir, j.src))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				mu.Lock()
				errs[j] = err.Error() + "\n" + stderr.String()
				mu.Unlock()
				return
			}
			syms, err := kernelSymbols(out)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[j] = err.Error()
				return
			}
			results[j] = syms
		}(j)
	}
	wg.Wait()
	for _, j := range jobs {
		if e, bad := errs[j]; bad {
			t.Errorf("%s for %s: %s", j.src, j.target, e)
			continue
		}
		have := map[string]bool{}
		for _, s := range results[j] {
			have[s] = true
		}
		for _, k := range want[j.src] {
			assert.True(t, have[k], "%s [%s] has kernel %s", j.src, j.target, k)
		}
	}
}

// kernelSymbols lists the kernel descriptors (<name>.kd) of an AMDGPU code object.
func kernelSymbols(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range syms {
		if strings.HasSuffix(s.Name, ".kd") {
			out = append(out, strings.TrimSuffix(s.Name, ".kd"))
		}
	}
	sort.Strings(out)
	return out, nil
}

// The generated modules are up to date with src/ (run go generate ./kernels).
func TestGeneratedModulesUpToDate(t *testing.T) {
	prelude, err := os.ReadFile(filepath.Join("src", "prelude.h"))
	require.NoError(t, err)
	for _, name := range Sources() {
		body, err := os.ReadFile(filepath.Join("src", name+".in"))
		require.NoError(t, err)
		src, err := Source(name)
		require.NoError(t, err)
		assert.True(t, bytes.Contains(src, prelude), "%s contains the current prelude (go generate ./kernels)", name)
		assert.True(t, bytes.HasSuffix(src, body), "%s ends with src/%s.in (go generate ./kernels)", name, name)
	}
}
