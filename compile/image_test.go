package compile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
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
	failInc   string           // an nvcc compile given -I failInc fails
	compiles  []string         // argv[0] of each compile
	cmds      []runner.Cmd     // each compile
	probes    int              // toolchain probes (probe.hip)
	onCompile func(runner.Cmd) // called in each compile, while its files exist
}

func (r *imageRunner) Run(ctx context.Context, c runner.Cmd) (runner.Output, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(c.Argv) == 2 && c.Argv[1] == "--version" {
		return runner.Output{Stdout: []byte(r.version)}, nil
	}
	if len(c.Argv) > 5 && c.Argv[len(c.Argv)-5] == "-E" { // SearchPath: the header's include directory
		inc := filepath.Dir(filepath.Dir(r.header))
		return runner.Output{Stderr: []byte(strings.Replace(fakeSearchOutput, "#include <...> search starts here:\n",
			"#include <...> search starts here:\n "+inc+"\n", 1))}, nil
	}
	if slices.Contains(c.Argv, "probe.hip") {
		r.probes++
	} else {
		r.compiles = append(r.compiles, filepath.Base(c.Argv[0]))
		r.cmds = append(r.cmds, c)
		if r.onCompile != nil {
			r.onCompile(c)
		}
	}
	var out, dep string
	for i, a := range c.Argv {
		switch a {
		case "-o":
			out = c.Argv[i+1]
		case "-dependency-file":
			dep = c.Argv[i+2] // -Xclang -dependency-file -Xclang DEP
		}
	}
	if strings.HasSuffix(c.Argv[0], "nvcc") {
		if r.nvccFails || (r.failInc != "" && contains(c.Argv, "-I"+r.failInc)) {
			return runner.Output{Stderr: []byte("hip/nvidia_detail/nvidia_hip_runtime.h:42: error: unknown type name 'cudaLaunchParams'\n")}, errors.New("exit status 2")
		}
		return runner.Output{}, os.WriteFile(out, []byte("cubin from nvcc "+r.version), 0o644)
	}
	if err := os.WriteFile(out, r.object, 0o644); err != nil || dep == "" {
		return runner.Output{}, err
	}
	return runner.Output{}, os.WriteFile(dep, []byte(out+": "+r.header+"\n"), 0o644)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (r *imageRunner) ran() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.compiles...)
}

// fakeNVRTC records what it compiles; its identity is id.
type fakeNVRTC struct {
	id       string
	lib      string // the file it says it was loaded from
	name     string
	headers  map[string]string
	opts     []string
	compiles int
}

func (n *fakeNVRTC) Library() string { return n.lib }

func (n *fakeNVRTC) ID() (string, error) { return n.id, nil }

func (n *fakeNVRTC) Compile(name string, src []byte, headers map[string]string, opts []string) ([]byte, string, error) {
	n.compiles++
	n.name, n.headers, n.opts = name, headers, opts
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
			Toolchain: func(context.Context, inspect.Target) (toolchain.Toolchain, error) {
				return &toolchain.Clang{Layout: toolchain.LayoutClang, Driver: clang, Clang: clang, DeviceLibDir: dir, DeviceLibTargets: []string{"gfx90a"}}, nil
			}}
	}
	src := []byte("#include <hip/hip_runtime.h>\n__global__ void vadd() {}\n")
	img, err := newBuilder().Build(context.Background(), AMD, "gfx90a", "vadd.hip", src)
	require.NoError(t, err)
	assert.Equal(t, obj, img.Data)
	assert.Equal(t, "clang", img.Compiler)
	assert.False(t, img.Cached)
	img, err = newBuilder().Build(context.Background(), AMD, "gfx90a", "vadd.hip", src)
	require.NoError(t, err)
	assert.True(t, img.Cached, "same toolchain, same source: a hit")
	assert.Equal(t, []string{"deps", "object", "toolchain-id", "toolchain-id"}, kinds(t, c),
		"the image is stored once, as the build's object (and the compiler's and device libraries' identities)")

	writeTool(t, clang, "clang 17, a new release")
	run.version = "clang version 17.0.0"
	img, err = newBuilder().Build(context.Background(), AMD, "gfx90a", "vadd.hip", src)
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
		ib := &ImageBuilder{Run: run, Cache: store, Getenv: getenv, NVRTC: &fakeNVRTC{id: "unused"}, TreeRoot: t.TempDir()}
		img, err := ib.Build(context.Background(), NVIDIA, "sm_90", "binary.hip", []byte("src"))
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

