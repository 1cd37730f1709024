package compile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/inspect"
)

// imageRunner stands in for clang and nvcc: `--version` prints version; a
// compile writes out (a real code object for clang, bytes naming the
// version for nvcc) to -o and, for clang, a depfile naming header. It
// fails every nvcc compile when nvccFails is set.
type imageRunner struct {
	mu        sync.Mutex
	version   string
	object    []byte
	header    string
	nvccFails bool
	compiles  []string // argv[0] of each compile
}

func (r *imageRunner) Run(ctx context.Context, c Cmd) (Output, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(c.Argv) == 2 && c.Argv[1] == "--version" {
		return Output{Stdout: []byte(r.version)}, nil
	}
	if len(c.Argv) > 5 && c.Argv[len(c.Argv)-5] == "-E" { // SearchPath: the header's include directory
		inc := filepath.Dir(filepath.Dir(r.header))
		return Output{Stderr: []byte(strings.Replace(fakeSearchOutput, "#include <...> search starts here:\n",
			"#include <...> search starts here:\n "+inc+"\n", 1))}, nil
	}
	r.compiles = append(r.compiles, filepath.Base(c.Argv[0]))
	var out, dep string
	for i, a := range c.Argv {
		switch a {
		case "-o":
			out = c.Argv[i+1]
		case "-MF":
			dep = c.Argv[i+1]
		}
	}
	if strings.HasSuffix(c.Argv[0], "nvcc") {
		if r.nvccFails {
			return Output{Stderr: []byte("hip/nvidia_detail/nvidia_hip_runtime.h:42: error: unknown type name 'cudaLaunchParams'\n")}, errors.New("exit status 2")
		}
		return Output{}, os.WriteFile(out, []byte("cubin from nvcc "+r.version), 0o644)
	}
	if err := os.WriteFile(out, r.object, 0o644); err != nil {
		return Output{}, err
	}
	return Output{}, os.WriteFile(dep, []byte(out+": "+r.header+"\n"), 0o644)
}

func (r *imageRunner) ran() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.compiles...)
}

// fakeNVRTC records what it compiles; its identity is id.
type fakeNVRTC struct {
	id       string
	headers  map[string]string
	opts     []string
	compiles int
}

func (n *fakeNVRTC) ID() (string, error) { return n.id, nil }

func (n *fakeNVRTC) Compile(name string, src []byte, headers map[string]string, opts []string) ([]byte, string, error) {
	n.compiles++
	n.headers, n.opts = headers, opts
	return []byte("cubin from nvrtc " + n.id), "", nil
}

// writeTool writes an executable file standing for a compiler binary: a
// new content is a new binary (size, mtime) as after an upgrade.
func writeTool(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o755))
}

func openTestCache(t *testing.T) (*cache.Cache, Store) {
	t.Helper()
	c, err := cache.Open(filepath.Join(t.TempDir(), "cache"))
	require.NoError(t, err)
	return c, c
}

func kinds(t *testing.T, c *cache.Cache) []string {
	t.Helper()
	ents, err := c.List()
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Meta.Kind)
	}
	sort.Strings(out)
	return out
}

