package program

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify/outcmp"
)

// fakeNVCC is a compiler for the tests: it writes, at -o, a shell program
// whose body is $FAKE_ORIG for the original and $FAKE_HIP for the
// translation (built with -D__HIP_PLATFORM_NVIDIA__ or by hipcc), logs its
// argv, and fails like a compiler when $FAKE_FAIL names the side.
const fakeNVCC = `#!/bin/sh
side=ORIG; body="$FAKE_ORIG"
case "$0 $*" in *__HIP_PLATFORM_NVIDIA__*|*hipcc*) side=HIP; body="$FAKE_HIP";; esac
echo "$side $*" >> "$FAKE_LOG"
if [ "$FAKE_FAIL" = "$side" ]; then echo "prog.cu(3): error: identifier \"cudaNope\" is undefined" >&2; exit 2; fi
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
printf '#!/bin/sh\n%s\n' "$body" > "$out"
chmod +x "$out"
`

type fixture struct {
	dir, prog, log string
	tools          Toolchains
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir()}
	bin := filepath.Join(f.dir, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	for _, n := range []string{"nvcc", "hipcc"} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, n), []byte(fakeNVCC), 0o755))
	}
	f.prog = filepath.Join(f.dir, "prog")
	require.NoError(t, os.MkdirAll(filepath.Join(f.prog, "data"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.prog, "main.cu"), []byte(`#include <cublas_v2.h>
#include "util.h"
int main() { float *p; cudaMalloc(&p, 4); cudaDeviceSynchronize(); return 0; }
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.prog, "util.h"), []byte("#include <cuda_runtime.h>\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.prog, "host.cpp"), []byte("int helper() { return 1; }\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.prog, "data", "in.txt"), []byte("42\n"), 0o644))
	f.log = filepath.Join(f.dir, "argv.log")
	t.Setenv("FAKE_LOG", f.log)
	t.Setenv("FAKE_FAIL", "")
	f.tools = Toolchains{Platform: PlatformNVIDIA, Arch: "sm_90", Device: "NVIDIA Fake", NVCC: filepath.Join(bin, "nvcc")}
	return f
}

func (f *fixture) programs(t *testing.T, orig, hip string) {
	t.Setenv("FAKE_ORIG", orig)
	t.Setenv("FAKE_HIP", hip)
}

func (f *fixture) options(t *testing.T) Options {
	return Options{Program: f.prog, Args: []string{"7"}, Rules: outcmp.DefaultRules(), Timeout: 20 * time.Second,
		Work: t.TempDir(), Tools: f.tools}
}

func (f *fixture) argv(t *testing.T) string {
	b, err := os.ReadFile(f.log)
	require.NoError(t, err)
	return string(b)
}

func TestSameResultOnNVIDIA(t *testing.T) {
	f := newFixture(t)
	// both read the data file from their working directory and the argument
	prog := `echo "$0 arg $1 data $(cat data/in.txt)"; echo "Kernel took 3.2 ms"; echo "result = 0.5"; echo "Test passed"`
	f.programs(t, prog, strings.Replace(strings.Replace(prog, "3.2 ms", "4.9 ms", 1), "0.5\"", "0.5000001\"", 1))
	probed := 0
	o := f.options(t)
	o.Probe = func(context.Context) string { probed++; return "" }
	o.Rules.Expect = "Test passed"
	rep, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, StageSame, rep.Stage, rep.Headline())
	require.NoError(t, rep.Err())
	assert.Equal(t, "exit 0", rep.Original.Status)
	// both run as ./prog, in copies of the data
	assert.Contains(t, string(rep.Original.Run.Stdout), "./prog arg 7 data 42")
	assert.Equal(t, 1, probed)
	assert.Equal(t, "usable after the runs", rep.GPU)
	assert.True(t, rep.Verdict.Pass)
	// the libraries: cuBLAS from the include, linked on both sides
	require.Len(t, rep.Libraries, 1)
	assert.Equal(t, "cuBLAS", rep.Libraries[0].Name)
	assert.Equal(t, "cublas_v2.h in main.cu", rep.Libraries[0].Why)
	log := f.argv(t)
	lines := strings.Split(strings.TrimSpace(log), "\n")
	require.Len(t, lines, 2)
	// the original: both units, -arch, -lcublas; the translation: HIP's
	// NVIDIA platform with the names header, the tree's units
	assert.Regexp(t, `^ORIG -O2 -arch=sm_90 \S+/host.cpp \S+/main.cu -o \S+/original/prog -lcublas$`, lines[0])
	assert.Contains(t, lines[1], "-D__HIP_PLATFORM_NVIDIA__")
	assert.Contains(t, lines[1], "-include "+namesHeader)
	assert.Regexp(t, `-x cu \S+/tree/\S+/host.cpp \S+/tree/\S+/main.cu -o \S+/translation/prog -lcublas$`, lines[1])
	var text strings.Builder
	require.NoError(t, rep.WriteText(&text))
	assert.Contains(t, text.String(), "SAME RESULT")
	assert.Contains(t, text.String(), "rule time fired")
}

func TestDifferReportsTheLine(t *testing.T) {
	f := newFixture(t)
	f.programs(t, `echo "n = 3"; echo "sum = 10.0"`, `echo "n = 3"; echo "sum = 12.5"`)
	rep, err := Run(context.Background(), f.options(t))
	require.NoError(t, err)
	require.Equal(t, StageDiffer, rep.Stage, rep.Headline())
	assert.ErrorIs(t, rep.Err(), ErrDiffer)
	assert.Equal(t, 2, rep.Verdict.Line)
	assert.Equal(t, "sum = 10.0", rep.Verdict.Want)
	assert.Equal(t, "sum = 12.5", rep.Verdict.Got)
	var text strings.Builder
	require.NoError(t, rep.WriteText(&text))
	assert.Contains(t, text.String(), "want: sum = 10.0")
}

func TestCrashAndTimeout(t *testing.T) {
	f := newFixture(t)
	// the translation crashes
	f.programs(t, `echo ok`, `echo ok; kill -SEGV $$`)
	rep, err := Run(context.Background(), f.options(t))
	require.NoError(t, err)
	require.Equal(t, StageDiffer, rep.Stage)
	assert.Equal(t, "139 (SIGSEGV)", rep.Translation.Status)
	// the translation hangs, with a child that would keep the pipes open:
	// the whole group is killed at the limit
	f.programs(t, `echo ok`, `echo ok; sleep 30 & sleep 30`)
	o := f.options(t)
	o.Timeout = 500 * time.Millisecond
	start := time.Now()
	rep, err = Run(context.Background(), o)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 10*time.Second)
	require.Equal(t, StageDiffer, rep.Stage)
	assert.True(t, rep.Translation.Run.TimedOut)
	assert.Contains(t, rep.Translation.Status, "timed out")
}

func TestBuildFailure(t *testing.T) {
	f := newFixture(t)
	f.programs(t, `echo ok`, `echo ok`)
	t.Setenv("FAKE_FAIL", "HIP")
	rep, err := Run(context.Background(), f.options(t))
	require.NoError(t, err)
	require.Equal(t, StageBuildFailed, rep.Stage)
	assert.ErrorIs(t, rep.Err(), ErrBuildFailed)
	assert.True(t, rep.Original.Built)
	assert.False(t, rep.Translation.Built)
	assert.Contains(t, rep.Translation.BuildError, `error: identifier "cudaNope" is undefined`)
	assert.Contains(t, rep.Headline(), "BUILD FAILED: the translation")
}

func TestNoNVCCSaysHowToRecord(t *testing.T) {
	f := newFixture(t)
	o := f.options(t)
	o.Tools.NVCC = ""
	rep, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, StageBuildFailed, rep.Stage)
	assert.Contains(t, rep.Original.BuildError, "--record")
}

func TestRecordThenReplay(t *testing.T) {
	f := newFixture(t)
	f.programs(t, `echo "value 1.0"; echo out > result.txt`, `echo "value 2.0"`)
	rec := filepath.Join(t.TempDir(), "prog.rec.json")
	o := f.options(t)
	o.Record = rec
	o.Rules.Files = []string{"result.txt"}
	rep, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, StageRecorded, rep.Stage, rep.Headline())
	assert.Nil(t, rep.Translation)
	got, err := outcmp.ReadRecording(rec)
	require.NoError(t, err)
	assert.Equal(t, "value 1.0\n", string(got.Run.Stdout))
	assert.Equal(t, "out\n", string(got.Run.Files["result.txt"]))
	assert.Equal(t, []string{"7"}, got.Args)

	// an AMD machine without a GPU: the translation is built with hipcc,
	// then nothing runs
	o = f.options(t)
	o.Against = rec
	o.Tools = Toolchains{HIPCC: filepath.Join(filepath.Dir(f.tools.NVCC), "hipcc")}
	rep, err = Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, StageNoGPU, rep.Stage, rep.Headline())
	assert.ErrorIs(t, rep.Err(), ErrNoGPU)
	assert.True(t, rep.Translation.Built)
	assert.Nil(t, rep.Original)

	// a stored output compared with the recording
	out := filepath.Join(t.TempDir(), "out.txt")
	require.NoError(t, os.WriteFile(out, []byte("value 1.0000001\n"), 0o644))
	o.GotOutput = out
	rep, err = Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, StageSame, rep.Stage, rep.Headline())
	require.NoError(t, os.WriteFile(out, []byte("value 1.5\n"), 0o644))
	rep, err = Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, StageDiffer, rep.Stage)
	assert.Equal(t, "value 1.5", rep.Verdict.Got)
}

func TestGotOutputNeedsAgainst(t *testing.T) {
	f := newFixture(t)
	o := f.options(t)
	o.GotOutput = "x"
	_, err := Run(context.Background(), o)
	assert.ErrorContains(t, err, "--against")
}

func TestFilesCompared(t *testing.T) {
	f := newFixture(t)
	f.programs(t, `echo done; echo 1 2 3 > out.txt`, `echo done; echo 1 2 4 > out.txt`)
	o := f.options(t)
	o.Rules.Files = []string{"out.txt"}
	rep, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, StageDiffer, rep.Stage)
	assert.Equal(t, "file out.txt", rep.Verdict.Stream)
}

func TestDetectLibraries(t *testing.T) {
	libs := DetectLibraries(map[string][]byte{
		"a.cu":  []byte("#include <curand.h>\n  #  include \"cufft.h\"\n#include <curand_kernel.h>\n"),
		"b.cpp": []byte("#include <npp.h>\n#include <cusolverDn.h>\n"),
	})
	var names []string
	for _, l := range libs {
		names = append(names, l.Name)
	}
	assert.Equal(t, []string{"cuRAND", "cuFFT", "cuSOLVER", "NPP"}, names)
	resolve(libs, PlatformAMD, nil, nil)
	assert.Equal(t, []string{"hiprand"}, libs[0].Translation)
	assert.Contains(t, libs[0].Missing, "hiprand (translation)")
	assert.Contains(t, libs[3].Missing, "HIP has no NPP library (translation)")
	assert.Equal(t, []string{"-lcurand", "-lcufft", "-lcusolver", "-lcusparse", "-lnppc"}, linkFlags(libs, false)[:5])
	resolve(libs, PlatformNVIDIA, nil, nil)
	assert.Equal(t, libs[3].Original, libs[3].Translation) // HIP's NVIDIA platform links CUDA's
}

func TestNamesHeader(t *testing.T) {
	text := namesText()
	for _, want := range []string{
		"#define hipDeviceSynchronize cudaDeviceSynchronize\n", // not the deprecated cudaThreadSynchronize
		"#define hipblasSgemm cublasSgemm\n",
		"#define HIPBLAS_OP_N CUBLAS_OP_N\n",
		"#define hiprandCreateGenerator curandCreateGenerator\n",
		"#define hipfftExecC2C cufftExecC2C\n",
		"#define hipblasStatus_t cublasStatus_t\n", // the H200 run: cublasStatus is gone in CUDA 13
		"#define hipInit cuInit\n",
		// hipify writes HIP's struct tag after "struct": CUDA's struct on NVIDIA
		"#define _hipGraphicsResource cudaGraphicsResource\n",
		"#define hipExternalMemoryHandleDesc_st cudaExternalMemoryHandleDesc\n",
	} {
		assert.Contains(t, text, want)
	}
	// the H200 run: hipsolver's row cusolver_int_t -> int redefined int
	assert.NotContains(t, text, "#define int ")
	// the H200 run: hipMemcpyToSymbol(HIP_SYMBOL(x)...) reached CUDA's
	// template with a temporary pointer; rocmk's header has a function
	assert.NotContains(t, text, "#define hipMemcpyToSymbol ")
	assert.NotContains(t, text, "#define hipMemcpyToSymbolAsync ")
	for _, l := range strings.Split(text, "\n") {
		if n, ok := strings.CutPrefix(l, "#define "); ok {
			assert.Regexp(t, `^(?i)(make_|_)?hip`, n) // _hipGraphicsResource: HIP's struct tag
		}
	}
	dir := t.TempDir()
	require.NoError(t, writeShims(dir))
	b, err := os.ReadFile(filepath.Join(dir, "hipblas", "hipblas.h"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "#include <cublas_v2.h>")
}
