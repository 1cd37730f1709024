package verify

// NVRTC is NVIDIA's runtime compiler, dlopen'd from the first of
// RuntimeLibraries' "nvrtc" names that loads. It implements compile.NVRTC:
// compile decides the options, headers and cache key; this only calls the
// library.
type NVRTC struct {
	Getenv func(string) string // reads CUDA_PATH and CUDA_HOME; nil: none
}

// ID is the library's version and file identity ("13.0 /path size mtime
// inode"): it changes when NVRTC is upgraded. Errors wrap
// ErrRuntimeUnavailable.
func (n NVRTC) ID() (string, error) { return nvrtcID(n.Getenv) }

// Library is the file NVRTC was loaded from ("" before ID or Compile
// loaded it, or when it cannot be known): the CUDA toolkit's include
// directory is beside it.
func (n NVRTC) Library() string { return nvrtcLibrary() }

// Compile compiles CUDA C++ to a cubin; headers maps include names to their
// text. log is NVRTC's output, also on success (warnings).
func (n NVRTC) Compile(name string, src []byte, headers map[string]string, opts []string) ([]byte, string, error) {
	return nvrtcCompile(n.Getenv, name, src, headers, opts)
}
