package toolchain

import (
	"slices"
	"strings"
)

// The compiler inherits rocmk's environment, and some variables change
// what it builds: clang's driver reads CCC_OVERRIDE_OPTIONS (edits the
// command line), COMPILER_PATH and the include-path variables; hipcc and
// the HIP driver read HIP_*, HIPCC_*, ROCM_*, HSA_PATH and DEVICE_LIB_PATH.
// Every such variable that is set is in the cache key (docs/cache.md,
// "The compiler's environment"): keying one too many costs a miss, one too
// few a wrong object.
var (
	compilerEnvNames = []string{
		"CCC_OVERRIDE_OPTIONS", "COMPILER_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
		"OBJC_INCLUDE_PATH", "OBJCPLUS_INCLUDE_PATH", "SOURCE_DATE_EPOCH", "CLANG_NO_DEFAULT_CONFIG",
		"DEVICE_LIB_PATH", "HSA_PATH", "GCC_EXEC_PREFIX", "LIBRARY_PATH",
	}
	compilerEnvPrefixes = []string{"CCC_", "CC_", "CLANG_", "HIP_", "HIPCC_", "ROCM_", "HCC_", "AMDGPU_"}
	// Variables with those prefixes that only the runtime reads: keying them
	// would make every GPU-pinned job (Slurm, CI shards) miss.
	runtimeOnlyEnv = []string{"HIP_VISIBLE_DEVICES", "HIP_LAUNCH_BLOCKING", "ROCM_VISIBLE_DEVICES"}
)

// CompilerEnv returns, sorted, the "K=V" entries of environ that change
// what the compiler builds.
func CompilerEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && keyedEnvName(k) {
			out = append(out, kv)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func keyedEnvName(k string) bool {
	if slices.Contains(compilerEnvNames, k) {
		return true
	}
	if slices.Contains(runtimeOnlyEnv, k) {
		return false
	}
	for _, p := range compilerEnvPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}
