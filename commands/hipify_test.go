package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cudaSrc = `#include <cuda_runtime.h>
#define WARP_SIZE 32
// cudaMalloc in a comment stays
__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }
int main() {
  float *d;
  cudaMalloc(&d, 4);
  k<<<1, WARP_SIZE>>>(d);
  cudaDeviceSynchronize();
  return 0;
}
`

type hipifyRun struct {
	code           int
	stdout, stderr string
}

// runHipifyCmd runs `rocmk hipify args...` in-process, with ROCM_PATH
// pointing nowhere so the HIP version is the documented default unless
// --hip-version is given.
func runHipifyCmd(t *testing.T, args ...string) hipifyRun {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "ROCM_PATH" {
			return filepath.Join(t.TempDir(), "no-rocm")
		}
		return ""
	}}
	code := run(append([]string{"rocmk", "hipify"}, args...), env)
	return hipifyRun{code, out.String(), errb.String()}
}

func writeFile(t *testing.T, dir, name, data string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(data), mode))
	return p
}

func TestHipifyStdoutAndDiagnostics(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o644)
	r := runHipifyCmd(t, "--hip-version", "6.2", in)
	require.Equal(t, 0, r.code, r.stderr)
	golden(t, filepath.Join("hipify", "stdout.golden"), []byte(r.stdout))
	assert.Contains(t, r.stderr, in+":2:19: hazard: [warp-size] WARP_SIZE is defined as 32")
	assert.Contains(t, r.stdout, "// cudaMalloc in a comment stays")
	r = runHipifyCmd(t, "--hip-version", "6.2", "--quiet-warnings", in)
	assert.Empty(t, r.stderr)
}

// -o - is stdout, as the input - is stdin: no file named "-" appears,
// several inputs still need a directory, and --in-place still excludes it.
func TestHipifyOutputDashIsStdout(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o644)
	t.Chdir(dir)
	r := runHipifyCmd(t, "--hip-version", "6.2", "-o", "-", in)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "hipMalloc")
	assert.NoFileExists(t, filepath.Join(dir, "-"))
	other := writeFile(t, dir, "l.cu", cudaSrc, 0o644)
	r = runHipifyCmd(t, "-o", "-", in, other)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "need -o DIR")
	assert.NoFileExists(t, filepath.Join(dir, "-"))
	r = runHipifyCmd(t, "--in-place", "-o", "-", in) // still contradictory: the input is left alone
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--in-place and -o are exclusive")
	data, err := os.ReadFile(in)
	require.NoError(t, err)
	assert.Equal(t, cudaSrc, string(data))
}

func TestHipifyCheck(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o644)
	r := runHipifyCmd(t, "--check", "-q", in)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, in+"\n", r.stdout)
	data, _ := os.ReadFile(in)
	assert.Equal(t, cudaSrc, string(data), "--check writes nothing")

	out := filepath.Join(dir, "k.hip")
	require.Equal(t, 0, runHipifyCmd(t, "-q", "-o", out, in).code)
	r = runHipifyCmd(t, "--check", "-q", out)
	assert.Equal(t, 0, r.code, "translated output is clean (idempotent)")
	assert.Empty(t, r.stdout)

	// an unsupported API left in place also fails --check
	bad := writeFile(t, dir, "u.hip", "#include <hip/hip_runtime.h>\nvoid f() { cudaInitDevice(0, 0, 0); }\n", 0o644)
	r = runHipifyCmd(t, "--check", bad)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, bad+":2:12: unsupported: cudaInitDevice has no HIP equivalent")
}

func TestHipifyDiff(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o644)
	r := runHipifyCmd(t, "--diff", "-q", in)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "--- a/"+strings.TrimPrefix(in, "/"))
	assert.Contains(t, r.stdout, "-#include <cuda_runtime.h>\n")
	assert.Contains(t, r.stdout, "+#include <hip/hip_runtime.h>\n")
	assert.Contains(t, r.stdout, "+  hipMalloc(&d, 4);\n")
	assert.Contains(t, r.stdout, "\n // cudaMalloc in a comment stays\n", "the comment is an unchanged context line")
}