// An AMD image is the Builder's code object, stored once under the build
// key; a new compiler (another binary, another --version) rebuilds it.
func TestImageAMDThroughBuilderRebuildsAfterUpgrade(t *testing.T) {
	dir := t.TempDir()
	clang := filepath.Join(dir, "llvm", "bin", "clang++")
	writeTool(t, clang, "clang 15")
	header := filepath.Join(dir, "include", "hip", "hip_runtime.h")
	writeTool(t, header, "// HIP\n")
	obj, err := os.ReadFile(testdata("vadd-gfx90a.hsaco"))
	require.NoError(t, err)
	c, store := openTestCache(t)
	run := &imageRunner{version: "clang version 15.0.6", object: obj, header: header}
	newBuilder := func() *ImageBuilder {
		return &ImageBuilder{Run: run, Cache: store, Getenv: func(string) string { return "" },
			Toolchain: func(inspect.Target) (Toolchain, error) {
				return &Clang{Layout: LayoutClang, Driver: clang, Clang: clang, DeviceLibDir: dir, DeviceLibTargets: []string{"gfx90a"}}, nil
			}}
	}
	src := []byte("#include <hip/hip_runtime.h>\n__global__ void vadd() {}\n")
	img, err := newBuilder().Build(context.Background(), "hip", "gfx90a", "vadd.hip", src)
	require.NoError(t, err)
	assert.Equal(t, obj, img.Data)
	assert.Equal(t, "clang", img.Compiler)
	assert.False(t, img.Cached)
	img, err = newBuilder().Build(context.Background(), "hip", "gfx90a", "vadd.hip", src)
	require.NoError(t, err)
	assert.True(t, img.Cached, "same toolchain, same source: a hit")
	assert.Equal(t, []string{"deps", "object", "toolchain-id", "toolchain-id"}, kinds(t, c),
		"the image is stored once, as the build's object (and the compiler's and device libraries' identities)")

	writeTool(t, clang, "clang 17, a new release")
	run.version = "clang version 17.0.0"
	img, err = newBuilder().Build(context.Background(), "hip", "gfx90a", "vadd.hip", src)
	require.NoError(t, err)
	assert.False(t, img.Cached, "an upgraded compiler rebuilds")
	assert.Len(t, run.ran(), 2)
}

// nvidiaSetup is an nvcc binary and HIP headers with the NVIDIA platform
// directory, named through the environment.
func nvidiaSetup(t *testing.T) (nvcc, inc string, getenv func(string) string) {
	dir := t.TempDir()
	nvcc = filepath.Join(dir, "cuda", "bin", "nvcc")
	writeTool(t, nvcc, "nvcc 12.4")
	inc = filepath.Join(dir, "include")
	writeTool(t, filepath.Join(inc, "hip", "hip_runtime.h"), "// HIP\n")
	writeTool(t, filepath.Join(inc, "hip", "nvidia_detail", "nvidia_hip_runtime.h"), "// HIP on NVIDIA\n")
	env := map[string]string{"NVCC": nvcc, "ROCMK_HIP_INCLUDE": inc}
	return nvcc, inc, func(k string) string { return env[k] }
}

// The nvcc key holds nvcc's binary and --version and the HIP headers: a
// change to either rebuilds.
func TestImageNVCCRebuildsAfterUpgradeOrHeaderChange(t *testing.T) {
	nvcc, inc, getenv := nvidiaSetup(t)
	_, store := openTestCache(t)
	run := &imageRunner{version: "Cuda compilation tools, release 12.4"}
	build := func() Image {
		t.Helper()
		ib := &ImageBuilder{Run: run, Cache: store, Getenv: getenv, NVRTC: &fakeNVRTC{id: "unused"}}
		img, err := ib.Build(context.Background(), "cuda", "sm_90", "binary.hip", []byte("src"))
		require.NoError(t, err)
		assert.Equal(t, "nvcc", img.Compiler)
		return img
	}
	assert.False(t, build().Cached)
	assert.True(t, build().Cached)

	writeTool(t, nvcc, "nvcc 13.0, a new release")
	run.version = "Cuda compilation tools, release 13.0"
	img := build()
	assert.False(t, img.Cached, "an upgraded nvcc rebuilds")
	assert.Equal(t, "cubin from nvcc Cuda compilation tools, release 13.0", string(img.Data))
	assert.True(t, build().Cached)

	writeTool(t, filepath.Join(inc, "hip", "nvidia_detail", "nvidia_hip_runtime.h"), "// HIP on NVIDIA, 6.2\n")
	assert.False(t, build().Cached, "new HIP headers rebuild")
	assert.Len(t, run.ran(), 3)
}

