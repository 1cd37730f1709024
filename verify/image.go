package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// ImageCache stores compiled images by key (the rocmk cache, or any store).
type ImageCache interface {
	GetImage(key [32]byte) ([]byte, bool)
	PutImage(key [32]byte, data []byte, meta ImageMeta) error
}

// ImageMeta describes a cached image (shown by `rocmk cache ls`).
type ImageMeta struct {
	Source, Target, Toolchain string
}

// ImageOptions controls BuildImage.
type ImageOptions struct {
	Cache  ImageCache          // nil: no caching
	Getenv func(string) string // nil: os.Getenv
	Flags  []string            // extra compiler flags
	// BuildAMD compiles a HIP source for an AMD target (e.g. through the
	// compile package and the rocmk cache). nil: hipcc --genco from PATH,
	// ROCM_PATH or HIPCC.
	BuildAMD func(ctx context.Context, name string, src []byte, target string) ([]byte, error)
	// HIPInclude is a directory holding hip/hip_runtime.h with the NVIDIA
	// platform headers (hip/nvidia_detail); "" looks in $HIP_PATH/include,
	// $ROCM_PATH/include and /usr/include. Set NoNVCC to skip nvcc.
	HIPInclude string
	NoNVCC     bool
	// Log receives one line per compile decision (nil: discarded); Warn
	// receives fallbacks the user should know about (nil: Log).
	Log  func(format string, a ...any)
	Warn func(format string, a ...any)
}

// ImageResult says how an image was obtained.
type ImageResult struct {
	Image    []byte
	Compiler string // "nvcc", "nvrtc", "hipcc", "fake"
	Cached   bool
	Key      string
}

// BuildImage returns a loadable image of a HIP source for rt's device:
// on AMD a code object built for the device's gfx target; on NVIDIA a cubin
// for its sm_XY, from nvcc with the real HIP headers when both are found,
// else from NVRTC with rocmk's embedded device-side HIP shim. Images are
// cached under a key of everything that determines them.
func BuildImage(ctx context.Context, rt Runtime, name string, src []byte, o ImageOptions) (ImageResult, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Warn == nil {
		o.Warn = o.Log
	}
	dev := rt.Device()
	switch rt.Name() {
	case "fake":
		return ImageResult{Image: src, Compiler: "fake"}, nil
	case "hip":
		build := o.BuildAMD
		if build == nil {
			build = hipccBuild(o)
		}
		key := imageKey("hip", dev.Arch, "hipcc", o.Flags, src)
		return cached(o, key, name, dev.Arch, "hipcc", func() ([]byte, error) { return build(ctx, name, src, dev.Arch) })
	case "cuda":
		if !o.NoNVCC {
			if nvcc, inc := findNVCC(o.Getenv), findHIPInclude(o); nvcc != "" && inc != "" {
				id := toolID(ctx, nvcc, "--version")
				key := imageKey("cuda-nvcc", dev.Arch, id+"\n"+inc, o.Flags, src)
				// A failed nvcc compile is remembered (in the cache and for
				// this process), so later runs go straight to NVRTC.
				failKey := imageKey("cuda-nvcc-failed", dev.Arch, id+"\n"+inc, o.Flags, src)
				if msg, failed := nvccFailed(o, failKey); failed {
					if o.Cache != nil { // remember it for this module too: later runs skip nvcc at once
						if _, ok := o.Cache.GetImage(failKey); !ok {
							_ = o.Cache.PutImage(failKey, []byte(msg), ImageMeta{Source: name, Target: dev.Arch, Toolchain: "nvcc (failed)"})
						}
					}
					o.Log("%s: nvcc failed before with the HIP headers in %s, using NVRTC: %s", name, inc, msg)
				} else {
					res, err := cached(o, key, name, dev.Arch, "nvcc", func() ([]byte, error) {
						return nvccBuild(ctx, nvcc, inc, name, src, dev.Arch, o.Flags)
					})
					if err == nil {
						return res, nil
					}
					if ctx.Err() != nil {
						return ImageResult{}, ctx.Err()
					}
					msg := firstError(err.Error())
					if o.Cache != nil {
						_ = o.Cache.PutImage(failKey, []byte(err.Error()), ImageMeta{Source: name, Target: dev.Arch, Toolchain: "nvcc (failed)"})
					}
					nvccFailures.Store(failKey, msg)
					nvccBroken.Store(inc, msg)
					o.Warn("%s: nvcc with the HIP headers in %s failed, using NVRTC for the rest of this run: %s", name, inc, msg)
				}
			}
		}
		ver, err := nvrtcVersion(o.Getenv)
		if err != nil {
			return ImageResult{}, err
		}
		key := imageKey("cuda-nvrtc", dev.Arch, ver+"\n"+hipShim, o.Flags, src)
		return cached(o, key, name, dev.Arch, "nvrtc "+ver, func() ([]byte, error) {
			return nvrtcCompile(name, src, dev.Arch, o.Flags, o.Getenv)
		})
	}
	return ImageResult{}, fmt.Errorf("no image builder for backend %q", rt.Name())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func imageKey(kind, arch, tool string, flags []string, src []byte) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "rocmk-verify-image v1\nkind %s\ntarget %s\ntoolchain %s\nflags %q\n", kind, arch, tool, flags)
	s := sha256.Sum256(src)
	fmt.Fprintf(h, "src %x\n", s)
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