// A source's in-memory headers reach nvcc: written beside the source in
// its private directory, found with -I., removed afterwards; a changed
// header is a new key. A header name leaving the directory is refused.
func TestImageNVCCGetsSourceHeaders(t *testing.T) {
	_, _, getenv := nvidiaSetup(t)
	_, store := openTestCache(t)
	var seen, dirs []string
	run := &imageRunner{version: "Cuda compilation tools, release 12.4", onCompile: func(c runner.Cmd) {
		b, err := os.ReadFile(filepath.Join(c.Dir, "sub", "scale.h"))
		require.NoError(t, err, "the header is in the compile's directory")
		seen, dirs = append(seen, string(b)), append(dirs, c.Dir)
		assert.Contains(t, c.Argv, "-I.")
	}}
	build := func(scale string) Image {
		t.Helper()
		ib := &ImageBuilder{Run: run, Cache: store, Getenv: getenv, TreeRoot: t.TempDir()}
		img, err := ib.BuildSource(context.Background(), NVIDIA, "sm_90", ImageSource{Name: "scale.hip", Data: []byte(`#include "sub/scale.h"`),
			Headers: map[string]string{"sub/scale.h": "#define SCALE " + scale}})
		require.NoError(t, err)
		return img
	}
	assert.False(t, build("2").Cached)
	assert.True(t, build("2").Cached)
	assert.False(t, build("3").Cached, "a changed header is a miss")
	assert.Equal(t, []string{"#define SCALE 2", "#define SCALE 3"}, seen)
	for _, d := range dirs {
		assert.NoDirExists(t, d, "the private include directory is removed")
	}
	ib := &ImageBuilder{Run: run, Cache: store, Getenv: getenv, NVRTC: &fakeNVRTC{id: "x"}, NoNVCC: true}
	_, err := ib.BuildSource(context.Background(), NVIDIA, "sm_90", ImageSource{Name: "scale.hip", Data: []byte("src"), Headers: map[string]string{"../x.h": ""}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `scale.hip: header "../x.h"`)
}

// A source's in-memory headers reach NVRTC beside rocmk's, and are in the
// key: a changed header compiles again.
func TestImageNVRTCGetsSourceHeaders(t *testing.T) {
	_, store := openTestCache(t)
	nv := &fakeNVRTC{id: "12.4 libnvrtc 1 2 3"}
	build := func(scale string) Image {
		t.Helper()
		ib := &ImageBuilder{Run: &imageRunner{}, Cache: store, Getenv: func(string) string { return "" }, NVRTC: nv, NoNVCC: true}
		img, err := ib.BuildSource(context.Background(), NVIDIA, "sm_90", ImageSource{Name: "scale.hip", Data: []byte(`#include "scale.h"`),
			Headers: map[string]string{"scale.h": "#define SCALE " + scale}})
		require.NoError(t, err)
		return img
	}
	assert.False(t, build("2").Cached)
	assert.Equal(t, "#define SCALE 2", nv.headers["scale.h"])
	assert.Contains(t, nv.headers, "hip/hip_runtime.h", "rocmk's headers still there")
	assert.True(t, build("2").Cached)
	assert.False(t, build("3").Cached, "a changed header is a miss")
	assert.Equal(t, "#define SCALE 3", nv.headers["scale.h"])
	assert.Equal(t, 2, nv.compiles)
}

// cudaToolkit writes the part of a CUDA toolkit NVRTC builds need: its
// include directory (with CUDA 13's cccl/) and libnvrtc beside it.
func cudaToolkit(t *testing.T) (root string) {
	root = filepath.Join(t.TempDir(), "cuda")
	writeTool(t, filepath.Join(root, "include", "cuda_fp16.h"), "// fp16\n")
	writeTool(t, filepath.Join(root, "include", "cccl", "cuda", "std", "limits"), "// libcu++\n")
	writeTool(t, filepath.Join(root, "lib64", "libnvrtc.so.13"), "ELF")
	return root
}

// The NVRTC key holds the library's identity, rocmk's headers and the CUDA
// headers; NVRTC gets rocmk's HIP and C/C++ headers in memory, the
// toolkit's include directories (found beside the library) and the
// device's architecture.
func TestImageNVRTCRebuildsAfterUpgrade(t *testing.T) {
	_, store := openTestCache(t)
	cuda := cudaToolkit(t)
	nv := &fakeNVRTC{id: "12.4 /usr/local/cuda/lib64/libnvrtc.so.12.4.127 1 2 3", lib: filepath.Join(cuda, "lib64", "libnvrtc.so.13")}
	build := func() Image {
		t.Helper()
		ib := &ImageBuilder{Run: &imageRunner{}, Cache: store, Getenv: func(string) string { return "" }, NVRTC: nv, NoNVCC: true}
		img, err := ib.Build(context.Background(), NVIDIA, "sm_90", "binary.hip", []byte("src"))
		require.NoError(t, err)
		assert.Equal(t, "nvrtc", img.Compiler)
		return img
	}
	assert.False(t, build().Cached)
	assert.Contains(t, nv.headers["hip/hip_runtime.h"], "rocmk's HIP on NVIDIA")
	for _, h := range []string{"hip/hip_fp16.h", "hip/hip_bf16.h", "hip/hip_bfloat16.h", "math.h", "stdint.h", "stddef.h", "cmath", "cstdint", "limits", "climits", "cfloat"} {
		assert.Contains(t, nv.headers, h)
	}
	assert.Contains(t, nv.opts, "--gpu-architecture=sm_90")
	assert.Contains(t, nv.opts, "-I"+filepath.Join(cuda, "include"))
	assert.Contains(t, nv.opts, "-I"+filepath.Join(cuda, "include", "cccl"))
	assert.True(t, build().Cached)
	nv.id = "13.0 /usr/local/cuda/lib64/libnvrtc.so.13.0.48 1 2 3"
	img := build()
	assert.False(t, img.Cached, "an upgraded NVRTC rebuilds")
	assert.Equal(t, "cubin from nvrtc "+nv.id, string(img.Data))
	assert.Equal(t, 2, nv.compiles)
	writeTool(t, filepath.Join(cuda, "include", "cuda_fp16.h"), "// fp16, patched\n")
	assert.False(t, build().Cached, "new CUDA headers rebuild")
}

// The CUDA include directory is found from the environment, nvcc's
// installation, or the loaded libnvrtc (lib64/ or targets/<arch>/lib/).
func TestCUDAIncludeDirs(t *testing.T) {
	none := func(string) string { return "" }
	a := cudaToolkit(t)
	assert.Equal(t, []string{filepath.Join(a, "include"), filepath.Join(a, "include", "cccl")},
		cudaIncludeDirs(none, "", filepath.Join(a, "lib64", "libnvrtc.so.13")))
	b := filepath.Join(t.TempDir(), "cuda-12.6")
	writeTool(t, filepath.Join(b, "targets", "x86_64-linux", "include", "cuda_fp16.h"), "")
	assert.Equal(t, []string{filepath.Join(b, "targets", "x86_64-linux", "include")},
		cudaIncludeDirs(none, "", filepath.Join(b, "targets", "x86_64-linux", "lib", "libnvrtc.so.12")))
	writeTool(t, filepath.Join(b, "bin", "nvcc"), "nvcc")
	writeTool(t, filepath.Join(b, "include", "cuda_fp16.h"), "")
	assert.Equal(t, []string{filepath.Join(b, "include")}, cudaIncludeDirs(none, filepath.Join(b, "bin", "nvcc"), ""))
	env := map[string]string{"CUDA_PATH": a}
	assert.Equal(t, filepath.Join(a, "include"), cudaIncludeDirs(func(k string) string { return env[k] }, filepath.Join(b, "bin", "nvcc"), "")[0],
		"$CUDA_PATH first")
	if _, err := os.Stat("/usr/local/cuda/include/cuda_fp16.h"); err != nil {
		if _, err := os.Stat("/usr/include/cuda_fp16.h"); err != nil {
			assert.Nil(t, cudaIncludeDirs(none, "", filepath.Join(t.TempDir(), "libnvrtc.so")))
		}
	}
}

// A failing nvcc (with the installed HIP headers, then with rocmk's) falls
// back on NVRTC with one warning per header set, is not run again for the
// other modules of the run, and, through the cache, not again for the same
// module in later runs.
func TestImageNVCCFailureFallsBackToNVRTCAndIsRemembered(t *testing.T) {
	_, _, getenv := nvidiaSetup(t)
	_, store := openTestCache(t)
	run := &imageRunner{version: "release 13.0", nvccFails: true}
	nv := &fakeNVRTC{id: "13.0"}
	var warnings, logs []string
	root := t.TempDir()
	newBuilder := func() *ImageBuilder {
		return &ImageBuilder{Run: run, Cache: store, Getenv: getenv, NVRTC: nv, TreeRoot: root,
			Warn: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) },
			Log:  func(f string, a ...any) { logs = append(logs, f) }}
	}
	ib := newBuilder()
	for _, mod := range []string{"binary.hip", "unary.hip"} {
		img, err := ib.Build(context.Background(), NVIDIA, "sm_90", mod, []byte(mod))
		require.NoError(t, err)
		assert.Equal(t, "nvrtc", img.Compiler)
	}
	assert.Equal(t, []string{"nvcc", "nvcc"}, run.ran(), "nvcc runs once per set of HIP headers per run")
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], "trying rocmk's HIP headers")
	assert.Contains(t, warnings[1], "using NVRTC for the rest of this run")

	img, err := newBuilder().Build(context.Background(), NVIDIA, "sm_90", "binary.hip", []byte("binary.hip"))
	require.NoError(t, err)
	assert.True(t, img.Cached)
	assert.Len(t, run.ran(), 2, "a later run remembers the failures")
	assert.Len(t, warnings, 2, "and says so only with -v")
	assert.Contains(t, strings.Join(logs, "\n"), "nvcc failed before")
}

