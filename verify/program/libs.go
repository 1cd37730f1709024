package program

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// libSpec is a CUDA library a program can use: the headers that show it,
// the libraries the original links and those the HIP translation links on
// AMD (on NVIDIA the translation links the CUDA ones: HIP's NVIDIA
// platform is CUDA underneath).
type libSpec struct {
	name    string
	headers []string // exact names, or a prefix ending in '*'
	cuda    []string
	hip     []string // nil: no HIP library (the translation cannot link on AMD)
}

var libSpecs = []libSpec{
	{"cuBLAS", []string{"cublas_v2.h", "cublas.h", "cublasXt.h", "cublas_api.h"}, []string{"cublas"}, []string{"hipblas"}},
	{"cuBLASLt", []string{"cublasLt.h"}, []string{"cublasLt"}, []string{"hipblaslt"}},
	{"cuRAND", []string{"curand.h"}, []string{"curand"}, []string{"hiprand"}},
	{"cuFFT", []string{"cufft.h", "cufftXt.h"}, []string{"cufft"}, []string{"hipfft"}},
	{"cuSPARSE", []string{"cusparse.h", "cusparse_v2.h"}, []string{"cusparse"}, []string{"hipsparse"}},
	{"cuSOLVER", []string{"cusolverDn.h", "cusolverSp.h", "cusolverRf.h", "cusolverSp_LOWLEVEL_PREVIEW.h", "cusolverMg.h"},
		[]string{"cusolver", "cusparse"}, []string{"hipsolver", "hipsparse"}},
	{"NVRTC", []string{"nvrtc.h"}, []string{"nvrtc"}, []string{"hiprtc"}},
	{"CUDA driver API", []string{"cuda.h"}, []string{"cuda"}, []string{}},
	{"NPP", []string{"npp.h", "nppi*", "npps*", "nppcore.h"}, []string{"nppc", "nppial", "nppicc", "nppidei", "nppif", "nppig", "nppim", "nppist", "nppisu", "nppitc", "npps"}, nil},
	{"nvJitLink", []string{"nvJitLink.h"}, []string{"nvJitLink"}, nil},
	{"nvJPEG", []string{"nvjpeg.h"}, []string{"nvjpeg"}, nil},
	{"cuDNN", []string{"cudnn.h"}, []string{"cudnn"}, []string{"MIOpen"}},
}

// Library is one library a program uses, as the report lists it.
type Library struct {
	Name        string   `json:"name"`        // "cuBLAS"
	Why         string   `json:"why"`         // "cublas_v2.h in simpleCUBLAS.cpp"
	Original    []string `json:"original"`    // what the original links (-l names)
	Translation []string `json:"translation"` // what the translation links
	// Missing says which were not found ("hipblas (translation)"), or
	// that HIP has no such library.
	Missing []string `json:"missing,omitempty"`
}

var includeRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]`)

// DetectLibraries lists the libraries the sources (name -> content, the
// CUDA originals) include, in the table's order.
func DetectLibraries(sources map[string][]byte) []Library {
	names := make([]string, 0, len(sources))
	for n := range sources {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Library
	for _, ls := range libSpecs {
		if why := usedBy(ls, names, sources); why != "" {
			out = append(out, Library{Name: ls.name, Why: why, Original: ls.cuda})
		}
	}
	return out
}

// usedBy says which include of which file shows the library ("" if none).
func usedBy(ls libSpec, names []string, sources map[string][]byte) string {
	for _, n := range names {
		for _, m := range includeRE.FindAllSubmatch(sources[n], -1) {
			h := filepath.Base(string(m[1]))
			for _, want := range ls.headers {
				if p, ok := strings.CutSuffix(want, "*"); ok && strings.HasPrefix(h, p) || h == want {
					return h + " in " + filepath.Base(n)
				}
			}
		}
	}
	return ""
}

// resolve fills the libraries' translation side for the platform and
// notes those not found in dirs (cudaDirs for the CUDA libraries).
func resolve(libs []Library, platform string, cudaDirs, hipDirs []string) {
	for i := range libs {
		l := &libs[i]
		var spec libSpec
		for _, s := range libSpecs {
			if s.name == l.Name {
				spec = s
			}
		}
		l.Missing = nil
		for _, n := range l.Original {
			if n != "cuda" && !findLib(n, cudaDirs) { // libcuda is the driver's: nvcc links its stub
				l.Missing = append(l.Missing, n+" (original)")
			}
		}
		switch {
		case platform != PlatformAMD:
			l.Translation = l.Original
		case spec.hip == nil:
			l.Translation = nil
			l.Missing = append(l.Missing, "HIP has no "+l.Name+" library (translation)")
		default:
			l.Translation = spec.hip
			for _, n := range spec.hip {
				if !findLib(n, hipDirs) {
					l.Missing = append(l.Missing, n+" (translation)")
				}
			}
		}
	}
}

// findLib says whether lib<name>.so (or a versioned one) is in one of dirs.
func findLib(name string, dirs []string) bool {
	for _, d := range dirs {
		if m, _ := filepath.Glob(filepath.Join(d, "lib"+name+".so*")); len(m) > 0 {
			return true
		}
	}
	return false
}

// linkFlags are the -l flags of a side's libraries.
func linkFlags(libs []Library, translation bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range libs {
		names := l.Original
		if translation {
			names = l.Translation
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, "-l"+n)
			}
		}
	}
	return out
}

// CUDALibDirs are where the CUDA libraries of the toolkit holding nvcc are.
func CUDALibDirs(nvcc string, getenv func(string) string) []string {
	var dirs []string
	for _, v := range []string{"CUDA_PATH", "CUDA_HOME"} {
		if r := getenv(v); r != "" {
			dirs = append(dirs, filepath.Join(r, "lib64"))
		}
	}
	if nvcc != "" {
		if p, err := filepath.EvalSymlinks(nvcc); err == nil {
			nvcc = p
		}
		root := filepath.Dir(filepath.Dir(nvcc))
		dirs = append(dirs, filepath.Join(root, "lib64"), filepath.Join(root, "targets", "x86_64-linux", "lib"),
			filepath.Join(root, "lib64", "stubs")) // libcuda.so to link against; the driver's is loaded at run time
	}
	return existing(append(dirs, "/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu"))
}

// HIPLibDirs are where the HIP libraries of a ROCm installation are.
func HIPLibDirs(root string) []string {
	var dirs []string
	if root != "" {
		dirs = append(dirs, filepath.Join(root, "lib"), filepath.Join(root, "lib", "x86_64-linux-gnu"))
	}
	return existing(append(dirs, "/opt/rocm/lib", "/usr/lib/x86_64-linux-gnu"))
}

func existing(dirs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