func TestHipifyInPlace(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o640)
	r := runHipifyCmd(t, "--in-place", "--backup", ".orig", "-q", in)
	require.Equal(t, 0, r.code, r.stderr)
	got, err := os.ReadFile(in)
	require.NoError(t, err)
	assert.Contains(t, string(got), "hipMalloc(&d, 4);")
	orig, err := os.ReadFile(in + ".orig")
	require.NoError(t, err)
	assert.Equal(t, cudaSrc, string(orig))
	fi, err := os.Stat(in)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "mode preserved")
	left, _ := filepath.Glob(filepath.Join(dir, ".*rocmk-*"))
	assert.Empty(t, left, "no temp files left")

	// hipify-clang/perl spelling: -inplace keeps a .prehip backup
	in2 := writeFile(t, dir, "k2.cu", cudaSrc, 0o644)
	require.Equal(t, 0, runHipifyCmd(t, "-inplace", "-q", in2).code)
	_, err = os.Stat(in2 + ".prehip")
	assert.NoError(t, err)
}

func TestHipifyInPlaceLosesNothing(t *testing.T) {
	dir := t.TempDir()
	ro := writeFile(t, dir, "ro.cu", cudaSrc, 0o444)
	r := runHipifyCmd(t, "--in-place", "-q", ro)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "read-only")
	got, err := os.ReadFile(ro)
	require.NoError(t, err)
	assert.Equal(t, cudaSrc, string(got), "read-only file untouched")

	gone := filepath.Join(dir, "vanished.cu")
	r = runHipifyCmd(t, "--in-place", gone)
	assert.Equal(t, 1, r.code)
	_, err = os.Stat(gone)
	assert.True(t, os.IsNotExist(err), "nothing created for a vanished file")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temp or backup files")

	// a write that fails (directory not writable) leaves the original intact
	if os.Geteuid() != 0 {
		sub := filepath.Join(dir, "locked")
		f := writeFile(t, sub, "k.cu", cudaSrc, 0o644)
		require.NoError(t, os.Chmod(sub, 0o555))
		defer os.Chmod(sub, 0o755)
		assert.Equal(t, 1, runHipifyCmd(t, "--in-place", "-q", f).code)
		got, _ = os.ReadFile(f)
		assert.Equal(t, cudaSrc, string(got))
	}
}

