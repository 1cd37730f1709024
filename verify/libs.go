package verify

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// RuntimeLibrary is a library verify dlopens, with the names it tries, in
// order: the first that loads is used. It is the one list Open and the
// NVRTC binding load from, and that `rocmk doctor` reports.
type RuntimeLibrary struct {
	Backend string   // "hip", "cuda", "nvrtc" or "hiprtc"
	Use     string   // what it is for
	Names   []string // dlopen names: sonames, or paths under HIP_PATH, CUDA_PATH...
}

// RuntimeLibraries lists the libraries verify loads; getenv reads HIP_PATH,
// ROCM_PATH, CUDA_PATH and CUDA_HOME.
func RuntimeLibraries(getenv func(string) string) []RuntimeLibrary {
	return []RuntimeLibrary{
		{Backend: "hip", Use: "rocmk verify --backend hip", Names: libraryNames("hip", getenv)},
		{Backend: "cuda", Use: "rocmk verify --backend cuda", Names: libraryNames("cuda", getenv)},
		{Backend: "nvrtc", Use: "NVIDIA images when nvcc cannot build them", Names: libraryNames("nvrtc", getenv)},
		{Backend: "hiprtc", Use: "verify/gpu's run-time compile on AMD", Names: libraryNames("hiprtc", getenv)},
		{Backend: "cublas", Use: "the blas family on NVIDIA (verify/blas)", Names: libraryNames("cublas", getenv)},
		{Backend: "cublaslt", Use: "the blas family's blaslt_* cases on NVIDIA (verify/blas)", Names: libraryNames("cublaslt", getenv)},
		{Backend: "rocblas", Use: "the blas family on AMD (verify/blas)", Names: libraryNames("rocblas", getenv)},
		{Backend: "hipblaslt", Use: "the blas family's blaslt_* cases on AMD (verify/blas)", Names: libraryNames("hipblaslt", getenv)},
	}
}

// RuntimeLibraryNames is the dlopen order of one library of
// RuntimeLibraries, by its Backend ("cublas", ...).
func RuntimeLibraryNames(backend string, getenv func(string) string) []string {
	return libraryNames(backend, getenv)
}

// cudaLibNames is the order of a CUDA toolkit library: CUDA_PATH and
// CUDA_HOME, the sonames newest first, then the default toolkit directory.
func cudaLibNames(under func([]string, string, []string) []string, base string, majors ...string) []string {
	var versioned []string
	for _, m := range majors {
		versioned = append(versioned, base+".so."+m)
	}
	names := under([]string{"CUDA_PATH", "CUDA_HOME"}, "lib64", versioned)
	names = append(names, versioned...)
	names = append(names, base+".so")
	for _, v := range versioned {
		names = append(names, "/usr/local/cuda/lib64/"+v)
	}
	return names
}

// rocmLibNames is the order of a ROCm library: HIP_PATH and ROCM_PATH, the
// sonames newest first, then /opt/rocm.
func rocmLibNames(under func([]string, string, []string) []string, base string, majors ...string) []string {
	var versioned []string
	for _, m := range majors {
		versioned = append(versioned, base+".so."+m)
	}
	names := append(under([]string{"HIP_PATH", "ROCM_PATH"}, "lib", versioned), versioned...)
	return append(names, base+".so", "/opt/rocm/lib/"+base+".so")
}

// libraryNames is the dlopen order of one library. HIP_PATH or ROCM_PATH
// put <root>/lib/libamdhip64.so.N first, CUDA_PATH or CUDA_HOME
// <root>/lib64/libnvrtc.so.N.
func libraryNames(backend string, getenv func(string) string) []string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	under := func(vars []string, dir string, sonames []string) []string {
		var out []string
		for _, v := range vars {
			if root := getenv(v); root != "" {
				for _, n := range sonames {
					out = append(out, filepath.Join(root, dir, n))
				}
			}
		}
		return out
	}
	switch backend {
	case "hip":
		versioned := []string{"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}
		return append(under([]string{"HIP_PATH", "ROCM_PATH"}, "lib", versioned), append(versioned, "libamdhip64.so")...)
	case "cuda":
		return []string{"libcuda.so.1", "libcuda.so"}
	case "hiprtc":
		versioned := []string{"libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so.5"}
		return append(under([]string{"HIP_PATH", "ROCM_PATH"}, "lib", versioned), append(versioned, "libhiprtc.so")...)
	case "cublas":
		return cudaLibNames(under, "libcublas", "13", "12", "11")
	case "cublaslt":
		return cudaLibNames(under, "libcublasLt", "13", "12", "11")
	case "rocblas":
		return rocmLibNames(under, "librocblas", "5", "4", "0")
	case "hipblaslt":
		return rocmLibNames(under, "libhipblaslt", "1", "0")
	case "nvrtc":
		versioned := []string{"libnvrtc.so.13", "libnvrtc.so.12"}
		names := under([]string{"CUDA_PATH", "CUDA_HOME"}, "lib64", versioned)
		names = append(names, "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so")
		return append(names, "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12")
	}
	return nil
}

