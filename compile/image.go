package compile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// NVRTC is NVIDIA's runtime compiler as compile needs it: verify's cgo
// binding (verify.NVRTC) implements it and the caller wires it in, so compile
// stays free of cgo and still owns every build decision (options, headers,
// cache key).
type NVRTC interface {
	// ID identifies the library for cache keys (its version and the file
	// it was loaded from). It loads the library; its error says why it
	// cannot be loaded.
	ID() (string, error)
	// Compile compiles the CUDA C++ source src to a cubin. headers maps
	// include names to their text; log is the compiler's output.
	Compile(name string, src []byte, headers map[string]string, opts []string) (cubin []byte, log string, err error)
}

// Image is a loadable GPU image built by ImageBuilder.
type Image struct {
	Data []byte
	// Object is the parsed code object of an AMD image (nil for others):
	// its kernels and their arguments.
	Object   *inspect.CodeObject
	Compiler string // "clang" (the Builder's layout), "nvcc", "nvrtc" or "host"
	Cached   bool
}

// ImageBuilder builds a HIP source into the image one GPU loads: on AMD
// a code object for the device's target through a Builder (the same
// key and cache entry as `rocmk build`); on NVIDIA a cubin for its
// sm_XY, from nvcc with HIP's headers for the NVIDIA platform when they are
// installed and work, else nvcc with rocmk's own (hipnv/), else NVRTC with
// rocmk's headers and the CUDA toolkit's include directory. Every key
// holds the compiler's identity, so a toolchain upgrade rebuilds. It is
// safe for concurrent use.
type ImageBuilder struct {
	Run    runner.Runner       // every program runs through it
	Cache  Store               // nil: no cache
	Getenv func(string) string // nil: os.Getenv
	// LookPath finds nvcc on PATH (nil: exec.LookPath; a Session's is the
	// one its discovery uses).
	LookPath func(string) (string, error)
	Flags    []string // extra compiler flags
	// Toolchain returns the AMD toolchain that builds a target (a
	// Session's ToolchainFor); it is called on each AMD build.
	Toolchain func(context.Context, inspect.Target) (toolchain.Toolchain, error)
	// NVRTC compiles when nvcc cannot (nil: no NVRTC).
	NVRTC NVRTC
	// HIPInclude holds hip/hip_runtime.h and hip/nvidia_detail (HIP's
	// NVIDIA platform headers); "" looks in $ROCMK_HIP_INCLUDE,
	// $HIP_PATH/include, $ROCM_PATH/include, /usr/include and
	// /opt/rocm/include. NoNVCC skips nvcc.
	HIPInclude string
	NoNVCC     bool
	// TreeRoot is where rocmk's HIP headers are written for nvcc
	// (content-addressed; "": under the temporary directory).
	TreeRoot string
	// Log receives one line per compile decision and Warn the fallbacks
	// the user should know about (nil: discarded; nil Warn: Log).
	Log, Warn func(format string, a ...any)

	record func(*Report) // a Session's: counts AMD builds for the cache's statistics
	// nvccFailed remembers, for this builder's life, nvcc failures by key
	// and by HIP include directory: the other modules skip nvcc rather
	// than fail the same way.
	nvccFailed sync.Map
	nvccWarn   sync.Once // a bad $NVCC is said once
}

// imageFormat is the first line of every image key: bump it when the key
// or the stored data changes meaning.
const imageFormat = "rocmk-image v1"

// Build returns the image of src for a device of platform p and arch
// ("gfx90a:sramecc+:xnack-", "sm_90"). A Host device loads the source as
// it is.
func (ib *ImageBuilder) Build(ctx context.Context, p Platform, arch, name string, src []byte) (Image, error) {
	return ib.BuildSource(ctx, p, arch, ImageSource{Name: name, Data: src})
}

