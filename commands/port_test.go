package commands

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/verify"
)

var portData = filepath.Join("..", "testdata", "port")

// requirePortToolchain skips when no AMD toolchain is installed (CI
// installs Debian's clang-15 and ROCm device libraries).
func requirePortToolchain(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real compiler: the full lane (make test)")
	}
	if _, err := toolchain.FindInstallation(toolchain.FindOptions{}); err != nil {
		t.Skipf("no ROCm toolchain: %v", err)
	}
}

// portEnv is a test Env whose cache is a temp dir.
func portEnv(t *testing.T) Env {
	return testEnv(map[string]string{"ROCMK_CACHE_DIR": t.TempDir()})
}

type portJSON struct {
	Schema  string `json:"schema"`
	OK      bool   `json:"ok"`
	Sources []struct {
		File     string `json:"file"`
		Hipified bool   `json:"hipified"`
		Builds   []struct {
			Target, Status, Error string
		} `json:"builds"`
	} `json:"sources"`
	Kernels []struct {
		Spec     string   `json:"spec"`
		Symbol   string   `json:"symbol"`
		Status   string   `json:"status"`
		Error    string   `json:"error"`
		Built    []string `json:"built_for"`
		Checked  bool     `json:"metadata_checked"`
		Verified bool     `json:"verified"`
		Hazards  int      `json:"hazards"`
	} `json:"kernels"`
}

// TestPortTranslationsBuildForGfx90a hipifies the six CUDA test kernels,
// builds the translations for gfx90a with the real toolchain and checks
// every spec against the code object's metadata (symbols, template
// instances, argument count and kinds).
func TestPortTranslationsBuildForGfx90a(t *testing.T) {
	requirePortToolchain(t)
	symbols := map[string]string{
		"gelu_tanh": "gelu_tanh", "binary_mul_strided": "binary_mul_strided", "block_sum": "block_sum",
		"softmax_rows": "softmax_rows", "scale_f32x4": "_Z5scaleIfLi4EEvPT_PKS0_S0_i",
		"scale_f64x2": "_Z5scaleIdLi2EEvPT_PKS0_S0_i", "axpby": "axpby",
	}
	seen := 0
	for _, name := range []string{"elementwise", "strided", "reduce", "softmax", "template", "scalar"} {
		t.Run(name, func(t *testing.T) {
			r := runRocmk(t, portEnv(t), "port", filepath.Join(portData, name+".cu"),
				"--spec", filepath.Join(portData, name+".toml"), "--arch", "gfx90a", "--no-verify", "--json")
			require.Equal(t, 0, r.Code, r.Stderr)
			var doc portJSON
			require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
			assert.Equal(t, "rocmk.port/v1", doc.Schema)
			assert.True(t, doc.OK)
			require.Len(t, doc.Sources, 1)
			assert.True(t, doc.Sources[0].Hipified)
			require.Len(t, doc.Sources[0].Builds, 1)
			assert.Equal(t, "gfx90a", doc.Sources[0].Builds[0].Target)
			assert.Contains(t, []string{"compiled", "hit"}, doc.Sources[0].Builds[0].Status)
			require.NotEmpty(t, doc.Kernels)
			for _, k := range doc.Kernels {
				assert.Equal(t, "built", k.Status, k.Error)
				assert.Equal(t, []string{"gfx90a"}, k.Built)
				assert.True(t, k.Checked, "%s: metadata checked", k.Spec)
				assert.False(t, k.Verified)
				assert.Equal(t, symbols[k.Spec], k.Symbol, k.Spec)
				seen++
			}
		})
	}
	assert.Equal(t, 7, seen, "seven specs over six kernels")
}

