package gpu

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/inspect"
	"github.com/rocmk/rocmk/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const rtcSrc = `#include <hip/hip_runtime.h>
#include "scale.h"
extern "C" __global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= SCALE;
}
`

// realHIPRTC is libhiprtc, or a skip where it cannot load (-short, no
// cgo, no ROCm): the current-ROCm sysroot lane has it (docs/runtime.md).
func realHIPRTC(t *testing.T) verify.HIPRTC {
	if testing.Short() {
		t.Skip("needs libhiprtc (not in -short)")
	}
	h := verify.HIPRTC{Getenv: os.Getenv}
	if _, err := h.ID(); errors.Is(err, verify.ErrRuntimeUnavailable) {
		t.Skipf("no hipRTC: %v", err)
	}
	return h
}

func rtcCode(scale string, opts ...string) Code {
	return Code{Name: "scale.hip", Src: []byte(rtcSrc), Headers: map[string]string{"scale.h": "#define SCALE " + scale + "\n"}, Options: opts}
}

// TestHIPRTCReal compiles with the real libhiprtc for three targets; each
// result is a code object inspect reads, for the target asked, with the
// kernel in it.
func TestHIPRTCReal(t *testing.T) {
	h := realHIPRTC(t)
	r := &RTC{Compiler: h}
	for _, target := range []string{"gfx90a", "gfx942", "gfx1100", "gfx90a:sramecc+:xnack-"} {
		start := time.Now()
		obj, hit, err := r.Build(rtcCode("2.0f"), target)
		t.Logf("%s: compiled %d bytes in %v", target, len(obj), time.Since(start))
		require.NoError(t, err, target)
		assert.False(t, hit)
		f, err := inspect.Parse(target+".co", obj)
		require.NoError(t, err, target)
		require.NotEmpty(t, f.Objects, "%s: %s", target, f.Kind)
		co := f.Objects[0]
		assert.Equal(t, target, co.Target.String())
		var names []string
		for _, k := range co.Kernels {
			names = append(names, k.Name)
		}
		assert.Contains(t, names, "scale", target)
		ch, err := FromBundle(target+".co", obj)
		require.NoError(t, err)
		_, err = Choose(target, ch)
		assert.NoError(t, err, "the compiled object fits its own target")
	}
}

// TestHIPRTCHeadersReal: the code's headers reach libhiprtc, a quoted one
// and one in a subdirectory included with <>: the kernel's name comes from
// a header, and the object has that kernel.
func TestHIPRTCHeadersReal(t *testing.T) {
	h := realHIPRTC(t)
	code := Code{Name: "named.hip", Src: []byte("#include <hip/hip_runtime.h>\n#include \"name.h\"\n#include <sub/body.h>\n" +
		"extern \"C\" __global__ void KNAME(float* x) { BODY; }\n"),
		Headers: map[string]string{"name.h": "#define KNAME from_user_header\n", "sub/body.h": "#define BODY x[threadIdx.x] += 1.0f\n"}}
	obj, _, err := (&RTC{Compiler: h}).Build(code, "gfx1100")
	require.NoError(t, err)
	f, err := inspect.Parse("named.co", obj)
	require.NoError(t, err)
	require.NotEmpty(t, f.Objects)
	var names []string
	for _, k := range f.Objects[0].Kernels {
		names = append(names, k.Name)
	}
	assert.Equal(t, []string{"from_user_header"}, names)
}

// TestHIPRTCCompileErrorReal: a compile error comes back with hipRTC's log.
func TestHIPRTCCompileErrorReal(t *testing.T) {
	h := realHIPRTC(t)
	code := rtcCode("2.0f")
	code.Src = []byte("extern \"C\" __global__ void k(float* x) { x[0] = undeclared_name; }\n")
	_, _, err := (&RTC{Compiler: h}).Build(code, "gfx1100")
	var ce *CompileError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Contains(t, ce.Log, "undeclared_name")
	assert.Contains(t, ce.Log, "error")
}

// TestHIPRTCCacheAcrossProcesses: a second process gets the object from
// the cache without compiling; a changed header or option is a miss.
func TestHIPRTCCacheAcrossProcesses(t *testing.T) {
	realHIPRTC(t)
	dir := filepath.Join(t.TempDir(), "cache")
	run := func(scale, opt string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHIPRTCHelperProcess$")
		cmd.Env = append(os.Environ(), "ROCMK_GPU_HELPER="+dir+"|"+scale+"|"+opt)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "TOOK ") {
				t.Log(l) // docs/runtime.md's numbers
			}
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "RESULT ") {
				return strings.TrimPrefix(l, "RESULT ")
			}
		}
		t.Fatalf("no result in %s", out)
		return ""
	}
	first := run("2.0f", "-O3")
	assert.True(t, strings.HasPrefix(first, "miss "), first)
	second := run("2.0f", "-O3")
	assert.Equal(t, "hit "+strings.TrimPrefix(first, "miss "), second, "the second process reads the same object")
	assert.True(t, strings.HasPrefix(run("3.0f", "-O3"), "miss "), "a changed header")
	assert.True(t, strings.HasPrefix(run("2.0f", "-O2"), "miss "), "a changed option")
	assert.True(t, strings.HasPrefix(run("2.0f", "-O2"), "hit "))
}

// TestHIPRTCHelperProcess is the second process of the test above.
func TestHIPRTCHelperProcess(t *testing.T) {
	env := os.Getenv("ROCMK_GPU_HELPER")
	if env == "" {
		t.Skip("helper process only")
	}
	parts := strings.Split(env, "|")
	c, err := cache.Open(parts[0])
	require.NoError(t, err)
	r := &RTC{Compiler: verify.HIPRTC{Getenv: os.Getenv}, Cache: c}
	start := time.Now()
	obj, hit, err := r.Build(rtcCode(parts[1], parts[2]), "gfx1100")
	require.NoError(t, err)
	how := "miss"
	if hit {
		how = "hit"
	}
	fmt.Printf("RESULT %s %x\n", how, sha256.Sum256(obj))
	fmt.Printf("TOOK %s %v\n", how, time.Since(start))
}