// BuildSource is Build for a source that may be a file of a translated tree.
func (ib *ImageBuilder) BuildSource(ctx context.Context, p Platform, arch string, s ImageSource) (Image, error) {
	switch p {
	case AMD:
		return ib.buildAMD(ctx, arch, s)
	case NVIDIA:
		return ib.buildNVIDIA(ctx, arch, s)
	case Host:
		return Image{Data: s.Data, Compiler: "host"}, nil
	}
	return Image{}, fmt.Errorf("no image builder for %v", p)
}

func (ib *ImageBuilder) lookPath(name string) (string, error) {
	if ib.LookPath == nil {
		return exec.LookPath(name)
	}
	return ib.LookPath(name)
}

func (ib *ImageBuilder) getenv(k string) string {
	if ib.Getenv == nil {
		return os.Getenv(k)
	}
	return ib.Getenv(k)
}

func (ib *ImageBuilder) logf(format string, a ...any) {
	if ib.Log != nil {
		ib.Log(format, a...)
	}
}

func (ib *ImageBuilder) warnf(format string, a ...any) {
	if ib.Warn != nil {
		ib.Warn(format, a...)
		return
	}
	ib.logf(format, a...)
}

// buildAMD compiles s for one gfx target through a Builder: one job, the
// build cache's key and entry.
func (ib *ImageBuilder) buildAMD(ctx context.Context, arch string, s ImageSource) (Image, error) {
	t, err := inspect.ParseTarget(arch)
	if err != nil {
		return Image{}, fmt.Errorf("device target %q: %w", arch, err)
	}
	if ib.Toolchain == nil {
		return Image{}, fmt.Errorf("%w: no AMD toolchain given", toolchain.ErrToolchainNotFound)
	}
	tc, err := ib.Toolchain(ctx, t)
	if err != nil {
		return Image{}, err
	}
	dir, file, flags, done, err := s.open()
	if err != nil {
		return Image{}, err
	}
	defer done()
	out, removeOut, err := safefile.MkdirTemp("rocmk-image-out-")
	if err != nil {
		return Image{}, err
	}
	defer removeOut()
	b := newBuilder(tc, nil, ib.Run, ib.Cache, 1, BuildOptions{})
	// The compiler runs in the source's directory (BaseDir: a temporary
	// one, or the tree), so the key does not name it.
	rep, err := b.Build(ctx, Request{BaseDir: dir, Sources: []string{filepath.Join(dir, file)}, Targets: []inspect.Target{t},
		Flags: append(append([]string(nil), ib.Flags...), flags...), OutDir: out, NoManifest: true})
	if rep != nil && ib.record != nil && !errors.Is(err, context.Canceled) {
		ib.record(rep)
	}
	if err != nil {
		return Image{}, err
	}
	r := rep.Results[0]
	compiler := tc.Name()
	if c, ok := tc.(*toolchain.Clang); ok {
		compiler = c.Layout
	}
	return Image{Data: r.Object.Data, Object: r.Object, Compiler: compiler, Cached: r.Status == StatusHit}, nil
}

// buildNVIDIA tries nvcc with the installed HIP headers, then nvcc with
// rocmk's, then NVRTC.
func (ib *ImageBuilder) buildNVIDIA(ctx context.Context, arch string, s ImageSource) (Image, error) {
	nvcc := ib.findNVCC()
	if nvcc == "" || ib.NoNVCC {
		return ib.nvrtc(arch, s)
	}
	// tried says whether to stop at an nvcc result: a success, a cancel.
	tried := func(img Image, err error, inc, next string) bool {
		if err == nil || ctx.Err() != nil {
			return true
		}
		if !errors.Is(err, errNVCCFailedBefore) {
			ib.warnf("%s: nvcc with the HIP headers in %s failed, %s: %s", s.Name, inc, next, firstError(err.Error()))
		}
		return false
	}
	if inc := ib.findHIPInclude(); inc != "" {
		if img, err := ib.nvcc(ctx, nvcc, inc, false, arch, s); tried(img, err, inc, "trying rocmk's HIP headers") {
			return img, err
		}
	}
	t, err := hipnvTree(ib.treeRoot())
	if err != nil {
		ib.logf("rocmk's HIP headers for nvcc: %v", err)
	} else if img, err := ib.nvcc(ctx, nvcc, t.Dir, true, arch, s); tried(img, err, t.Dir, "using NVRTC for the rest of this run") {
		return img, err
	}
	return ib.nvrtc(arch, s)
}