// TestPortMultiFileProject: `rocmk verify --spec` (every source) and `rocmk
// port` (one source) on the multi-file ML project translate each source
// with its headers into a tree, build it for gfx90a with the real
// toolchain, and check all 49 specs against the code objects' metadata;
// each code object has every kernel its CUDA source defines for sm_80.
func TestPortMultiFileProject(t *testing.T) {
	requirePortToolchain(t)
	if testing.Short() {
		t.Skip("builds three sources with clang")
	}
	dir := filepath.Join(portData, "mlkernels")
	env := portEnv(t)
	r := runRocmk(t, env, "port", filepath.Join(dir, "reduce.cu"), "--spec", filepath.Join(dir, "mlkernels.toml"), "--arch", "gfx90a", "--no-verify", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		portJSON
		Sources []struct {
			Tree   string                 `json:"tree"`
			Parity []compile.KernelParity `json:"kernel_parity"`
		} `json:"sources"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Len(t, doc.portJSON.Kernels, 9)
	for _, k := range doc.portJSON.Kernels {
		assert.True(t, k.Checked, "%s: %s", k.Spec, k.Error)
	}
	require.Len(t, doc.Sources, 1)
	assert.FileExists(t, filepath.Join(doc.Sources[0].Tree, "src", "cuda_utils.cuh"))
	assert.FileExists(t, filepath.Join(doc.Sources[0].Tree, "src", "compatibility.cuh"))
	require.Len(t, doc.Sources[0].Parity, 1)
	assert.Equal(t, compile.KernelParity{Source: doc.Sources[0].Parity[0].Source, Target: "gfx90a", CUDAArch: 800, Defined: 9, Found: 9, Missing: []string{}},
		doc.Sources[0].Parity[0])

	// the C and C++ headers kernels include (NVRTC gets rocmk's; on the H100: scripts/gpu-check-trees.sh)
	libc := filepath.Join(portData, "libc")
	r = runRocmk(t, env, "port", filepath.Join(libc, "libc.cu"), "--spec", filepath.Join(libc, "libc.toml"), "--arch", "gfx90a", "--no-verify")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "libc_check: translated with 0 hazards; built for gfx90a; metadata ok")
}

// TestPortIncludeDirs: a source that includes a header through -I builds
// with port -I (and verify --spec -I), and fails to build without it.
func TestPortIncludeDirs(t *testing.T) {
	requirePortToolchain(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/fill.cu":             "#include <lib/value.cuh>\nextern \"C\" __global__ void fill(float *y, int n) { int i = threadIdx.x; if (i < n) y[i] = VALUE; }\n",
		"include/lib/value.cuh": "#pragma once\n#define VALUE 2.5f\n",
		"k/fill.toml": "[[verify]]\nsource = \"fill.cu\"\nkernel = \"fill\"\nsizes = { n = 64 }\ngrid = 1\nblock = 64\n" +
			"args = [{ name = \"y\", dtype = \"f32\", count = \"n\", output = true }, { name = \"n\", dtype = \"i32\" }]\nreference = [\"y[i] = 2.5\"]\n",
	})
	src, spec := filepath.Join(dir, "k", "fill.cu"), filepath.Join(dir, "k", "fill.toml")
	r := runRocmk(t, portEnv(t), "port", src, "--spec", spec, "--arch", "gfx90a", "--no-verify")
	assert.Equal(t, ExitFailure, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "'lib/value.cuh' file not found")
	r = runRocmk(t, portEnv(t), "port", src, "--spec", spec, "--arch", "gfx90a", "--no-verify", "-I", filepath.Join(dir, "include"))
	assert.Equal(t, ExitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "fill: translated with 0 hazards; built for gfx90a; metadata ok")
	// verify --spec -I: the header is in the source's tree
	for _, withI := range []bool{false, true} {
		args := []string{"verify", "--spec", spec, "--json"}
		if withI {
			args = append(args, "-I", filepath.Join(dir, "include"))
		}
		r = runRocmk(t, portFakeEnv(t, openPortFake), args...)
		var doc struct {
			Sources []struct {
				Tree string `json:"tree"`
			} `json:"sources"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stderr)
		require.Len(t, doc.Sources, 1)
		_, err := os.Stat(filepath.Join(doc.Sources[0].Tree, "src", "include", "lib", "value.cuh"))
		assert.Equal(t, withI, err == nil, "-I given: %v", withI)
	}
}

