package compile

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/slurm"
	"github.com/rocmk/rocmk/compile/toolchain"
)

func workerArg(t *testing.T, s WorkerSpec) string {
	data, err := json.Marshal(s)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(data)
}

func TestWorkerRefusesBadSpec(t *testing.T) {
	var out, errb bytes.Buffer
	code := RunWorker(context.Background(), "not base64!", &out, &errb)
	assert.Equal(t, slurm.ExitWorker, code)
	assert.Contains(t, errb.String(), "worker: bad job")
	assert.Regexp(t, `^rocmk-worker node \S+\n$`, out.String(), "the node is named first, whatever happens")
}

// The worker with the real toolchain: a node whose toolchain identity, or
// job key, is not the planner's stores nothing and says why; the right
// spec compiles and stores the object the planner's lookup then finds.
func TestRealWorkerChecksIdentityAndKey(t *testing.T) {
	tc := realClang(t, toolchain.LayoutClang)
	dir := t.TempDir()
	copyFiles(t, dir, "vadd.hip", "scale.h")
	cacheDir := filepath.Join(t.TempDir(), "cache")
	ctx := context.Background()
	planner := realBuilder(t, tc, cacheDir)
	planner.Environ = os.Environ
	tg := targets("gfx90a")[0]
	_, id, err := planner.toolchain(ctx, tg)
	require.NoError(t, err)
	j := toolchain.Job{Src: "vadd.hip", Dir: dir, Target: tg}
	base, err := planner.baseKey(tc, id, j)
	require.NoError(t, err)
	spec := WorkerSpec{Src: "vadd.hip", Dir: dir, Target: "gfx90a", ToolchainID: id, Key: base.String(), CacheDir: cacheDir}

	for _, bad := range []struct {
		edit func(*WorkerSpec)
		want string
	}{
		{func(s *WorkerSpec) { s.ToolchainID = "0123456789abcdef" }, "is not the planner's 0123456789ab: this node has another ROCm"},
		{func(s *WorkerSpec) { s.Key = "fedcba9876543210" }, "job key"},
	} {
		s := spec
		bad.edit(&s)
		var out, errb bytes.Buffer
		assert.Equal(t, slurm.ExitMismatch, RunWorker(ctx, workerArg(t, s), &out, &errb))
		assert.Contains(t, errb.String(), bad.want)
		_, _, _, ok := planner.lookup(base, j, readRoots(tc, j, os.Environ()))
		assert.False(t, ok, "nothing is stored under the key after a mismatch")
	}
	var out, errb bytes.Buffer
	require.Equal(t, 0, RunWorker(ctx, workerArg(t, spec), &out, &errb), errb.String())
	co, _, _, ok := planner.lookup(base, j, readRoots(tc, j, os.Environ()))
	require.True(t, ok, "the worker stored the object under the planner's key")
	assert.Equal(t, "gfx90a", co.Target.Proc)
}
