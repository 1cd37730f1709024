package compile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// countingRunner counts `clang --version` runs (discovery and identity)
// and compiles through an imageRunner.
type countingRunner struct {
	*imageRunner
	versions atomic.Int32
}

func (r *countingRunner) Run(ctx context.Context, c runner.Cmd) (runner.Output, error) {
	if len(c.Argv) == 2 && c.Argv[1] == "--version" {
		r.versions.Add(1)
	}
	return r.imageRunner.Run(ctx, c)
}

// fakeROCmTree is a ROCm install under a temporary directory: llvm/bin/clang++,
// gfx90a's device library and the HIP header.
func fakeROCmTree(t *testing.T) (root string, run *countingRunner) {
	root = t.TempDir()
	writeTool(t, filepath.Join(root, "llvm", "bin", "clang++"), "#!/bin/sh\n")
	writeTool(t, filepath.Join(root, "amdgcn", "bitcode", "oclc_isa_version_90a.bc"), "BC")
	header := filepath.Join(root, "include", "hip", "hip_runtime.h")
	writeTool(t, header, "// HIP\n")
	obj, err := os.ReadFile(testdata("vadd-gfx90a.hsaco"))
	require.NoError(t, err)
	return root, &countingRunner{imageRunner: &imageRunner{version: "clang version 15.0.6", object: obj, header: header}}
}

// A session finds the toolchain once, however many builds, images and
// target questions use it, and runs everything through its Runner.
func TestSessionFindsTheToolchainOnce(t *testing.T) {
	root, run := fakeROCmTree(t)
	s, err := OpenSession(SessionOptions{ROCmPath: root, Runner: run, CacheDir: filepath.Join(t.TempDir(), "cache")})
	require.NoError(t, err)
	src := filepath.Join(t.TempDir(), "k.hip")
	require.NoError(t, os.WriteFile(src, []byte("#include <hip/hip_runtime.h>\n__global__ void vadd() {}\n"), 0o644))
	gfx90a := inspect.MustParseTarget("gfx90a")
	for i := 0; i < 2; i++ {
		rep, err := s.Build(context.Background(), Request{BaseDir: filepath.Dir(src), Sources: []string{src}, Targets: []inspect.Target{gfx90a}, OutDir: t.TempDir()}, BuildOptions{})
		require.NoError(t, err)
		assert.Equal(t, []Status{[]Status{StatusCompiled, StatusHit}[i]}, []Status{rep.Results[0].Status})
	}
	img, err := s.Images(ImageOptions{}).Build(context.Background(), AMD, "gfx90a", "k.hip", []byte("#include <hip/hip_runtime.h>\n__global__ void vadd() {}\n"))
	require.NoError(t, err)
	assert.True(t, img.Cached, "the image is the build's object")
	tc, err := s.Resolver().ToolchainFor(context.Background(), gfx90a)
	require.NoError(t, err)
	assert.Same(t, tc, toolchain.Toolchain(must(s.Resolver().Toolchain())))
	assert.Equal(t, []inspect.Target{gfx90a}, s.Resolver().DefaultTargets(context.Background()), "the defaults the toolchain can build")
	assert.EqualValues(t, 2, run.versions.Load(), "one --version for discovery, one for the toolchain's identity")
	assert.Len(t, run.ran(), 1, "one compile")
	assert.Equal(t, 1, run.probes, "gfx90a's toolchain probed once")

	s.Close(context.Background())
	st, err := s.Store().(*cache.Cache).Stats()
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.Hits, "the second build and the image")
	assert.Equal(t, int64(1), st.Misses)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The session's Store: none with NoCache or ROCMK_CACHE=off (unless a
// directory is named), the local cache, or the remote tier in front of it.
func TestSessionStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	s, err := OpenSession(SessionOptions{CacheDir: dir, NoCache: true})
	require.NoError(t, err)
	assert.Nil(t, s.Store())
	off := func(k string) string { return map[string]string{"ROCMK_CACHE": "off"}[k] }
	s, err = OpenSession(SessionOptions{Getenv: off})
	require.NoError(t, err)
	assert.Nil(t, s.Store(), "ROCMK_CACHE=off")
	s, err = OpenSession(SessionOptions{CacheDir: dir, Getenv: off})
	require.NoError(t, err)
	assert.Equal(t, dir, s.CacheDir(), "the --cache-dir flag wins over ROCMK_CACHE=off, as for the cache commands")
	s.Close(context.Background())
	require.NoError(t, os.RemoveAll(dir))

	s, err = OpenSession(SessionOptions{CacheDir: dir})
	require.NoError(t, err)
	c, ok := s.Store().(*cache.Cache)
	require.True(t, ok)
	assert.Equal(t, dir, c.Dir())

	var tier *fakeTier
	s, err = OpenSession(SessionOptions{CacheDir: dir, OpenTier: func(l *cache.Cache) (Tier, error) {
		tier = &fakeTier{Cache: l}
		return tier, nil
	}})
	require.NoError(t, err)
	assert.Same(t, tier, s.Store())
	assert.Same(t, tier, s.Resolver().Store(), "the resolver remembers through it (in its local cache)")
	assert.Equal(t, dir, tier.Local().Dir(), "identities stay local")
	assert.Equal(t, &cache.RemoteStats{Hits: 7}, s.Close(context.Background()))
	assert.True(t, tier.closed)

	var warned []string
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	s, err = OpenSession(SessionOptions{CacheDir: file, Warn: func(f string, a ...any) { warned = append(warned, f) }})
	require.NoError(t, err, "a cache that cannot be opened is a warning")
	assert.Nil(t, s.Store())
	require.Len(t, warned, 1)
	assert.True(t, strings.HasPrefix(warned[0], "build cache unavailable"))
}

// fakeTier is a Tier over a local cache that reports fixed counters.
type fakeTier struct {
	*cache.Cache
	closed bool
}

func (f *fakeTier) Local() *cache.Cache         { return f.Cache }
func (f *fakeTier) Close(context.Context) error { f.closed = true; return nil }
func (f *fakeTier) Counters() cache.RemoteStats { return cache.RemoteStats{Hits: 7} }
