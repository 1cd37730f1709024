package toolchain

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/runner"
)

// versionRunner answers `--version` and counts the runs.
type versionRunner struct{ runs atomic.Int32 }

func (r *versionRunner) Run(_ context.Context, c runner.Cmd) (runner.Output, error) {
	r.runs.Add(1)
	return runner.Output{Stdout: []byte("clang version 15.0.6\nTarget: x86_64-pc-linux-gnu\n")}, nil
}

// The toolchain identity is the compiler's content, not where it lies or
// when it was copied: two machines with the same toolchain share keys (and
// so a remote cache); another binary is another identity.
func TestToolchainIDIsContentBased(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		writeTool(t, filepath.Join(d, "bin", "clang++"), "#!/bin/sh\necho the same clang\n")
	}
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(b, "bin", "clang++"), old, old))
	tc := func(dir string) *Clang {
		c := filepath.Join(dir, "bin", "clang++")
		return &Clang{Layout: LayoutClang, Driver: c, Clang: c, HIPVersion: "5.2.21153", ROCmVersion: "5.2.3"}
	}
	r := &versionRunner{}
	idA, err := tc(a).ID(context.Background(), r)
	require.NoError(t, err)
	idB, err := tc(b).ID(context.Background(), r)
	require.NoError(t, err)
	assert.Equal(t, idA, idB, "same content elsewhere, another mtime and inode: one identity")
	assert.NotContains(t, idA, a, "no path in the identity")
	assert.NotEqual(t, tc(a).Stamp(), tc(b).Stamp(), "stamps are this machine's stat data")

	writeTool(t, filepath.Join(b, "bin", "clang++"), "#!/bin/sh\necho another clang\n")
	idC, err := tc(b).ID(context.Background(), r)
	require.NoError(t, err)
	assert.NotEqual(t, idA, idC, "another binary, another identity")

	// Device libraries: content, not stat data.
	for _, d := range []string{a, b} {
		writeTool(t, filepath.Join(d, "bitcode", "ocml.bc"), "BC ocml")
	}
	require.NoError(t, os.Chtimes(filepath.Join(b, "bitcode", "ocml.bc"), old, old))
	la, err := TreeIdentity(nil, "devicelibs", filepath.Join(a, "bitcode"))
	require.NoError(t, err)
	lb, err := TreeIdentity(nil, "devicelibs", filepath.Join(b, "bitcode"))
	require.NoError(t, err)
	assert.Equal(t, la, lb)
}

// toolchainID is tc's identity as a Builder asks for it.
func toolchainID(tc Toolchain, store Store, r runner.Runner) (string, error) {
	return Remember(store, "toolchain", tc.Stamp(), func() (string, error) { return tc.ID(context.Background(), r) })
}

// An identity is computed once per stamp and remembered in the local
// cache: a later process with the same compiler neither runs nor hashes it;
// a changed compiler (a new stamp) is identified again.
func TestToolchainIDRememberedUnderItsStamp(t *testing.T) {
	dir := t.TempDir()
	clang := filepath.Join(dir, "clang++")
	writeTool(t, clang, "#!/bin/sh\n")
	tc := &Clang{Layout: LayoutClang, Driver: clang, Clang: clang}
	_, store := openTestCache(t)
	r := &versionRunner{}
	id1, err := toolchainID(tc, store, r)
	require.NoError(t, err)
	_, err = toolchainID(tc, store, r)
	require.NoError(t, err)
	assert.EqualValues(t, 1, r.runs.Load(), "once per process")

	ids.Clear() // a new process, the same cache
	id2, err := toolchainID(tc, store, r)
	require.NoError(t, err)
	assert.Equal(t, id1, id2)
	assert.EqualValues(t, 1, r.runs.Load(), "remembered in the cache under the stamp")

	writeTool(t, clang, "#!/bin/sh\n# upgraded\n")
	id3, err := toolchainID(tc, store, r)
	require.NoError(t, err)
	assert.EqualValues(t, 2, r.runs.Load(), "a new stamp: identified again")
	assert.NotEqual(t, id1, id3)
}

// A header tree reached through links, as CUDA's: /usr/local/cuda/include
// is a link to targets/<arch>/include, and subtrees may be links too. The
// identity covers the files behind every link; a dangling link or a cycle
// neither fails nor hangs.
func TestTreeIdentityFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "targets", "x86_64-linux", "include")
	writeTool(t, filepath.Join(real, "cuda_fp16.h"), "half")
	writeTool(t, filepath.Join(dir, "cccl-real", "cub", "cub.cuh"), "cub 1")
	require.NoError(t, os.Symlink(filepath.Join(dir, "cccl-real"), filepath.Join(real, "cccl")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(real, "dangling.h")))
	require.NoError(t, os.Symlink(real, filepath.Join(real, "loop")))
	inc := filepath.Join(dir, "include")
	require.NoError(t, os.Symlink(real, inc))

	files, err := TreeFiles(inc)
	require.NoError(t, err)
	assert.Equal(t, []string{"cccl/cub/cub.cuh", "cuda_fp16.h"}, files)
	before, err := TreeIdentity(nil, "cuda-headers", inc)
	require.NoError(t, err)
	writeTool(t, filepath.Join(dir, "cccl-real", "cub", "cub.cuh"), "cub 2")
	after, err := TreeIdentity(nil, "cuda-headers", inc)
	require.NoError(t, err)
	assert.NotEqual(t, before, after, "a header behind a linked subtree changed")
}