// The NVRTC key holds the library's identity and the shim; NVRTC gets the
// shim as hip/hip_runtime.h and the device's architecture.
func TestImageNVRTCRebuildsAfterUpgrade(t *testing.T) {
	_, store := openTestCache(t)
	nv := &fakeNVRTC{id: "12.4 /usr/local/cuda/lib64/libnvrtc.so.12.4.127 1 2 3"}
	build := func() Image {
		t.Helper()
		ib := &ImageBuilder{Run: &imageRunner{}, Cache: store, Getenv: func(string) string { return "" }, NVRTC: nv, NoNVCC: true}
		img, err := ib.Build(context.Background(), "cuda", "sm_90", "binary.hip", []byte("src"))
		require.NoError(t, err)
		assert.Equal(t, "nvrtc", img.Compiler)
		return img
	}
	assert.False(t, build().Cached)
	assert.Equal(t, nvrtcHIPShim, nv.headers["hip/hip_runtime.h"])
	assert.Contains(t, nv.opts, "--gpu-architecture=sm_90")
	assert.True(t, build().Cached)
	nv.id = "13.0 /usr/local/cuda/lib64/libnvrtc.so.13.0.48 1 2 3"
	img := build()
	assert.False(t, img.Cached, "an upgraded NVRTC rebuilds")
	assert.Equal(t, "cubin from nvrtc "+nv.id, string(img.Data))
	assert.Equal(t, 2, nv.compiles)
}

// A failing nvcc falls back on NVRTC with one warning, is not run again for
// the other modules of the run, and, through the cache, not again for the
// same module in later runs.
func TestImageNVCCFailureFallsBackToNVRTCAndIsRemembered(t *testing.T) {
	_, _, getenv := nvidiaSetup(t)
	_, store := openTestCache(t)
	run := &imageRunner{version: "release 13.0", nvccFails: true}
	nv := &fakeNVRTC{id: "13.0"}
	var warnings, logs []string
	newBuilder := func() *ImageBuilder {
		return &ImageBuilder{Run: run, Cache: store, Getenv: getenv, NVRTC: nv,
			Warn: func(f string, a ...any) { warnings = append(warnings, f) },
			Log:  func(f string, a ...any) { logs = append(logs, f) }}
	}
	ib := newBuilder()
	for _, mod := range []string{"binary.hip", "unary.hip"} {
		img, err := ib.Build(context.Background(), "cuda", "sm_90", mod, []byte(mod))
		require.NoError(t, err)
		assert.Equal(t, "nvrtc", img.Compiler)
	}
	assert.Equal(t, []string{"nvcc"}, run.ran(), "nvcc runs once per run")
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "using NVRTC for the rest of this run")

	img, err := newBuilder().Build(context.Background(), "cuda", "sm_90", "binary.hip", []byte("binary.hip"))
	require.NoError(t, err)
	assert.True(t, img.Cached)
	assert.Equal(t, []string{"nvcc"}, run.ran(), "a later run remembers the failure")
	assert.Len(t, warnings, 1, "and says so only with -v")
	assert.Contains(t, strings.Join(logs, "\n"), "nvcc failed before")
}

func TestImageOtherRuntimes(t *testing.T) {
	ib := &ImageBuilder{}
	img, err := ib.Build(context.Background(), "fake", "sm_90", "x.hip", []byte("src"))
	require.NoError(t, err)
	assert.Equal(t, Image{Data: []byte("src"), Compiler: "fake"}, img)
	_, err = ib.Build(context.Background(), "opencl", "x", "x.hip", nil)
	assert.ErrorContains(t, err, `no image builder for runtime "opencl"`)
	_, err = (&ImageBuilder{NoNVCC: true}).Build(context.Background(), "cuda", "sm_90", "x.hip", nil)
	assert.ErrorIs(t, err, ErrToolchainNotFound, "no nvcc and no NVRTC")
}

// An nvcc that cannot even say its version is given up for the run with
// one warning.
func TestImageNVCCWithoutVersionFallsBackOnce(t *testing.T) {
	_, _, getenv := nvidiaSetup(t)
	var warnings []string
	ib := &ImageBuilder{Run: failingRunner{}, Getenv: getenv, NVRTC: &fakeNVRTC{id: "13.0"},
		Warn: func(f string, a ...any) { warnings = append(warnings, f) }}
	for _, mod := range []string{"binary.hip", "unary.hip"} {
		img, err := ib.Build(context.Background(), "cuda", "sm_90", mod, []byte(mod))
		require.NoError(t, err)
		assert.Equal(t, "nvrtc", img.Compiler)
	}
	assert.Len(t, warnings, 1)
}

type failingRunner struct{}

func (failingRunner) Run(context.Context, Cmd) (Output, error) {
	return Output{}, errors.New("exec format error")
}