func TestHipifyTreeAndJSON(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, "a.cu", cudaSrc, 0o644)
	writeFile(t, src, "inc/b.cuh", "#pragma once\n__device__ float f(float x) { return __expf(x); }\n", 0o644)
	writeFile(t, src, "c.cpp", "#include <cublas_v2.h>\nvoid g(cublasHandle_t h) { cublasCreate(&h); }\n", 0o644)
	writeFile(t, src, "notes.txt", "cudaMalloc", 0o644)
	out := filepath.Join(dir, "out")
	r := runHipifyCmd(t, src, "-o", out, "--rename", ".cu=.hip", "-j", "2", "--json", "--hip-version", "6.2")
	require.Equal(t, 0, r.code, r.stderr)
	for _, p := range []string{"a.hip", "inc/b.cuh", "c.cpp"} {
		_, err := os.Stat(filepath.Join(out, p))
		assert.NoError(t, err, p)
	}
	_, err := os.Stat(filepath.Join(out, "notes.txt"))
	assert.True(t, os.IsNotExist(err), "only sources are translated")
	c, _ := os.ReadFile(filepath.Join(out, "c.cpp"))
	assert.Equal(t, "#include <hip/hip_runtime.h>\n#include <hipblas/hipblas.h>\nvoid g(hipblasHandle_t h) { hipblasCreate(&h); }\n", string(c))

	var doc struct {
		Schema     string `json:"schema"`
		HIPVersion string `json:"hip_version"`
		Files      []struct {
			File     string         `json:"file"`
			Replaced map[string]int `json:"replaced"`
			Output   string         `json:"output_path"`
		} `json:"files"`
		Total struct {
			Files, Changed, Lines, Replacements int
			Replaced                            map[string]int
		} `json:"total"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Equal(t, "rocmk.hipify/v1", doc.Schema)
	assert.Equal(t, "6.2.0", doc.HIPVersion)
	assert.Equal(t, 3, doc.Total.Files)
	assert.Equal(t, 3, doc.Total.Changed)
	assert.Equal(t, 2, doc.Total.Replaced["blas"])
	assert.Len(t, doc.Files, 3)
	assert.NotContains(t, r.stdout, "\x1b[", "no escape bytes in JSON")

	// a directory without -o is a usage error
	assert.Equal(t, 2, runHipifyCmd(t, src).code)
}

func TestHipifyCompatibleSpellings(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc+"#include <cublas_v2.h>\n", 0o644)
	out := filepath.Join(dir, "k.hip")
	// hipify-perl: single dash, -o=FILE; hipify-clang: options after the input
	r := runHipifyCmd(t, "-roc", "-o="+out, in, "--hip-kernel-execution-syntax", "-quiet-warnings")
	require.Equal(t, 0, r.code, r.stderr)
	got, _ := os.ReadFile(out)
	assert.Contains(t, string(got), "rocblas.h>", "rocblas/rocblas.h (HIP >= 6) or rocblas.h")
	assert.Contains(t, string(got), "hipLaunchKernelGGL(k, dim3(1), dim3(WARP_SIZE), 0, 0, d);")
	r = runHipifyCmd(t, in, "-D", "FOO=1", "--skip-excluded-preprocessor-conditional-blocks", "-experimental", "-amap", "-print-stats")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "TOTAL", "stats go to stderr when the translation is on stdout")
	assert.Equal(t, 2, runHipifyCmd(t, in, "--no-such-flag").code)
	assert.Equal(t, 2, runHipifyCmd(t, "--hip-version", "six", in).code)
	assert.Equal(t, 2, runHipifyCmd(t).code, "no input")
}

func TestHipifyBadInput(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "bin.cu", "ab\x00\x01\x02", 0o644)
	r := runHipifyCmd(t, bin)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, bin+":1:3: binary data (NUL byte); not a CUDA source")
	// Latin-1 is translated as bytes, alone and in a tree (never dropped)
	tree := filepath.Join(dir, "tree")
	lat := writeFile(t, tree, "l.cuh", "int x;\n// caf\xe9\nvoid f(void *p) { cudaFree(p); }\n", 0o644)
	r = runHipifyCmd(t, lat)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "// caf\xe9\nvoid f(void *p) { hipFree(p); }")
	out := filepath.Join(dir, "out")
	r = runHipifyCmd(t, tree, "-o", out)
	require.Equal(t, 0, r.code, r.stderr)
	got, err := os.ReadFile(filepath.Join(out, "l.cuh"))
	require.NoError(t, err)
	assert.Contains(t, string(got), "// caf\xe9\nvoid f(void *p) { hipFree(p); }")
}

func TestHipifySampleAndDefaultVersion(t *testing.T) {
	dir := t.TempDir()
	r := runHipifyCmd(t, "--sample", "-o", dir, "--stats")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "candle_ops.cu")
	assert.Contains(t, r.stdout, "TOTAL")
	got, err := os.ReadFile(filepath.Join(dir, "candle_ops.hip"))
	require.NoError(t, err)
	assert.Contains(t, string(got), "__shfl_xor(v, offset)")
	assert.Contains(t, r.stderr, "[sync-mask]")

	r = runHipifyCmd(t, "--sample", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.Equal(t, "6.3.0", doc["hip_version"], "no toolchain: the documented default")
	files := doc["files"].([]any)
	assert.Contains(t, files[0].(map[string]any)["content"], "#include <hip/hip_runtime.h>")
}

// BenchmarkHipifyTree translates a tree of 64 realistic files with one
// worker and with one per CPU, writing a mirrored tree (-o DIR) or only
// checking (--check), reporting lines/s: tree mode scales with cores.
func BenchmarkHipifyTree(b *testing.B) {
	srcs, err := filepath.Glob(filepath.Join("..", "testdata", "hipify", "cuda", "*.cu"))
	require.NoError(b, err)
	dir := b.TempDir()
	lines := 0
	for i := 0; i < 64; i++ {
		data, err := os.ReadFile(srcs[i%len(srcs)])
		require.NoError(b, err)
		lines += bytes.Count(data, []byte("\n"))
		p := filepath.Join(dir, "src", "d"+string(rune('a'+i%8)), filepath.Base(srcs[i%len(srcs)])+string(rune('a'+i/8))+".cu")
		require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(b, os.WriteFile(p, data, 0o644))
	}
	for _, mode := range []string{"write", "check"} {
		for _, j := range []int{1, runtime.NumCPU()} {
			b.Run(mode+"/j="+strconv.Itoa(j), func(b *testing.B) {
				args := []string{"rocmk", "hipify", "-q", "--quiet-warnings", "--hip-version", "6.2", "-j", strconv.Itoa(j), filepath.Join(dir, "src")}
				want := 0
				if mode == "write" {
					args = append(args, "-o", filepath.Join(dir, "out"))
				} else {
					args = append(args, "--check")
					want = 1 // every file needs hipify
				}
				for i := 0; i < b.N; i++ {
					if code := run(args, Env{}); code != want {
						b.Fatalf("exit %d", code)
					}
				}
				b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
			})
		}
	}
}

const compatSrc = `#include <cuda_runtime.h>
#if __CUDA_ARCH__ >= 800
extern "C" __global__ void k(unsigned *u) { u[0] = __vsubss4(u[0], u[1]); }
#endif
`

// The compat header goes beside a single output, at the root of an output
// tree (included by a relative path), inline on stdout; never over a file
// of that name rocmk did not write.
func TestHipifyCompatHeader(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "src/a/k.cu", compatSrc, 0o644)
	writeFile(t, dir, "src/plain.cu", "int x;\n", 0o644)
	out := filepath.Join(dir, "one", "k.hip")
	r := runHipifyCmd(t, "--hip-version", "5.2", in, "-o", out)
	require.Equal(t, 0, r.code, r.stderr)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(got), "#define ROCMK_COMPAT_VSIMD 1\n#include \"rocmk_hip_compat.h\"\n")
	hdr, err := os.ReadFile(filepath.Join(dir, "one", "rocmk_hip_compat.h"))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(hdr, []byte("// rocmk_hip_compat.h: CUDA device APIs")))
	assert.Contains(t, r.stderr, "k.cu:2:1: conditional: [cuda-arch] `#if __CUDA_ARCH__ >= 800` -> `#if defined(__HIP_DEVICE_COMPILE__) /* __CUDA_ARCH__ >= 800 */`")

	// a tree: one header at the root, a relative include
	tree := filepath.Join(dir, "tree")
	r = runHipifyCmd(t, "--hip-version", "5.2", filepath.Join(dir, "src"), "-o", tree)
	require.Equal(t, 0, r.code, r.stderr)
	got, err = os.ReadFile(filepath.Join(tree, "a", "k.cu"))
	require.NoError(t, err)
	assert.Contains(t, string(got), "#include \"../rocmk_hip_compat.h\"\n")
	assert.FileExists(t, filepath.Join(tree, "rocmk_hip_compat.h"))
	assert.NoFileExists(t, filepath.Join(tree, "a", "rocmk_hip_compat.h"))

	// stdout: inlined, nothing written
	r = runHipifyCmd(t, "--hip-version", "5.2", in)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "// rocmk-compat: begin (rocmk_hip_compat.h inlined)\n// rocmk_hip_compat.h: CUDA device APIs")
	assert.NoFileExists(t, filepath.Join(dir, "src", "a", "rocmk_hip_compat.h"))

	// a user's file of that name: refused, output not written, exit 1
	mine := filepath.Join(dir, "mine")
	writeFile(t, mine, "rocmk_hip_compat.h", "// my own\n", 0o644)
	r = runHipifyCmd(t, "--hip-version", "5.2", in, "-o", filepath.Join(mine, "k.hip"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "was not written by rocmk: not overwritten")
	assert.NoFileExists(t, filepath.Join(mine, "k.hip"))
	data, err := os.ReadFile(filepath.Join(mine, "rocmk_hip_compat.h"))
	require.NoError(t, err)
	assert.Equal(t, "// my own\n", string(data))

	// a named pipe of that name is refused, never opened for reading (no hang)
	fifoDir := filepath.Join(dir, "fifo")
	require.NoError(t, os.MkdirAll(fifoDir, 0o755))
	mkfifo(t, filepath.Join(fifoDir, "rocmk_hip_compat.h"))
	r = runHipifyCmd(t, "--hip-version", "5.2", in, "-o", filepath.Join(fifoDir, "k.hip"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "was not written by rocmk")
	assert.NoFileExists(t, filepath.Join(fifoDir, "k.hip"))

	// --no-compat: nothing written, the name reported
	r = runHipifyCmd(t, "--hip-version", "5.2", "--no-compat", in, "-o", filepath.Join(dir, "nc", "k.hip"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(dir, "nc", "rocmk_hip_compat.h"))
	assert.Contains(t, r.stderr, "unsupported: __vsubss4 has no HIP equivalent")
}

// --stats counts the kernels of both sides and names the ones HIP drops.
func TestHipifyStatsKernelParity(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", compatSrc, 0o644)
	r := runHipifyCmd(t, "--hip-version", "5.2", "--stats", "-q", in, "-o", filepath.Join(dir, "k.hip"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `k\.cu\s+4\s+\d+\s+0\s+\d+\s+1/1`, r.stdout)
	assert.NotContains(t, r.stdout, "missing:")
	r = runHipifyCmd(t, "--hip-version", "5.2", "--stats", "-q", "--cuda-macros", "keep", in, "-o", filepath.Join(dir, "k2.hip"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `k\.cu\s+4\s+\d+\s+\d+\s+\d+\s+1/0`, r.stdout)
	assert.Contains(t, r.stdout, "missing: "+in+": kernel k is defined for CUDA sm_80 but not under HIP")
	r = runHipifyCmd(t, "--hip-version", "5.2", "--stats", "--json", "--cuda-arch", "sm_70", in, "-o", filepath.Join(dir, "k3.hip"))
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		Files []struct {
			Kernels      map[string]any   `json:"kernels"`
			Conditionals []map[string]any `json:"conditionals"`
			Compat       []string         `json:"compat"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.Len(t, doc.Files, 1)
	assert.Equal(t, float64(700), doc.Files[0].Kernels["cuda_arch"])
	assert.Empty(t, doc.Files[0].Kernels["cuda_device"], "sm_70 does not define k")
	assert.Len(t, doc.Files[0].Conditionals, 1)
	assert.Equal(t, []string{"vsimd"}, doc.Files[0].Compat)
	for _, bad := range [][]string{{"--cuda-macros", "drop"}, {"--cuda-arch", "gfx90a"}, {"--cuda-version", "twelve"}, {"--rocm-switch", "A-B"}} {
		assert.Equal(t, 2, runHipifyCmd(t, append(bad, in)...).code, bad)
	}
	// the project's ROCm switch: taken by default, named with --rocm-switch, none with none
	sw := filepath.Join(dir, "sw.cu")
	require.NoError(t, os.WriteFile(sw, []byte("#ifdef USE_ROCM\n#endif\n#ifdef MY_HIP\n#endif\n"), 0o644))
	r = runHipifyCmd(t, sw)
	assert.Equal(t, "#include <hip/hip_runtime.h>\n#if defined(USE_ROCM) || defined(__HIP__)\n#endif\n#ifdef MY_HIP\n#endif\n", r.stdout)
	assert.Contains(t, r.stderr, "sw.cu:1:1: conditional: [rocm-switch] `#ifdef USE_ROCM`")
	r = runHipifyCmd(t, "--rocm-switch", "MY_HIP", sw)
	assert.Equal(t, "#include <hip/hip_runtime.h>\n#ifdef USE_ROCM\n#endif\n#if defined(MY_HIP) || defined(__HIP__)\n#endif\n", r.stdout)
	r = runHipifyCmd(t, "--rocm-switch", "none", sw)
	assert.Equal(t, "#include <hip/hip_runtime.h>\n#ifdef USE_ROCM\n#endif\n#ifdef MY_HIP\n#endif\n", r.stdout)
}

// TestHipifyPrintsEachErrorOnce: issue 19 item 3, a file's error was
// printed by the per-file report and again as the command's error.
func TestHipifyPrintsEachErrorOnce(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "t/bin.cu", "int x;\x00\n", 0o644)
	bin2 := writeFile(t, dir, "t/bin2.cu", "\x00", 0o644)
	writeFile(t, dir, "t/ok.cu", cudaSrc, 0o644)
	ro := writeFile(t, dir, "ro.hip", "keep me\n", 0o444)
	src := writeFile(t, dir, "k.cu", cudaSrc, 0o644)
	missing := filepath.Join(dir, "missing.cu")
	for _, c := range []struct {
		name string
		args []string
		want []string // each exactly once on stderr
	}{
		{"binary file", []string{bin}, []string{bin + ":1:7: binary data"}},
		{"missing file", []string{missing}, []string{missing}},
		{"read-only output", []string{src, "-o", ro}, []string{ro + ": file is read-only; not modified"}},
		{"tree with two bad files", []string{filepath.Join(dir, "t"), "-o", filepath.Join(dir, "out")},
			[]string{bin + ":1:7: binary data", bin2 + ":1:1: binary data", "2 of 3 files failed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runHipifyCmd(t, append([]string{"-q"}, c.args...)...)
			assert.Equal(t, ExitFailure, r.code, r.stderr)
			for _, w := range c.want {
				assert.Equal(t, 1, strings.Count(r.stderr, w), "%q in:\n%s", w, r.stderr)
			}
		})
	}
	// --json: the document has the error, and stderr one exit_error line
	r := runHipifyCmd(t, "-q", "--json", bin)
	assert.Equal(t, ExitFailure, r.code)
	assert.Equal(t, 1, strings.Count(r.stderr, "binary data"), r.stderr)
	assert.Contains(t, r.stderr, `"message_type":"exit_error"`)
	assert.Contains(t, r.stdout, `"error": "`+bin+`:1:7: binary data`)
}

// TestHipifySizeLimitDocumented: issue 19 item 4, the source size limit in
// the code and in the docs must be one number.
func TestHipifySizeLimitDocumented(t *testing.T) {
	mib := fmt.Sprintf("%d MiB", maxSourceSize>>20)
	doc, err := os.ReadFile(filepath.Join("..", "docs", "hipify.md"))
	require.NoError(t, err)
	assert.Contains(t, string(doc), "of at most "+mib, "docs/hipify.md")
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	found := false
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.Contains(line, "`hipify` inputs and standard input") {
			found = true
			assert.Contains(t, line, "| "+mib+" |", "README's limits table")
		}
	}
	assert.True(t, found, "README's limits table has a row for hipify's inputs")
}