func cached(o ImageOptions, key [32]byte, name, target, tool string, build func() ([]byte, error)) (ImageResult, error) {
	hexKey := hex.EncodeToString(key[:])
	if o.Cache != nil {
		if img, ok := o.Cache.GetImage(key); ok {
			return ImageResult{Image: img, Compiler: strings.Fields(tool)[0], Cached: true, Key: hexKey}, nil
		}
	}
	img, err := build()
	if err != nil {
		return ImageResult{}, err
	}
	if o.Cache != nil {
		if err := o.Cache.PutImage(key, img, ImageMeta{Source: name, Target: target, Toolchain: tool}); err != nil {
			o.Log("%s: caching the image failed: %v", name, err)
		}
	}
	return ImageResult{Image: img, Compiler: strings.Fields(tool)[0], Key: hexKey}, nil
}

var toolIDs sync.Map

// toolID is the tool's path and --version output (part of the cache key).
func toolID(ctx context.Context, path string, arg string) string {
	if v, ok := toolIDs.Load(path); ok {
		return v.(string)
	}
	out, _ := exec.CommandContext(ctx, path, arg).CombinedOutput()
	id := path + "\n" + string(out)
	toolIDs.Store(path, id)
	return id
}

func findNVCC(getenv func(string) string) string {
	for _, p := range []string{getenv("NVCC"), filepath.Join(getenv("CUDA_PATH"), "bin", "nvcc"), filepath.Join(getenv("CUDA_HOME"), "bin", "nvcc")} {
		if p != "" && p != "bin/nvcc" && isExec(p) {
			return p
		}
	}
	if p, err := exec.LookPath("nvcc"); err == nil {
		return p
	}
	if isExec("/usr/local/cuda/bin/nvcc") {
		return "/usr/local/cuda/bin/nvcc"
	}
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// findHIPInclude returns a directory with hip/hip_runtime.h and
// hip/nvidia_detail (HIP's NVIDIA platform headers).
func findHIPInclude(o ImageOptions) string {
	cands := []string{o.HIPInclude}
	if o.HIPInclude == "" {
		cands = []string{o.Getenv("ROCMK_HIP_INCLUDE")}
		for _, v := range []string{"HIP_PATH", "ROCM_PATH"} {
			if r := o.Getenv(v); r != "" {
				cands = append(cands, filepath.Join(r, "include"))
			}
		}
		cands = append(cands, "/usr/include", "/opt/rocm/include")
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(c, "hip", "nvidia_detail")); err == nil {
			return c
		}
	}
	return ""
}

func nvccBuild(ctx context.Context, nvcc, inc, name string, src []byte, arch string, flags []string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "rocmk-nvcc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, filepath.Base(name))
	out := filepath.Join(dir, "out.cubin")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		return nil, err
	}
	argv := append([]string{"-x", "cu", "-cubin", "-arch=" + arch, "-O3", "-D__HIP_PLATFORM_NVIDIA__", "-I" + inc, "-o", out}, flags...)
	argv = append(argv, in)
	cmd := exec.CommandContext(ctx, nvcc, argv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("# %s [%s]\n%s%w", name, arch, stderr.String(), err)
	}
	return os.ReadFile(out)
}

// hipccBuild compiles with hipcc --genco (used when no BuildAMD hook is set).
func hipccBuild(o ImageOptions) func(ctx context.Context, name string, src []byte, target string) ([]byte, error) {
	return func(ctx context.Context, name string, src []byte, target string) ([]byte, error) {
		hipcc := o.Getenv("HIPCC")
		if hipcc == "" {
			if r := o.Getenv("ROCM_PATH"); r != "" && isExec(filepath.Join(r, "bin", "hipcc")) {
				hipcc = filepath.Join(r, "bin", "hipcc")
			} else if p, err := exec.LookPath("hipcc"); err == nil {
				hipcc = p
			}
		}
		if hipcc == "" {
			return nil, envError(ErrRuntimeUnavailable, "hip: no hipcc to compile %s for %s (set HIPCC or ROCM_PATH)", name, target)
		}
		dir, err := os.MkdirTemp("", "rocmk-hipcc-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		in, out := filepath.Join(dir, filepath.Base(name)), filepath.Join(dir, "out.hsaco")
		if err := os.WriteFile(in, src, 0o644); err != nil {
			return nil, err
		}
		argv := append([]string{"--genco", "--offload-arch=" + target, "-O3", "-o", out}, o.Flags...)
		cmd := exec.CommandContext(ctx, hipcc, append(argv, in)...)
		var stderr bytes.Buffer
		cmd.Stderr, cmd.Stdout = &stderr, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("# %s [%s]\n%s%w", name, target, stderr.String(), err)
		}
		return os.ReadFile(out)
	}
}

// errNoNVRTC is wrapped when NVRTC cannot be loaded.
var errNoNVRTC = errors.New("NVRTC not found")

var nvccFailures sync.Map

// nvccBroken marks an include directory nvcc failed with in this process:
// the other modules skip nvcc rather than fail the same way.
var nvccBroken sync.Map

func nvccFailed(o ImageOptions, key [32]byte) (string, bool) {
	if v, ok := nvccFailures.Load(key); ok {
		return v.(string), true
	}
	if v, ok := nvccBroken.Load(findHIPInclude(o)); ok {
		return v.(string), true
	}
	if o.Cache != nil {
		if b, ok := o.Cache.GetImage(key); ok {
			return firstLine(string(b)), true
		}
	}
	return "", false
}

// firstError is the first line of compiler output that says "error", else
// the first line.
func firstError(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return firstLine(s)
}
