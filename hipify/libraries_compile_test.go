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

// Each CUDA library's use, translated for the installed HIP and for HIP 5.2
// (a tree translated on an older ROCm), compiles wherever the ROCm library
// is installed: the include paths (hipblas/hipblas.h from HIP 6) and the
// namespaces (hipcub::, thrust::hip::) are the ones that library has. A
// library that is not installed is logged, by the header it would need.
func TestLibraryUsesCompile(t *testing.T) {
	hipcc := hipccOrSkip(t)
	ver := hipccVersion(t, hipcc)
	libs := []struct{ name, header, src string }{
		{"hipBLAS", "hipblas", "#include <cublas_v2.h>\nvoid f() { cublasHandle_t h; cublasCreate(&h); cublasDestroy(h); }\n"},
		{"hipBLASLt", "hipblaslt", "#include <cublasLt.h>\nvoid f() { cublasLtHandle_t h; cublasLtCreate(&h); }\n"},
		{"hipSPARSE", "hipsparse", "#include <cusparse.h>\nvoid f() { cusparseHandle_t h; cusparseCreate(&h); }\n"},
		{"hipFFT", "hipfft/hipfft.h", "#include <cufft.h>\nvoid f() { cufftHandle p; cufftPlan1d(&p, 8, CUFFT_C2C, 1); }\n"},
		{"hipRAND", "hiprand/hiprand.h", "#include <curand.h>\nvoid f() { curandGenerator_t g; curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT); }\n"},
		{"hipCUB", "hipcub/hipcub.hpp", "#include <cub/cub.cuh>\n" +
			"__global__ void k(int *x) {\n  using S = cub::BlockScan<int, 256>;\n  __shared__ typename S::TempStorage t;\n" +
			"  int v = x[threadIdx.x];\n  S(t).ExclusiveSum(v, v);\n  x[threadIdx.x] = v;\n}\n" +
			"void h(int *in, int *out, int n, cudaStream_t s) { size_t b = 0; cub::DeviceScan::ExclusiveSum(nullptr, b, in, out, n, s); }\n"},
		{"rocThrust", "thrust/device_ptr.h", "#include <thrust/device_ptr.h>\n#include <thrust/scan.h>\n#include <thrust/execution_policy.h>\n" +
			"void h(int *p, int n, cudaStream_t s) { thrust::device_ptr<int> d(p); thrust::inclusive_scan(thrust::cuda::par.on(s), d, d + n, d); }\n"},
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
				if v.Less(Version{5, 5, 0}) && l.name == "hipBLASLt" {
					require.NotEmpty(t, rep.Unsupported, "HIP 5.2 has no hipBLASLt: reported")
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