// HIP headers nvcc rejects (Debian's HIP 5.2.3 under CUDA 13:
// cudaMemLocation) are replaced by rocmk's own: nvcc builds with them,
// once warned; the next module goes to them directly.
func TestImageNVCCBrokenHIPHeadersUseRocmks(t *testing.T) {
	_, inc, getenv := nvidiaSetup(t)
	_, store := openTestCache(t)
	run := &imageRunner{version: "release 13.0", failInc: inc}
	var warnings []string
	root := t.TempDir()
	ib := &ImageBuilder{Run: run, Cache: store, Getenv: getenv, NVRTC: &fakeNVRTC{id: "13.0"}, TreeRoot: root,
		Warn: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }}
	for _, mod := range []string{"binary.hip", "unary.hip"} {
		img, err := ib.Build(context.Background(), NVIDIA, "sm_90", mod, []byte(mod))
		require.NoError(t, err)
		assert.Equal(t, "nvcc-rocmk", img.Compiler)
	}
	assert.Equal(t, []string{"nvcc", "nvcc", "nvcc"}, run.ran(), "the installed headers are tried once")
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "trying rocmk's HIP headers")
	// rocmk's headers are a directory under the tree root, as embedded
	last := run.cmds[len(run.cmds)-1].Argv
	var layer string
	for _, a := range last {
		if strings.HasPrefix(a, "-I"+root) {
			layer = a[2:]
		}
	}
	require.NotEmpty(t, layer, "%q", last)
	data, err := os.ReadFile(filepath.Join(layer, "hip", "hip_runtime.h"))
	require.NoError(t, err)
	assert.Equal(t, nvrtcHeaders()["hip/hip_runtime.h"], string(data))
	assert.Contains(t, last, "-D__HIP_PLATFORM_NVIDIA__")
}

