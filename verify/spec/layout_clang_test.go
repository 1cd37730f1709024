package spec

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/inspect"
)

// clangKernels compiles HIP source for gfx90a with the installed clang and
// returns its kernels' metadata as port reads it.
func clangKernels(t *testing.T, src string) []KernelInfo {
	t.Helper()
	in, err := toolchain.FindInstallation(toolchain.FindOptions{})
	if err != nil {
		t.Skipf("no ROCm toolchain: %v", err)
	}
	tc, err := toolchain.NewClang(in, "")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k.hip"), []byte(src), 0o644))
	target, err := inspect.ParseTarget("gfx90a")
	require.NoError(t, err)
	argv := tc.Argv(toolchain.Job{Src: "k.hip", Dir: dir, Target: target, Out: filepath.Join(dir, "k.hsaco")})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	data, err := os.ReadFile(filepath.Join(dir, "k.hsaco"))
	require.NoError(t, err)
	co, err := inspect.ReadCodeObject(data)
	require.NoError(t, err)
	var ks []KernelInfo
	for _, k := range co.Kernels {
		ki := KernelInfo{Name: k.Name, Demangled: k.Demangled, Args: []ArgInfo{}}
		for _, a := range k.Args {
			ki.Args = append(ki.Args, ArgInfo{Name: a.Name, TypeName: a.TypeName, Offset: a.Offset, Size: a.Size, Kind: a.ValueKind})
		}
		ks = append(ks, ki)
	}
	return ks
}

// TestStructLayoutMatchesClang builds kernels taking structs by value with
// the real compiler and checks that the spec's C layout agrees with the
// code object's argument offsets and sizes, and that a wrong field order
// or a missing alignas is caught.
func TestStructLayoutMatchesClang(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with clang")
	}
	ks := clangKernels(t, `#include <hip/hip_runtime.h>
struct P { char a; float b; double c; };
struct alignas(16) Q { int n; float s; };
struct R { short h; unsigned char q; int64_t big; };
extern "C" __global__ void kp(float* x, P p, short s) { x[0] = p.a + p.b + p.c + s; }
extern "C" __global__ void kq(char c, Q q, float* x) { x[0] = q.n * q.s + c; }
extern "C" __global__ void kr(R r, _Float16 h, float* x) { x[0] = r.h + r.q + r.big + (float)h; }
`)
	spec := func(kernel, args string) *Spec {
		return parseOne(t, `[[verify]]
kernel = "`+kernel+`"
grid = 1
block = 1
args = [`+args+`]
reference = ["x[i] = 0"]`)
	}
	x := `{ name = "x", dtype = "f32", count = 1, output = true }`
	for _, c := range []struct {
		kernel, args, err string
	}{
		{"kp", x + `, { name = "p", struct = [{ name = "a", dtype = "i8", value = 1 }, { name = "b", dtype = "f32", value = 2 }, { name = "c", dtype = "f64", value = 3 }] }, { name = "s", dtype = "i16", value = 4 }`, ""},
		{"kq", `{ name = "c", dtype = "i8", value = 1 }, { name = "q", align = 16, struct = [{ name = "n", dtype = "i32", value = 1 }, { name = "s", dtype = "f32", value = 2 }] }, ` + x, ""},
		{"kr", `{ name = "r", struct = [{ name = "h", dtype = "i16", value = 1 }, { name = "q", dtype = "u8", value = 2 }, { name = "big", dtype = "i64", value = 3 }] }, { name = "h", dtype = "f16", value = 1 }, ` + x, ""},
		// Without alignas(16) the struct is 8 bytes at offset 4.
		{"kq", `{ name = "c", dtype = "i8", value = 1 }, { name = "q", struct = [{ name = "n", dtype = "i32", value = 1 }, { name = "s", dtype = "f32", value = 2 }] }, ` + x,
			`argument 1 (q): the spec's struct is 8 bytes (align 4), the kernel takes a 16-byte value`},
		// Fields in another order: 16 bytes the spec's way too, but the
		// double lands where the kernel has the float.
		{"kp", x + `, { name = "p", struct = [{ name = "c", dtype = "f64", value = 3 }, { name = "a", dtype = "i8", value = 1 }, { name = "b", dtype = "f32", value = 2 }, { name = "d", dtype = "f64", value = 0 }] }, { name = "s", dtype = "i16", value = 4 }`,
			`argument 1 (p): the spec's struct is 24 bytes (align 8), the kernel takes a 16-byte value`},
		{"kr", `{ name = "r", struct = [{ name = "h", dtype = "i16", value = 1 }, { name = "q", dtype = "u8", value = 2 }, { name = "big", dtype = "i32", value = 3 }] }, { name = "h", dtype = "f16", value = 1 }, ` + x,
			`argument 0 (r): the spec's struct is 8 bytes (align 4), the kernel takes a 16-byte value`},
	} {
		s := spec(c.kernel, c.args)
		k, err := Resolve(s, ks)
		require.NoError(t, err)
		err = CheckArgs(s, k)
		if c.err == "" {
			assert.NoError(t, err, c.kernel)
		} else {
			require.Error(t, err, c.kernel)
			assert.Contains(t, err.Error(), c.err)
		}
	}
}

// TestDraftPassesMetadataCheck: the draft of each (non-template) test
// kernel, hipified and built with the real compiler, agrees with the code
// object's argument metadata: count, pointer or value, sizes, offsets.
func TestDraftPassesMetadataCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with clang")
	}
	for _, name := range []string{"elementwise.cu", "scalar.cu", "reduce.cu", "softmax.cu", "strided.cu"} {
		src, err := os.ReadFile(filepath.Join(testdata, name))
		require.NoError(t, err)
		hip, _, err := hipify.Translate(name, src, hipify.Options{})
		require.NoError(t, err)
		ks := clangKernels(t, string(hip))
		draft, err := Draft(name, src, nil)
		require.NoError(t, err)
		f, err := Parse(name+".toml", draft)
		require.NoError(t, err)
		for _, s := range f.Specs {
			k, err := Resolve(s, ks)
			require.NoError(t, err, name)
			assert.NoError(t, CheckArgs(s, k), "%s: %s", name, s.Label())
		}
	}
}
