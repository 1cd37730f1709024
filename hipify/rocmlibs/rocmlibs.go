// Package rocmlibs knows the ROCm libraries a translation can include:
// which headers belong to which library, the Debian package that installs
// it, and whether a toolchain's include directories hold it. hipify's
// --stats and build's first-error classes share it, so both name the same
// package for the same missing header.
package rocmlibs

import (
	"os"
	"path/filepath"
	"strings"
)

// Library is a ROCm library with headers a translation may include.
type Library struct {
	Name    string `json:"name"`    // "hipBLASLt"
	Package string `json:"package"` // the Debian package with its headers: "libhipblaslt-dev"
	// Markers are header paths (relative to an include directory) of
	// which any one shows the library is installed.
	Markers []string `json:"-"`
	// prefixes are header names (a directory with its slash, or a whole
	// name) that belong to the library: the HIP spellings, and the CUDA
	// ones that stay in the source when the target HIP lacks the library.
	prefixes []string
}

// table: Debian's package names (bookworm and sid agree on them).
var table = []Library{
	{Name: "hipBLASLt", Package: "libhipblaslt-dev", Markers: []string{"hipblaslt/hipblaslt.h", "hipblaslt.h"},
		prefixes: []string{"hipblaslt/", "hipblaslt.h", "cublasLt.h"}},
	{Name: "hipBLAS", Package: "libhipblas-dev", Markers: []string{"hipblas/hipblas.h", "hipblas.h"},
		prefixes: []string{"hipblas/", "hipblas.h", "cublas.h", "cublas_v2.h", "cublas_api.h"}},
	{Name: "rocBLAS", Package: "librocblas-dev", Markers: []string{"rocblas/rocblas.h", "rocblas.h"}, prefixes: []string{"rocblas/", "rocblas.h"}},
	{Name: "hipCUB", Package: "libhipcub-dev", Markers: []string{"hipcub/hipcub.hpp"}, prefixes: []string{"hipcub/", "cub/"}},
	{Name: "rocPRIM", Package: "librocprim-dev", Markers: []string{"rocprim/rocprim.hpp"}, prefixes: []string{"rocprim/"}},
	{Name: "rocThrust", Package: "librocthrust-dev", Markers: []string{"thrust/version.h"}, prefixes: []string{"thrust/"}},
	{Name: "hipRAND", Package: "libhiprand-dev", Markers: []string{"hiprand/hiprand.h"}, prefixes: []string{"hiprand/", "curand"}},
	{Name: "rocRAND", Package: "librocrand-dev", Markers: []string{"rocrand/rocrand.h"}, prefixes: []string{"rocrand/"}},
	{Name: "hipFFT", Package: "libhipfft-dev", Markers: []string{"hipfft/hipfft.h"}, prefixes: []string{"hipfft/", "cufft"}},
	{Name: "hipSPARSE", Package: "libhipsparse-dev", Markers: []string{"hipsparse/hipsparse.h", "hipsparse.h"},
		prefixes: []string{"hipsparse/", "hipsparse.h", "cusparse"}},
	{Name: "rocSPARSE", Package: "librocsparse-dev", Markers: []string{"rocsparse/rocsparse.h", "rocsparse.h"}, prefixes: []string{"rocsparse/", "rocsparse.h"}},
	{Name: "hipSOLVER", Package: "libhipsolver-dev", Markers: []string{"hipsolver/hipsolver.h", "hipsolver.h"},
		prefixes: []string{"hipsolver/", "hipsolver.h", "cusolver"}},
	{Name: "rocSOLVER", Package: "librocsolver-dev", Markers: []string{"rocsolver/rocsolver.h"}, prefixes: []string{"rocsolver/"}},
	{Name: "rocWMMA", Package: "librocwmma-dev", Markers: []string{"rocwmma/rocwmma.hpp"}, prefixes: []string{"rocwmma/", "mma.h"}},
	{Name: "MIOpen", Package: "libmiopen-dev", Markers: []string{"miopen/miopen.h"}, prefixes: []string{"miopen/", "cudnn"}},
}

// ForHeader returns the library a header name (as written in #include)
// belongs to; ok is false for any other header.
func ForHeader(name string) (Library, bool) {
	name = strings.TrimPrefix(filepath.ToSlash(name), "./")
	for _, l := range table {
		for _, p := range l.prefixes {
			if matches(name, p) {
				return l, true
			}
		}
	}
	return Library{}, false
}

// matches: a directory prefix ("hipcub/") holds every header under it, a
// whole name ("cublasLt.h") itself, a stem ("curand") its .h headers.
func matches(name, p string) bool {
	switch {
	case strings.HasSuffix(p, "/"):
		return strings.HasPrefix(name, p)
	case strings.Contains(p, "."):
		return name == p
	}
	return strings.HasPrefix(name, p) && strings.HasSuffix(name, ".h")
}

// Installed reports whether one of the library's marker headers is in
// one of the include directories.
func (l Library) Installed(includeDirs []string) bool {
	for _, d := range includeDirs {
		for _, m := range l.Markers {
			if Exists(d, m) {
				return true
			}
		}
	}
	return false
}

// Exists reports whether header name is a regular file under dir.
func Exists(dir, name string) bool {
	st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
	return err == nil && st.Mode().IsRegular()
}

// Find returns whether header name is in one of the include directories.
func Find(includeDirs []string, name string) bool {
	for _, d := range includeDirs {
		if Exists(d, name) {
			return true
		}
	}
	return false
}

// Hint is what to tell a user missing l: "hipBLASLt (apt-get install libhipblaslt-dev)".
func (l Library) Hint() string { return l.Name + " (apt-get install " + l.Package + ")" }