// Loader finds the file the dynamic loader would open for a dlopen name,
// without loading anything, in glibc's order for a program without RPATH or
// RUNPATH (rocmk has neither): a name with a slash is a path; a soname is
// looked up in LD_LIBRARY_PATH, then the ld.so cache, then the system
// directories.
type Loader struct {
	Root   string              // filesystem root prefix for tests ("" = /)
	Getenv func(string) string // reads LD_LIBRARY_PATH; nil: none
	Cache  map[string]string   // the ld.so cache, soname -> path (see ParseLDConfig)
}

// Find returns the path name resolves to and how it was found ("path",
// "LD_LIBRARY_PATH", "ldconfig cache" or "system directory").
func (l Loader) Find(name string) (path, via string, ok bool) {
	if strings.Contains(name, "/") {
		return name, "path", l.isFile(name)
	}
	if l.Getenv != nil {
		for _, d := range filepath.SplitList(l.Getenv("LD_LIBRARY_PATH")) {
			if d != "" && l.isFile(filepath.Join(d, name)) {
				return filepath.Join(d, name), "LD_LIBRARY_PATH", true
			}
		}
	}
	if p, found := l.Cache[name]; found && l.isFile(p) {
		return p, "ldconfig cache", true
	}
	for _, d := range systemLibDirs() {
		if l.isFile(filepath.Join(d, name)) {
			return filepath.Join(d, name), "system directory", true
		}
	}
	return "", "", false
}

func (l Loader) isFile(p string) bool {
	fi, err := os.Stat(filepath.Join(l.Root, p))
	return err == nil && !fi.IsDir()
}

// systemLibDirs are glibc's trusted directories on Debian-style multiarch
// systems and on lib64 ones.
func systemLibDirs() []string {
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu", "ppc64le": "powerpc64le-linux-gnu"}[runtime.GOARCH]
	var dirs []string
	if triplet != "" {
		dirs = append(dirs, "/lib/"+triplet, "/usr/lib/"+triplet)
	}
	return append(dirs, "/lib64", "/usr/lib64", "/lib", "/usr/lib")
}

// ParseLDConfig reads `ldconfig -p` output into soname -> path, keeping the
// first entry of a name for this machine's architecture.
func ParseLDConfig(out []byte) map[string]string {
	arch := map[string]string{"amd64": "x86-64", "arm64": "AArch64", "ppc64le": "64bit"}[runtime.GOARCH]
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, rest, ok := strings.Cut(strings.TrimSpace(sc.Text()), " (")
		if !ok {
			continue
		}
		flags, path, ok := strings.Cut(rest, ") => ")
		if !ok || (arch != "" && !strings.Contains(flags, arch)) {
			continue
		}
		if _, seen := m[name]; !seen {
			m[name] = strings.TrimSpace(path)
		}
	}
	return m
}

// LibraryStatus is what Open (or the NVRTC binding) would load for one
// runtime: the first of its names the dynamic loader resolves.
type LibraryStatus struct {
	Backend string `json:"backend"` // hip, cuda, nvrtc, hiprtc
	For     string `json:"for"`
	Name    string `json:"name,omitempty"` // the dlopen name that resolves
	Path    string `json:"path,omitempty"`
	Via     string `json:"via,omitempty"` // LD_LIBRARY_PATH, ldconfig cache, system directory, path
	// Version is the file's own version, from the name the links end at
	// (libcublas.so.13.1.0.3: "13.1.0.3"); "" when it has none.
	Version string   `json:"version,omitempty"`
	Found   bool     `json:"found"`
	Tried   []string `json:"tried"` // the names, in Open's order
}

// FindLibraries resolves each runtime library with l, loading nothing:
// what `rocmk doctor` reports.
func FindLibraries(l Loader) []LibraryStatus {
	var out []LibraryStatus
	for _, lib := range RuntimeLibraries(l.Getenv) {
		st := LibraryStatus{Backend: lib.Backend, For: lib.Use, Tried: lib.Names}
		for _, n := range lib.Names {
			if p, via, ok := l.Find(n); ok {
				st.Name, st.Path, st.Via, st.Found = n, p, via, true
				st.Version = fileVersion(l.Root, p)
				break
			}
		}
		out = append(out, st)
	}
	return out
}

// fileVersion is the version in the name of the file path links to
// ("libcublas.so.13.1.0.3" -> "13.1.0.3").
func fileVersion(root, path string) string {
	real, err := filepath.EvalSymlinks(filepath.Join(root, path))
	if err != nil {
		real = path
	}
	_, v, ok := strings.Cut(filepath.Base(real), ".so.")
	if !ok {
		return ""
	}
	return v
}
