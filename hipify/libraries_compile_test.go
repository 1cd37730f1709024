package hipify

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// hipccVersion is the HIP version hipcc reports (5.2 when it says none).
func hipccVersion(t *testing.T, hipcc string) Version {
	ver := Version{5, 2, 0}
	if out, err := exec.Command(hipcc, "--version").CombinedOutput(); err == nil {
		if m := hipVersionRe.FindSubmatch(out); m != nil {
			ver, _ = ParseVersion(string(m[1]) + "." + string(m[2]))
		}
	}
	return ver
}

// cufftXtUse is NVIDIA's multi-GPU cuFFT sample in small: descriptors,
// the GPUs, copies and a descriptor exec, and the extended plan call.
const cufftXtUse = `#include <cufftXt.h>
void f(cufftComplex *h, int n) {
  cufftHandle p;
  int gpus[2] = {0, 1};
  size_t ws[MAX_CUDA_DESCRIPTOR_GPUS];
  cufftCreate(&p);
  cufftXtSetGPUs(p, 2, gpus);
  cufftMakePlan1d(p, n, CUFFT_C2C, 1, ws);
  cudaLibXtDesc *d;
  cufftXtMalloc(p, &d, CUFFT_XT_FORMAT_INPLACE);
  cufftXtMemcpy(p, d, h, CUFFT_COPY_HOST_TO_DEVICE);
  cufftXtExecDescriptorC2C(p, d, d, CUFFT_FORWARD);
  cudaXtDesc *x = d->descriptor;
  cufftComplex *first = (cufftComplex *)x->data[0];
  (void)first;
  cufftXtMemcpy(p, h, d, CUFFT_COPY_DEVICE_TO_HOST);
  cufftXtFree(d);
  long long len = n; size_t w;
  cufftXtMakePlanMany(p, 1, &len, nullptr, 1, 1, CUDA_C_32F, nullptr, 1, 1, CUDA_C_32F, 1, &w, CUDA_C_32F);
}
`

// thrustUse calls algorithms whose headers it does not include: CUDA's
// thrust/sort.h brings thrust::sequence and the zip iterator in, rocThrust's
// does not.
const thrustUse = `#include <thrust/device_ptr.h>
#include <thrust/sort.h>
void h(unsigned *keys, unsigned *vals, int n) {
  thrust::device_ptr<unsigned> k(keys), v(vals);
  thrust::sequence(v, v + n);
  thrust::sort_by_key(k, k + n, v);
  auto z = thrust::make_zip_iterator(thrust::make_tuple(k, v));
  (void)z;
}
`

// Each CUDA library's use, translated for the installed HIP and for HIP 5.2
// (a tree translated on an older ROCm), compiles wherever the ROCm library
// is installed: the include paths (hipblas/hipblas.h from HIP 6) and the
// namespaces (hipcub::, thrust::hip::) are the ones that library has. A
// library that is not installed is logged, by the header it would need.
func TestLibraryUsesCompile(t *testing.T) {
	hipcc := hipccOrSkip(t)
	ver := hipccVersion(t, hipcc)
	// the program of the H200 run of hipCUB over CUB (testdata/port/hipcub)
	cubProgram, err := os.ReadFile(filepath.Join("..", "testdata", "port", "hipcub", "cub_algorithms.cu"))
	require.NoError(t, err)
	libs := []struct {
		name, header, src string
		since             Version // an older HIP reports the use as unsupported
	}{
		{"hipBLAS", "hipblas", "#include <cublas_v2.h>\nvoid f() { cublasHandle_t h; cublasCreate(&h); cublasDestroy(h); }\n", Version{}},
		{"hipBLASLt", "hipblaslt", "#include <cublasLt.h>\nvoid f() { cublasLtHandle_t h; cublasLtCreate(&h); }\n", Version{5, 5, 0}},
		{"hipSPARSE", "hipsparse", "#include <cusparse.h>\nvoid f() { cusparseHandle_t h; cusparseCreate(&h); }\n", Version{}},
		{"hipFFT", "hipfft/hipfft.h", "#include <cufft.h>\nvoid f() { cufftHandle p; cufftPlan1d(&p, 8, CUFFT_C2C, 1); }\n", Version{}},
		{"hipFFTXt", "hipfft/hipfftXt.h", cufftXtUse, Version{6, 0, 0}},
		{"hipRAND", "hiprand/hiprand.h", "#include <curand.h>\nvoid f() { curandGenerator_t g; curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT); }\n", Version{}},
		{"hipCUB", "hipcub/hipcub.hpp", "#include <cub/cub.cuh>\n" +
			"__global__ void k(int *x) {\n  using S = cub::BlockScan<int, 256>;\n  __shared__ typename S::TempStorage t;\n" +
			"  int v = x[threadIdx.x];\n  S(t).ExclusiveSum(v, v);\n  x[threadIdx.x] = v;\n}\n" +
			"void h(int *in, int *out, int n, cudaStream_t s) { size_t b = 0; cub::DeviceScan::ExclusiveSum(nullptr, b, in, out, n, s); }\n", Version{}},
		{"rocThrust", "thrust/device_ptr.h", "#include <thrust/device_ptr.h>\n#include <thrust/scan.h>\n#include <thrust/execution_policy.h>\n" +
			"void h(int *p, int n, cudaStream_t s) { thrust::device_ptr<int> d(p); thrust::inclusive_scan(thrust::cuda::par.on(s), d, d + n, d); }\n", Version{}},
		{"rocThrustHeaders", "thrust/device_ptr.h", thrustUse, Version{}},
		{"hipCUBProgram", "hipcub/hipcub.hpp", string(cubProgram), Version{}},
	}
	dir := t.TempDir()
	for _, l := range libs {
		l := l
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			probe := "#if !__has_include(<" + l.header + ">) && !__has_include(<" + l.header + "/" + l.header + ".h>) && !__has_include(<" + l.header + ".h>)\n#error absent\n#endif\n"
			pf := filepath.Join(dir, l.name+"-probe.hip")
			require.NoError(t, os.WriteFile(pf, []byte(probe), 0o644))
			if err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "-E", pf, "-o", os.DevNull).Run(); err != nil {
				t.Logf("%s is not installed with this HIP %s: nothing to compile against", l.name, ver)
				return
			}
			for _, v := range []Version{ver, {5, 2, 0}} {
				out, rep, err := Translate(l.name+".cu", []byte(l.src), Options{HIPVersion: v})
				require.NoError(t, err)
				if v.Less(l.since) {
					require.NotEmpty(t, rep.Unsupported, "HIP %s has no %s: reported", v, l.name)
					continue
				}
				require.Empty(t, rep.Unsupported)
				f := filepath.Join(dir, l.name+"-"+strings.ReplaceAll(v.String(), ".", "_")+".hip")
				require.NoError(t, os.WriteFile(f, out, 0o644))
				msg, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-fsyntax-only", f).CombinedOutput()
				require.NoError(t, err, "translated for HIP %s, compiled with HIP %s:\n%s\n%s", v, ver, out, msg)
			}
		})
	}
}

