package verify

// HIPRTC is AMD's runtime compiler (libhiprtc, dlopen'd like libamdhip64:
// <HIP_PATH|ROCM_PATH>/lib first, then the sonames). It only calls the
// library: verify/gpu decides options, headers and the cache key.
type HIPRTC struct {
	Getenv func(string) string // reads HIP_PATH and ROCM_PATH; nil: none
}

// ID is the library's version and file identity ("6.4 /path size mtime
// inode"): it changes when ROCm is upgraded. Errors wrap
// ErrRuntimeUnavailable.
func (h HIPRTC) ID() (string, error) { return hiprtcID(h.Getenv) }

// Compile compiles HIP C++ to a code object for the targets that opts name
// (--offload-arch=gfx90a); headers maps include names to their text. log
// is hipRTC's output, also on success (warnings).
func (h HIPRTC) Compile(name string, src []byte, headers map[string]string, opts []string) ([]byte, string, error) {
	return hiprtcCompile(h.Getenv, name, src, headers, opts)
}