// treeRoot is where rocmk's HIP headers are written for nvcc.
func (ib *ImageBuilder) treeRoot() string {
	if ib.TreeRoot != "" {
		return ib.TreeRoot
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("rocmk-trees-%d", os.Getuid()))
}

// errNVCCFailedBefore: nvcc failed on this source (or, in this run, with
// these HIP headers) before; the caller goes to NVRTC without a warning.
var errNVCCFailedBefore = errors.New("nvcc failed before")

// nvcc compiles with nvcc and the HIP headers in inc: HIP's for the NVIDIA
// platform, or rocmk's (the image's compiler is then "nvcc-rocmk"). A
// failure is remembered in the cache (for this source) and for the
// builder's life (for the include directory), so later modules and runs go
// straight to the next headers or NVRTC.
func (ib *ImageBuilder) nvcc(ctx context.Context, nvcc, inc string, rocmk bool, arch string, s ImageSource) (Image, error) {
	id, err := ib.nvccIdentity(ctx, nvcc)
	if err != nil {
		if _, failed := ib.nvccFailed.LoadOrStore("nvcc "+nvcc, firstError(err.Error())); failed {
			return Image{}, errNVCCFailedBefore // said once already
		}
		return Image{}, err
	}
	// rocmk's headers are named by their content, not by where they are
	headers, keyInc, compiler := hipnvID(), "ROCMK_HIP", "nvcc-rocmk"
	if !rocmk {
		keyInc, compiler = inc, "nvcc"
		if headers, err = toolchain.TreeIdentity(ib.Cache, "hip-headers", filepath.Join(inc, "hip")); err != nil {
			if _, failed := ib.nvccFailed.LoadOrStore(inc, firstError(err.Error())); failed {
				return Image{}, errNVCCFailedBefore
			}
			return Image{}, fmt.Errorf("HIP headers: %w", err)
		}
	}
	argv := func(in, out string, flags []string, inc string) []string {
		// HIP's clang lets device code call constexpr host functions
		// (std::min, numeric_limits<float>::infinity()); nvcc needs asking
		a := append([]string{nvcc, "-x", "cu", "-cubin", "-arch=" + arch, "-O3", "--expt-relaxed-constexpr", "-D__HIP_PLATFORM_NVIDIA__"}, flags...)
		a = append(append(a, "-I"+inc, "-o", out), ib.Flags...)
		return append(a, in)
	}
	var keyFlags []string
	if s.Tree != nil {
		_, _, keyFlags, _, _ = s.open() // a tree's flags are fixed: relative to it
	}
	name := s.Name
	key := func(kind string) cache.ActionID {
		h := cache.NewHash(kind + " " + name + " " + arch)
		h.Line("%s", imageFormat)
		h.Line("kind %s", kind)
		h.Line("target %s", arch)
		h.Line("nvcc %s", id)
		h.Line("hip-headers %s %s", keyInc, headers)
		h.Line("argv %q", argv("SRC", "OUT", keyFlags, keyInc))
		ib.keyEnv(h, "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "CPATH", "CPLUS_INCLUDE_PATH")
		h.Line("%s", s.identity())
		return h.Sum()
	}
	failKey := key("nvcc-failed")
	if msg, failed := ib.nvccFailedBefore(inc, failKey); failed {
		ib.remember(failKey, msg, name, arch)
		ib.logf("%s: nvcc failed before with the HIP headers in %s: %s", name, inc, msg)
		return Image{}, errNVCCFailedBefore
	}
	meta := cache.Meta{Kind: "image", Source: filepath.Base(name), Target: arch, Toolchain: "nvcc"}
	img, err := ib.cached(key(compiler), meta, compiler, func() ([]byte, error) {
		dir, file, flags, done, err := s.open()
		if err != nil {
			return nil, err
		}
		defer done()
		tmp, removeTmp, err := safefile.MkdirTemp("rocmk-nvcc-")
		if err != nil {
			return nil, err
		}
		defer removeTmp()
		out := filepath.Join(tmp, "out.cubin")
		res, err := ib.Run.Run(ctx, runner.Cmd{Dir: dir, Argv: argv(file, out, flags, inc)})
		if err != nil {
			return nil, fmt.Errorf("# %s [%s]\n%s%s%w", name, arch, res.Stdout, res.Stderr, err)
		}
		return os.ReadFile(out)
	})
	if err != nil && ctx.Err() == nil {
		msg := firstError(err.Error())
		ib.nvccFailed.Store(failKey, msg)
		ib.nvccFailed.Store(inc, msg)
		ib.remember(failKey, err.Error(), name, arch)
	}
	return img, err
}

func (ib *ImageBuilder) nvccFailedBefore(inc string, failKey cache.ActionID) (string, bool) {
	for _, k := range []any{failKey, inc} {
		if v, ok := ib.nvccFailed.Load(k); ok {
			return v.(string), true
		}
	}
	if ib.Cache != nil {
		if b, err := get(ib.Cache, failKey); err == nil {
			return firstLine(string(b)), true
		}
	}
	return "", false
}

// remember stores an nvcc failure under its key, unless it is there.
func (ib *ImageBuilder) remember(failKey cache.ActionID, msg, name, arch string) {
	if ib.Cache == nil {
		return
	}
	if _, err := get(ib.Cache, failKey); err == nil {
		return
	}
	_ = put(ib.Cache, failKey, []byte(msg), cache.Meta{Kind: "nvcc-failed", Source: filepath.Base(name), Target: arch, Toolchain: "nvcc"})
}

// nvrtc compiles with NVRTC, given rocmk's HIP headers and the C and C++
// headers it lacks in memory, the source's own (s.Headers), and the CUDA
// toolkit's include directory (for cuda_fp16.h and the like).
func (ib *ImageBuilder) nvrtc(arch string, s ImageSource) (Image, error) {
	name := s.Name
	if _, err := s.headerNames(); err != nil {
		return Image{}, err
	}
	if ib.NVRTC == nil {
		return Image{}, fmt.Errorf("%w: no nvcc and no NVRTC to compile %s for %s", toolchain.ErrToolchainNotFound, name, arch)
	}
	id, err := ib.NVRTC.ID()
	if err != nil {
		return Image{}, err
	}
	lib := ""
	if l, ok := ib.NVRTC.(nvrtcLibrary); ok {
		lib = l.Library()
	}
	cudaInc := cudaIncludeDirs(ib.getenv, ib.findNVCC(), lib)
	opts := append([]string{"--gpu-architecture=" + arch, "-std=c++17", "-DNDEBUG", "-default-device"}, ib.Flags...)
	var treeFlags []string
	if s.Tree != nil {
		_, _, treeFlags, _, _ = s.open()
		name = s.Tree.Path(s.Rel)
	}
	h := cache.NewHash("nvrtc " + s.Name + " " + arch)
	h.Line("%s", imageFormat)
	h.Line("kind nvrtc")
	h.Line("target %s", arch)
	h.Line("nvrtc %s", id)
	h.Line("headers %s", hipnvID())
	if len(cudaInc) > 0 { // the others are inside it (cccl/)
		ident, err := toolchain.TreeIdentity(ib.Cache, "cuda-headers", cudaInc[0])
		if err != nil {
			return Image{}, fmt.Errorf("CUDA headers: %w", err)
		}
		h.Line("cuda-include %q %s", cudaInc, ident)
	}
	h.Line("opts %q %q", opts, treeFlags)
	h.Line("%s", s.identity())
	meta := cache.Meta{Kind: "image", Source: filepath.Base(s.Name), Target: arch, Toolchain: "nvrtc"}
	return ib.cached(h.Sum(), meta, "nvrtc", func() ([]byte, error) {
		all := append([]string(nil), opts...)
		if s.Tree != nil {
			all = append(all, absFlags(s.Tree.Dir, treeFlags)...)
		}
		for _, d := range cudaInc {
			all = append(all, "-I"+d)
		}
		headers := nvrtcHeaders()
		for n, text := range s.Headers { // the source's own; its name wins
			headers[n] = text
		}
		cubin, log, err := ib.NVRTC.Compile(name, s.Data, headers, all)
		if err != nil {
			return nil, fmt.Errorf("# %s [%s] (NVRTC)\n%s%w", s.Name, arch, log, err)
		}
		return cubin, nil
	})
}

// cached returns the image stored under key, else builds and stores it.
func (ib *ImageBuilder) cached(key cache.ActionID, meta cache.Meta, compiler string, build func() ([]byte, error)) (Image, error) {
	if ib.Cache != nil {
		if data, err := get(ib.Cache, key); err == nil && len(data) > 0 {
			return Image{Data: data, Compiler: compiler, Cached: true}, nil
		}
	}
	data, err := build()
	if err != nil {
		return Image{}, err
	}
	if ib.Cache != nil {
		if err := put(ib.Cache, key, data, meta); err != nil {
			ib.logf("%s: caching the image failed: %v", meta.Source, err)
		}
	}
	return Image{Data: data, Compiler: compiler}, nil
}

func (ib *ImageBuilder) keyEnv(h *cache.Hash, vars ...string) {
	for _, v := range vars {
		if s := ib.getenv(v); s != "" {
			h.Line("env %s=%s", v, s)
		}
	}
}

// nvccIdentity is nvcc's identity for image keys: its binary's sha256 and
// its `--version` text, remembered under its stamp as clang's is (see
// remember), so an upgraded nvcc changes every key.
func (ib *ImageBuilder) nvccIdentity(ctx context.Context, path string) (string, error) {
	return toolchain.Remember(ib.Cache, "nvcc", toolchain.FileStamp(path), func() (string, error) {
		out, err := ib.Run.Run(ctx, runner.Cmd{Argv: []string{path, "--version"}})
		if err != nil {
			return "", fmt.Errorf("%s --version: %w", path, err)
		}
		sum, err := toolchain.FileDigest(path)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("nvcc %s\nversion %q", sum, strings.TrimSpace(string(out.Stdout))), nil
	})
}

// findNVCC looks at $NVCC, $CUDA_PATH/bin, $CUDA_HOME/bin, PATH and
// /usr/local/cuda/bin.
func (ib *ImageBuilder) findNVCC() string {
	var cands []string
	if p := ib.getenv("NVCC"); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			ib.nvccWarn.Do(func() { ib.warnf("NVCC=%s is not an executable file: looking for nvcc elsewhere", p) })
		}
		cands = append(cands, p)
	}
	for _, v := range []string{"CUDA_PATH", "CUDA_HOME"} {
		if r := ib.getenv(v); r != "" {
			cands = append(cands, filepath.Join(r, "bin", "nvcc"))
		}
	}
	if p, err := ib.lookPath("nvcc"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/local/cuda/bin/nvcc")
	for _, p := range cands {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// findHIPInclude returns a directory with hip/nvidia_detail.
func (ib *ImageBuilder) findHIPInclude() string {
	cands := []string{ib.HIPInclude}
	if ib.HIPInclude == "" {
		cands = []string{ib.getenv("ROCMK_HIP_INCLUDE")}
		for _, v := range []string{"HIP_PATH", "ROCM_PATH"} {
			if r := ib.getenv(v); r != "" {
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

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
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
