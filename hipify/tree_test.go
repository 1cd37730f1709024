package hipify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }

// A tree is translated on many goroutines into a mirrored output tree
// (run under -race by make test): every file once, each output what
// Translate gives for its input, results in plan order.
func TestRunTreeParallel(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "testdata", "hipify", "cuda", "elementwise.cu"))
	require.NoError(t, err)
	for i := range 24 {
		p := filepath.Join(in, fmt.Sprintf("d%d", i%3), fmt.Sprintf("k%02d.cu", i))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, append([]byte(fmt.Sprintf("// %d\n", i)), src...), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(in, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(in, ".git", "x.cu"), src, 0o644))
	o := TreeOptions{Inputs: []string{in}, Output: out, Write: true, Read: readFile, Jobs: 8, Rename: map[string]string{".cu": ".hip"}}
	jobs, err := PlanTree(o)
	require.NoError(t, err)
	require.Len(t, jobs, 24, "hidden directories are skipped")
	var done atomic.Int32
	results, err := RunTree(context.Background(), jobs, o, func() { done.Add(1) })
	require.NoError(t, err)
	assert.EqualValues(t, 24, done.Load())
	for i, r := range results {
		require.NoError(t, r.Err)
		assert.Equal(t, jobs[i].Name, r.Name, "results in plan order")
		want, _, err := Translate(r.Name, r.In, o.Translate)
		require.NoError(t, err)
		got, err := os.ReadFile(r.Dst)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), r.Dst)
		assert.Equal(t, ".hip", filepath.Ext(r.Dst))
	}
	rep := Summarize(results, Version{Major: 6, Minor: 3}, 0)
	assert.Equal(t, 24, rep.Total.Files)
	assert.Equal(t, 24, rep.Total.Changed)
}

// Two inputs with one output name, or an output onto an input: refused
// before anything is written.
func TestPlanTreeRefusesCollisions(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/k.cu", "b/k.cu"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("int x;\n"), 0o644))
	}
	a, b := filepath.Join(dir, "a", "k.cu"), filepath.Join(dir, "b", "k.cu")
	_, err := PlanTree(TreeOptions{Inputs: []string{a, b}, Output: filepath.Join(dir, "out"), Write: true})
	var ue *safefile.UsageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "would both be written to")
	_, err = PlanTree(TreeOptions{Inputs: []string{a}, Output: a, Write: true})
	assert.ErrorContains(t, err, "which is also an input")
	_, err = PlanTree(TreeOptions{Inputs: []string{a}, Output: "x", InPlace: true, Write: true})
	assert.EqualError(t, err, "--in-place and -o are exclusive")
}

// A user's rocmk_hip_compat.h where rocmk writes its compat header is
// refused when the tree is planned (issue 19: it was written, then the
// files needing the header were refused: half a tree). One rocmk wrote is
// taken as it is: translating a translated tree again works.
func TestPlanTreeRefusesAUsersCompatHeader(t *testing.T) {
	src := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "sub", "k.cu"), []byte("__global__ void k(float* p) { p[0] = __shfl_down_sync(0xffffffff, p[1], 1); }\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, CompatHeaderName), []byte("#pragma once\n"), 0o644))
	_, err := PlanTree(TreeOptions{Inputs: []string{src}, Output: out, Write: true})
	var ue *safefile.UsageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), filepath.Join(src, CompatHeaderName)+" would be written to "+filepath.Join(out, CompatHeaderName)+", where rocmk writes its compat header")
	assert.NoDirExists(t, out)

	require.NoError(t, os.WriteFile(filepath.Join(src, CompatHeaderName), CompatHeader(), 0o644))
	jobs, err := PlanTree(TreeOptions{Inputs: []string{src}, Output: out, Write: true})
	require.NoError(t, err, "rocmk's own header, from an earlier translation")
	assert.Len(t, jobs, 2)
}