// TestPortSpecErrorsAgainstCodeObject checks the messages for specs that
// only the code object can prove wrong: each testdata/port/bad/meta_*.toml
// has its expected message in the .msg file beside it.
func TestPortSpecErrorsAgainstCodeObject(t *testing.T) {
	requirePortToolchain(t)
	files, err := filepath.Glob(filepath.Join(portData, "bad", "meta_*.toml"))
	require.NoError(t, err)
	require.Len(t, files, 5)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src := map[string]string{"meta_arg_type.toml": "scalar.cu", "meta_arg_kind.toml": "scalar.cu",
				"meta_template_instance.toml": "template.cu"}[filepath.Base(path)]
			if src == "" {
				src = "elementwise.cu"
			}
			r := runRocmk(t, portEnv(t), "port", filepath.Join(portData, src), "--spec", path, "--arch", "gfx90a", "--no-verify")
			assert.Equal(t, ExitFailure, r.Code)
			msg := strings.TrimPrefix(strings.TrimSpace(r.Stderr[strings.LastIndex(r.Stderr, "rocmk: "):]), "rocmk: ")
			msg = strings.ReplaceAll(msg, filepath.ToSlash(portData)+"/", "")
			want, err := os.ReadFile(strings.TrimSuffix(path, ".toml") + ".msg")
			if *update {
				require.NoError(t, os.WriteFile(strings.TrimSuffix(path, ".toml")+".msg", []byte(msg+"\n"), 0o644))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSpace(string(want)), msg)
			assert.Contains(t, r.Stdout, "error: ", "the verdict says what is wrong")
		})
	}
}

// portFakeGPU is a verify.Runtime whose memory is Go slices and whose kernels
// are Go functions, so the port pipeline (build image, load, resolve,
// launch, copy back, compare, report, exit code) runs without a GPU.
type portFakeGPU struct {
	mem     map[verify.DevPtr][]byte
	next    verify.DevPtr
	kernels map[string]func(g *portFakeGPU, grid, block verify.Dim3, args []verify.Arg)
}

func newPortFakeGPU() *portFakeGPU {
	g := &portFakeGPU{mem: map[verify.DevPtr][]byte{}, next: 0x10000}
	g.kernels = map[string]func(*portFakeGPU, verify.Dim3, verify.Dim3, []verify.Arg){
		// gelu_tanh from testdata/port/elementwise.cu, in float32, grid-stride.
		"gelu_tanh": func(g *portFakeGPU, grid, block verify.Dim3, args []verify.Arg) {
			x, y := g.mem[verify.DevPtr(args[0].Uint64())], g.mem[verify.DevPtr(args[1].Uint64())]
			n := int(int32(args[2].Uint64()))
			for i := 0; i < n; i++ {
				v := math.Float32frombits(binary.LittleEndian.Uint32(x[4*i:]))
				k := float32(0.7978845608028654)
				r := 0.5 * v * (1 + float32(math.Tanh(float64(k*(v+0.044715*v*v*v)))))
				binary.LittleEndian.PutUint32(y[4*i:], math.Float32bits(r))
			}
		},
	}
	return g
}

func (g *portFakeGPU) Name() string                      { return "fake" }
func (g *portFakeGPU) Devices() ([]verify.Device, error) { return []verify.Device{g.Device()}, nil }
func (g *portFakeGPU) Device() verify.Device {
	return verify.Device{Backend: "fake", Name: "Fake GPU", Arch: "go"}
}
func (g *portFakeGPU) Load([]byte) (verify.Module, error) { return portFakeModule{g}, nil }
func (g *portFakeGPU) Alloc(n int) (verify.DevPtr, error) {
	p := g.next
	g.mem[p] = make([]byte, n)
	g.next += verify.DevPtr(n+255) &^ 255
	return p, nil
}
func (g *portFakeGPU) Free(p verify.DevPtr) error              { delete(g.mem, p); return nil }
func (g *portFakeGPU) CopyIn(d verify.DevPtr, s []byte) error  { copy(g.mem[d], s); return nil }
func (g *portFakeGPU) CopyOut(d []byte, s verify.DevPtr) error { copy(d, g.mem[s]); return nil }
func (g *portFakeGPU) Memset(verify.DevPtr, byte, int) error   { return nil }
func (g *portFakeGPU) Synchronize(context.Context) error       { return nil }
func (g *portFakeGPU) Reset() error                            { return nil }
func (g *portFakeGPU) Close() error                            { return nil }

type portFakeModule struct{ g *portFakeGPU }

func (m portFakeModule) Launch(_ context.Context, kernel string, grid, block verify.Dim3, _ int, args ...verify.Arg) error {
	k, ok := m.g.kernels[kernel]
	if !ok {
		return fmt.Errorf("fake: no kernel %q", kernel)
	}
	k(m.g, grid, block, args)
	return nil
}
func (m portFakeModule) Time(context.Context, int, int, string, verify.Dim3, verify.Dim3, int, ...verify.Arg) (verify.Timing, error) {
	return verify.Timing{}, nil
}
func (m portFakeModule) Close() error { return nil }