// With no HIP headers installed, nvcc builds with rocmk's.
func TestImageNVCCWithoutHIPHeaders(t *testing.T) {
	nvcc, _, _ := nvidiaSetup(t)
	run := &imageRunner{version: "release 12.6"}
	ib := &ImageBuilder{Run: run, Getenv: func(k string) string { return map[string]string{"NVCC": nvcc}[k] },
		HIPInclude: t.TempDir(), NVRTC: &fakeNVRTC{id: "12.6"}, TreeRoot: t.TempDir()}
	img, err := ib.Build(context.Background(), NVIDIA, "sm_80", "k.hip", []byte("k"))
	require.NoError(t, err)
	assert.Equal(t, "nvcc-rocmk", img.Compiler)
	assert.Equal(t, "cubin from nvcc release 12.6", string(img.Data))
}

// $NVCC naming no executable is said once; nvcc is then looked for
// elsewhere. A wrapper named by $NVCC is the nvcc run.
func TestImageNVCCEnv(t *testing.T) {
	var warnings []string
	bad := filepath.Join(t.TempDir(), "no-nvcc")
	ib := &ImageBuilder{Getenv: func(k string) string { return map[string]string{"NVCC": bad}[k] },
		Warn: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }}
	ib.findNVCC()
	ib.findNVCC()
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "NVCC="+bad+" is not an executable file")
	nvcc, _, _ := nvidiaSetup(t)
	ib = &ImageBuilder{Getenv: func(k string) string { return map[string]string{"NVCC": nvcc}[k] }}
	assert.Equal(t, nvcc, ib.findNVCC())
}