// cuFFT's Xt API follows the target HIP: hipFFT has the extended plan
// call from ROCm 5.6 and descriptors from 6.0; before that each name is
// reported, with the version that adds it.
func TestCufftXtFollowsHIPVersion(t *testing.T) {
	out, rep, err := Translate("xt.cu", []byte(cufftXtUse), Options{HIPVersion: Version{6, 4, 0}})
	require.NoError(t, err)
	require.Empty(t, rep.Unsupported)
	for _, want := range []string{"#include <hipfft/hipfftXt.h>", "MAX_HIP_DESCRIPTOR_GPUS", "hipfftXtSetGPUs(p, 2, gpus)",
		"hipLibXtDesc *d;", "hipfftXtMalloc(p, &d, HIPFFT_XT_FORMAT_INPLACE)", "hipfftXtMemcpy(p, d, h, HIPFFT_COPY_HOST_TO_DEVICE)",
		"hipfftXtExecDescriptorC2C(p, d, d, HIPFFT_FORWARD)", "hipXtDesc *x", "hipfftXtFree(d)", "hipfftXtMakePlanMany("} {
		require.Contains(t, string(out), want)
	}
	require.NotContains(t, string(out), "cufft")

	_, rep, err = Translate("xt.cu", []byte(cufftXtUse), Options{HIPVersion: Version{5, 7, 0}})
	require.NoError(t, err)
	var msgs []string
	for _, u := range rep.Unsupported {
		msgs = append(msgs, u.String())
	}
	all := strings.Join(msgs, "\n")
	require.Contains(t, all, "cufftXtMalloc")
	require.Contains(t, all, "6.0.0")
	require.NotContains(t, all, "cufftXtMakePlanMany", "hipFFT of ROCm 5.6 has it")
}

// Each thrust call gets the header that declares it, after the file's last
// thrust include, once; a translated file is left as it is.
func TestThrustCallsGetTheirHeaders(t *testing.T) {
	out, _, err := Translate("t.cu", []byte(thrustUse), Options{HIPVersion: Version{6, 4, 0}})
	require.NoError(t, err)
	require.Contains(t, string(out), "#include <thrust/sort.h>\n#include <thrust/iterator/zip_iterator.h> // rocmk: for thrust::make_zip_iterator\n"+
		"#include <thrust/sequence.h> // rocmk: for thrust::sequence\n")
	require.Equal(t, 1, strings.Count(string(out), "thrust/sequence.h"))
	require.NotContains(t, string(out), "<thrust/sort.h> // rocmk", "included already")
	again, _, err := Translate("t.hip", out, Options{HIPVersion: Version{6, 4, 0}})
	require.NoError(t, err)
	require.Equal(t, string(out), string(again))

	// no thrust include: nothing added (the file gets thrust some other way)
	out, _, err = Translate("u.cu", []byte("#include \"mythrust.h\"\nvoid f(int *p) { thrust::sequence(p, p + 4); }\n"), Options{})
	require.NoError(t, err)
	require.NotContains(t, string(out), "thrust/sequence.h")
	// a member named like an algorithm, a type, a namespace: nothing added
	out, _, err = Translate("v.cu", []byte("#include <thrust/fill.h>\nint g(S s) { thrust::device_vector<int> v(4); thrust::cuda::par; return s.sort(1) + v.size(); }\n"), Options{})
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(out), "thrust/"))
}