// portFakeEnv is portEnv whose GPU is open.
func portFakeEnv(t *testing.T, open func(string, int, func(string) string) (verify.Runtime, error)) Env {
	env := portEnv(t)
	env.OpenRuntime = open
	return env
}

func openPortFake(string, int, func(string) string) (verify.Runtime, error) {
	return newPortFakeGPU(), nil
}

// TestPortOnFakeGPU runs the whole pipeline on the fake GPU: a spec that
// agrees with the kernel passes (exit 0), one whose reference disagrees is a
// mismatch (exit 3) reported with the index and both values.
func TestPortOnFakeGPU(t *testing.T) {
	for _, tc := range []struct {
		spec string
		code int
	}{{"elementwise.toml", ExitOK}, {"mismatch.toml", ExitMismatch}} {
		t.Run(tc.spec, func(t *testing.T) {
			r := runRocmk(t, portFakeEnv(t, openPortFake), "port", filepath.Join(portData, "elementwise.cu"), "--spec", filepath.Join(portData, tc.spec))
			assert.Equal(t, tc.code, r.Code, r.Stderr)
			r.Stdout = strings.ReplaceAll(r.Stdout, filepath.ToSlash(portData)+"/", "")
			golden(t, "port/"+strings.TrimSuffix(tc.spec, ".toml")+".golden", r.transcript())
		})
	}
	r := runRocmk(t, portFakeEnv(t, openPortFake), "port", filepath.Join(portData, "elementwise.cu"), "--spec", filepath.Join(portData, "mismatch.toml"), "--json")
	assert.Equal(t, ExitMismatch, r.Code)
	var doc struct {
		Kernels []struct {
			Result struct {
				Worst struct {
					Name       string  `json:"name"`
					Got        float64 `json:"worst_got"`
					Want       float64 `json:"worst_want"`
					Comparison struct {
						Worst      int `json:"worst_index"`
						Mismatches int `json:"mismatches"`
					} `json:"comparison"`
				} `json:"worst"`
			} `json:"result"`
		} `json:"kernels"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	w := doc.Kernels[0].Result.Worst
	assert.Equal(t, "y", w.Name)
	assert.Greater(t, w.Comparison.Mismatches, 0)
	assert.Greater(t, math.Abs(w.Got-w.Want), 1e-4)
	assert.Contains(t, r.Stderr, `"code":3`)
}

// TestPortWithoutGPU: no runtime library is an environment problem (exit
// 4), after translating and building what it can.
func TestPortWithoutGPU(t *testing.T) {
	env := portFakeEnv(t, func(string, int, func(string) string) (verify.Runtime, error) {
		return nil, fmt.Errorf("%w: libcuda.so.1: cannot open shared object file", verify.ErrRuntimeUnavailable)
	})
	r := runRocmk(t, env, "port", filepath.Join(portData, "scalar.cu"), "--spec", filepath.Join(portData, "scalar.toml"))
	assert.Equal(t, ExitEnvMissing, r.Code)
	assert.Contains(t, r.Stdout, "axpby: translated with 0 hazards; not run (no GPU)")
	assert.Contains(t, r.Stderr, "libcuda.so.1")
}

func TestPortUsage(t *testing.T) {
	r := runRocmk(t, portEnv(t), "port", filepath.Join(portData, "scalar.cu"))
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "port needs --spec")
	r = runRocmk(t, portEnv(t), "port", filepath.Join(portData, "scalar.cu"), "--spec", filepath.Join(portData, "softmax.toml"))
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "no spec in")
	r = runRocmk(t, portEnv(t), "port", filepath.Join(portData, "scalar.cu"), "--spec", filepath.Join(portData, "scalar.toml"), "--bogus")
	assert.Equal(t, ExitUsage, r.Code)
	r = runRocmk(t, portEnv(t), "port", filepath.Join(portData, "scalar.cu"), "--spec", filepath.Join(portData, "scalar.toml"), "--arch", "gfx9999")
	assert.Equal(t, ExitUsage, r.Code)
}

// TestVerifySpecOnFakeGPU is what `rocmk verify --spec` runs: every spec of
// the file, sources resolved against the spec's directory.
func TestVerifySpecOnFakeGPU(t *testing.T) {
	var out, errb strings.Builder
	env := portFakeEnv(t, openPortFake)
	env.Stdout, env.Stderr = &out, &errb
	err := runVerifySpec(context.Background(), verifySpecOptions{Spec: filepath.Join(portData, "elementwise.toml")}, env.withDefaults(), globalOptions{Jobs: 1})
	require.NoError(t, err, errb.String())
	assert.Contains(t, out.String(), "gelu_tanh: translated with 0 hazards; verified on Fake GPU (go): pass")

	out.Reset()
	err = runVerifySpec(context.Background(), verifySpecOptions{Spec: filepath.Join(portData, "mismatch.toml")}, env.withDefaults(), globalOptions{Jobs: 1})
	var me *verify.MismatchError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 1, me.Failed)
	assert.Equal(t, ExitMismatch, exitCode(err))
	assert.Regexp(t, `worst y\[\d+\]: got -?[0-9.e-]+ want -?[0-9.e-]+`, out.String())

	err = runVerifySpec(context.Background(), verifySpecOptions{Spec: filepath.Join(portData, "elementwise.toml"), Kernels: []string{"nope"}}, env.withDefaults(), globalOptions{Jobs: 1})
	assert.Equal(t, ExitUsage, exitCode(err))
}

func TestVerifySpecJSONSchema(t *testing.T) {
	var out strings.Builder
	env := portFakeEnv(t, openPortFake)
	env.Stdout = &out
	err := runVerifySpec(context.Background(), verifySpecOptions{Spec: filepath.Join(portData, "elementwise.toml")}, env.withDefaults(), globalOptions{Jobs: 1, JSON: true})
	require.NoError(t, err)
	var doc portJSON
	require.NoError(t, json.Unmarshal([]byte(out.String()), &doc), out.String())
	assert.Equal(t, "rocmk.verify-spec/v1", doc.Schema)
	assert.True(t, doc.OK)
	require.Len(t, doc.Kernels, 1)
	assert.True(t, doc.Kernels[0].Verified)
	assert.Equal(t, "pass", doc.Kernels[0].Status)
}

// TestPortVerboseAfterFile: -v written after FILE (parsed by port itself)
// shows the per-case lines.
func TestPortVerboseAfterFile(t *testing.T) {
	r := runRocmk(t, portFakeEnv(t, openPortFake), "port", filepath.Join(portData, "scalar.cu"), "--spec", filepath.Join(portData, "elementwise.toml"), "-k", "gelu_tanh", "-v")
	assert.Equal(t, ExitUsage, r.Code, "elementwise.toml has no spec for scalar.cu")
	r = runRocmk(t, portFakeEnv(t, openPortFake), "port", filepath.Join(portData, "elementwise.cu"), "--spec", filepath.Join(portData, "elementwise.toml"), "-v")
	assert.Equal(t, ExitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "elementwise.cu: device image by host")
	assert.Regexp(t, `gelu_tanh n=1000\s+ok \(reference`, r.Stderr)
}

// TestPortTargetsFromEnvironment: without --arch, ROCMK_ARCH (or
// rocmk.toml's targets) picks the AMD builds, as for rocmk build.
func TestPortTargetsFromEnvironment(t *testing.T) {
	ts, err := portTargets(nil, testEnv(map[string]string{"ROCMK_ARCH": "gfx90a;gfx942"}), nil)
	require.NoError(t, err)
	assert.Equal(t, "ROCMK_ARCH", ts.From)
	assert.Equal(t, "gfx90a,gfx942", ts.String())
	ts, err = portTargets(nil, testEnv(nil), nil)
	require.NoError(t, err)
	assert.Empty(t, ts.List, "nothing chosen: only the device build")
	assert.Empty(t, ts.From)
	ts, err = portTargets([]string{"gfx1030"}, testEnv(map[string]string{"ROCMK_ARCH": "gfx90a"}), nil)
	require.NoError(t, err)
	assert.Equal(t, "gfx1030", ts.String())
	assert.Equal(t, "--arch", ts.From)
	_, err = portTargets([]string{"gfx9999"}, testEnv(nil), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--arch")
	assert.Equal(t, ExitUsage, exitCode(err))
}

// TestVerifySpecFlag goes through the command line: verify --spec reaches
// runVerifySpec, a mismatching spec exits 3.
func TestVerifySpecFlag(t *testing.T) {
	env := portFakeEnv(t, openPortFake)
	r := runRocmk(t, env, "verify", "--spec", filepath.Join(portData, "elementwise.toml"), "-j", "1")
	assert.Equal(t, ExitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "gelu_tanh: translated with 0 hazards; verified on Fake GPU (go): pass")
	r = runRocmk(t, env, "verify", "--spec", filepath.Join(portData, "mismatch.toml"))
	assert.Equal(t, ExitMismatch, r.Code, r.Stderr)
}

// countVersions counts `--version` runs of a Runner: toolchain discovery
// and the toolchain's identity each run the compiler once.
type countVersions struct {
	runner.Runner
	mu sync.Mutex
	n  int
}

func (c *countVersions) Run(ctx context.Context, cmd runner.Cmd) (runner.Output, error) {
	if len(cmd.Argv) == 2 && cmd.Argv[1] == "--version" {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return c.Runner.Run(ctx, cmd)
}

// A port run builds for --arch and for the device through one session:
// the toolchain is found once (it was found twice, by the AMD build and by
// the device image builder, each running clang --version).
func TestPortFindsTheToolchainOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fake compiler is a shell script")
	}
	root := t.TempDir()
	fakeROCm(t, root, "ROCm 5.2.3")
	env := testEnv(map[string]string{"ROCM_PATH": root, "ROCMK_CACHE_DIR": t.TempDir()})
	run := &countVersions{Runner: runner.ExecRunner{}}
	env.Runner = run
	fake := verify.NewFakeRuntime()
	fake.Dev.Backend, fake.Dev.Arch = "hip", "gfx90a"
	env.OpenRuntime = func(string, int, func(string) string) (verify.Runtime, error) { return hipFake{fake}, nil }
	r := runRocmk(t, env, "port", filepath.Join(portData, "scalar.cu"), "--spec", filepath.Join(portData, "scalar.toml"), "--arch", "gfx90a", "-v")
	assert.Contains(t, r.Stderr, "device image by clang", "built for the device through the toolchain")
	assert.Equal(t, 2, run.n, "one --version to find the toolchain, one for its identity:\n%s", r.Stderr)
}

// A sweep of the largest size a spec may have (100,000 cases) runs case by
// case; port once expanded every case first and refused it. The run is
// interrupted after a few launches.
func TestPortRunsLargeSweepsLazily(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(portData, "elementwise.cu"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "elementwise.cu"), src, 0o644))
	ns := strings.Repeat("1, ", 99999) + "2"
	toml := `[[verify]]
kernel = "gelu_tanh"
source = "elementwise.cu"
sizes = { n = [` + ns + `] }
grid = 1
block = 256
args = [
  { name = "x", dtype = "f32", count = "n", init = { random = { seed = 7, min = -6, max = 6 } } },
  { name = "y", dtype = "f32", count = "n", output = true },
  { name = "n", dtype = "i32", value = "n" },
]
reference = ["y[i] = 0.5 * x[i] * (1 + tanh(sqrt(2 / 3.141592653589793) * (x[i] + 0.044715 * x[i] ** 3)))"]
tolerance = { y = { atol = 1e-5, rtol = 1e-5 } }
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.toml"), []byte(toml), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := newPortFakeGPU()
	gelu, launches := g.kernels["gelu_tanh"], 0
	g.kernels["gelu_tanh"] = func(g *portFakeGPU, grid, block verify.Dim3, args []verify.Arg) {
		gelu(g, grid, block, args)
		if launches++; launches == 3 {
			cancel()
		}
	}
	env := portFakeEnv(t, func(string, int, func(string) string) (verify.Runtime, error) { return g, nil })
	env.Context = ctx
	r := runRocmk(t, env, "port", filepath.Join(dir, "elementwise.cu"), "--spec", filepath.Join(dir, "big.toml"))
	assert.Equal(t, ExitInterrupted, r.Code, r.Stderr)
	assert.GreaterOrEqual(t, launches, 3, "cases ran")
	assert.NotContains(t, r.Stderr, "over the 100000")
	assert.Contains(t, r.Stderr, "running 100000 case(s)")
}