// A file of a translated tree is compiled in the tree, with its include
// directories (relative to it: keys do not name where the tree is); NVRTC
// gets them absolute. Another tree (a header changed) is another image.
func TestImageTreeSource(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"k/k.cu": "#include \"u.cuh\"\n__global__ void k() {}\n", "k/u.cuh": "#define U 1\n"})
	mk := func() *Tree {
		tr, err := TranslateTree(TreeRequest{Sources: []string{filepath.Join(dir, "k", "k.cu")}})
		require.NoError(t, err)
		require.NoError(t, tr.Place(filepath.Join(dir, "trees")))
		return tr
	}
	tr := mk()
	src := ImageSource{Name: "k.cu", Data: tr.File(filepath.Join(dir, "k", "k.cu")).Data, Tree: tr, Rel: tr.Sources[0]}

	nvcc, _, getenv := nvidiaSetup(t)
	_ = nvcc
	run := &imageRunner{version: "release 12.6"}
	_, store := openTestCache(t)
	ib := &ImageBuilder{Run: run, Cache: store, Getenv: getenv, TreeRoot: t.TempDir()}
	_, err := ib.BuildSource(context.Background(), NVIDIA, "sm_90", src)
	require.NoError(t, err)
	c := run.cmds[0]
	assert.Equal(t, tr.Dir, c.Dir)
	assert.Contains(t, c.Argv, "-Isrc")
	assert.Contains(t, c.Argv, "-Irocmk")
	assert.Contains(t, c.Argv, "--expt-relaxed-constexpr", "HIP code calls constexpr host functions (std::min) on the device")
	assert.Equal(t, filepath.Join("src", "k.cu"), c.Argv[len(c.Argv)-1])

	nv := &fakeNVRTC{id: "12.6"}
	ib = &ImageBuilder{Run: run, Cache: store, Getenv: func(string) string { return "" }, NVRTC: nv, NoNVCC: true}
	img, err := ib.BuildSource(context.Background(), NVIDIA, "sm_90", src)
	require.NoError(t, err)
	assert.False(t, img.Cached)
	assert.Equal(t, tr.Path("src/k.cu"), nv.name)
	assert.Contains(t, nv.opts, "-I"+tr.Path("src"))
	assert.Contains(t, nv.opts, "-I"+tr.Path("rocmk"))
	img, err = ib.BuildSource(context.Background(), NVIDIA, "sm_90", src)
	require.NoError(t, err)
	assert.True(t, img.Cached)
	writeFiles(t, dir, map[string]string{"k/u.cuh": "#define U 2\n"})
	tr2 := mk()
	src.Tree, src.Rel = tr2, tr2.Sources[0]
	img, err = ib.BuildSource(context.Background(), NVIDIA, "sm_90", src)
	require.NoError(t, err)
	assert.False(t, img.Cached, "a changed header is another image")
}

func TestImageOtherRuntimes(t *testing.T) {
	ib := &ImageBuilder{}
	img, err := ib.Build(context.Background(), Host, "sm_90", "x.hip", []byte("src"))
	require.NoError(t, err)
	assert.Equal(t, Image{Data: []byte("src"), Compiler: "host"}, img)
	_, err = ib.Build(context.Background(), Platform(0), "x", "x.hip", nil)
	assert.ErrorContains(t, err, "no image builder for unknown platform")
	_, err = (&ImageBuilder{NoNVCC: true}).Build(context.Background(), NVIDIA, "sm_90", "x.hip", nil)
	assert.ErrorIs(t, err, toolchain.ErrToolchainNotFound, "no nvcc and no NVRTC")
}

// An nvcc that cannot even say its version is given up for the run with
// one warning.
func TestImageNVCCWithoutVersionFallsBackOnce(t *testing.T) {
	_, _, getenv := nvidiaSetup(t)
	var warnings []string
	ib := &ImageBuilder{Run: failingRunner{}, Getenv: getenv, NVRTC: &fakeNVRTC{id: "13.0"},
		Warn: func(f string, a ...any) { warnings = append(warnings, f) }}
	for _, mod := range []string{"binary.hip", "unary.hip"} {
		img, err := ib.Build(context.Background(), NVIDIA, "sm_90", mod, []byte(mod))
		require.NoError(t, err)
		assert.Equal(t, "nvrtc", img.Compiler)
	}
	assert.Len(t, warnings, 1)
}

type failingRunner struct{}

func (failingRunner) Run(context.Context, runner.Cmd) (runner.Output, error) {
	return runner.Output{}, errors.New("exec format error")
}
