package compile

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
)

// BenchmarkCacheHitPerObject measures a fully cached build of one source
// for four targets in a fresh Builder (so every header of the real
// dependency list, ~245 files with the HIP headers, is hashed again):
// key computation, deps lookup, object read, sha256 check, read-back target
// check and placing the output. Reported per object.
func BenchmarkCacheHitPerObject(b *testing.B) {
	tc := realClang(b, toolchain.LayoutClang)
	dir := b.TempDir()
	copyFiles(b, dir, "vadd.hip", "scale.h")
	cacheDir := filepath.Join(dir, "cache")
	ts := targets("gfx900", "gfx90a", "gfx940", "gfx1030")
	req := Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: ts, OutDir: filepath.Join(dir, "out")}
	t := &testing.T{}
	_, err := realBuilder(t, tc, cacheDir).Build(context.Background(), req)
	require.NoError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := realBuilder(t, tc, cacheDir).Build(context.Background(), req)
		if err != nil || rep.Count(StatusHit) != len(ts) {
			b.Fatalf("not all hits: %v", err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ts))/1e6, "ms/object")
}

// BenchmarkIncludeScan measures what a miss adds before the compiler runs:
// asking clang for the search path (clang -E -v) and scanning every header
// reachable from a source that includes hip_runtime.h, with fresh memos
// (a new build). Reports the files and lookups the scan found.
func BenchmarkIncludeScan(b *testing.B) {
	tc := realClang(b, toolchain.LayoutClang)
	dir := b.TempDir()
	copyFiles(b, dir, "vadd.hip", "scale.h")
	j := toolchain.Job{Src: "vadd.hip", Dir: dir, Target: targets("gfx90a")[0]}
	var g *includeGraph
	for i := 0; i < b.N; i++ {
		bl := &Builder{TC: tc, Run: runner.ExecRunner{}}
		sp, err := bl.searchPath(context.Background(), tc, j)
		require.NoError(b, err)
		g, err = bl.scanJob(dir, sp, j.Src)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(len(g.files)), "files")
	b.ReportMetric(float64(len(g.lookups)), "lookups")
}
