// Command example runs one kernel of rocmk's suite (the suite's .hip
// sources are embedded in the program through package kernels; -kernel
// picks one by name, binary_add_f32 by default) on whatever GPU it finds,
// through verify/gpu: the code object shipped for the device if one fits
// (-objects: files `rocmk build` wrote, code objects or offload bundles),
// else a run-time compile, hipRTC on AMD and NVRTC on NVIDIA, cached in
// rocmk's cache. It checks the result against the suite's Go reference and
// prints how the kernel was loaded and how long each step took.
//
//	go build -o bin/example ./kernels/example && bin/example -kernel softmax_f32 -objects build/softmax.hipfb
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/kernels"
	"github.com/rocmk/rocmk/verify"
	"github.com/rocmk/rocmk/verify/gpu"
)

func main() {
	backend := flag.String("backend", "auto", "auto, hip or cuda")
	kernel := flag.String("kernel", "binary_add_f32", "the suite kernel to run (an unknown name lists them)")
	objects := flag.String("objects", "", "comma-separated code objects or offload bundles shipped for the kernel's module")
	n := flag.Int("n", 1<<20, "elements of the kernel's main tensor")
	flag.Parse()
	if err := run(os.Stdout, *backend, *kernel, *objects, *n); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

// nvrtcBuilder compiles with compile.ImageBuilder's NVRTC path, the one
// `rocmk verify` uses on NVIDIA (rocmk's HIP-on-NVIDIA headers), with the
// code's own headers and options.
type nvrtcBuilder struct{ ib *compile.ImageBuilder }

func (b nvrtcBuilder) Build(code gpu.Code, target string) ([]byte, bool, error) {
	b.ib.Flags = code.Options // one build at a time here
	img, err := b.ib.BuildSource(context.Background(), compile.NVIDIA, target,
		compile.ImageSource{Name: code.Name, Data: code.Src, Headers: code.Headers})
	return img.Data, img.Cached, err
}

// run finds the kernel (before any GPU: a wrong name needs none), opens
// the GPU and runs the kernel on it.
func run(w io.Writer, backend, kernel, objects string, n int) error {
	spec, err := kernels.Lookup(kernel)
	if err != nil {
		return err
	}
	rt, err := verify.Open(backend, 0, os.Getenv)
	if err != nil {
		return err
	}
	c, err := openCache()
	if err != nil {
		rt.Close()
		return err
	}
	var b gpu.Builder = &gpu.RTC{Compiler: verify.HIPRTC{Getenv: os.Getenv}, Cache: c}
	if rt.Name() == "cuda" {
		ib := &compile.ImageBuilder{NVRTC: verify.NVRTC{Getenv: os.Getenv}, NoNVCC: true}
		if c != nil {
			ib.Cache = c
		}
		b = nvrtcBuilder{ib}
	}
	d := gpu.New(rt, b)
	defer d.Close()
	return runOn(w, d, spec, objects, n)
}

// openCache opens rocmk's cache, as rocmk finds it (nil: ROCMK_CACHE=off).
func openCache() (*cache.Cache, error) {
	dir, off, err := cache.DefaultDir(os.Getenv)
	if err != nil || off {
		return nil, err
	}
	return cache.Open(dir)
}

// runOn loads spec's module on d (a shipped object, else a run-time
// compile of the embedded source), runs its case and compares.
func runOn(w io.Writer, d *gpu.Device, spec kernels.Spec, objects string, n int) error {
	var shipped []gpu.Object
	for _, f := range strings.FieldsFunc(objects, func(r rune) bool { return r == ',' }) {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		objs, err := gpu.FromBundle(f, data)
		if err != nil {
			return err
		}
		shipped = append(shipped, objs...)
	}
	src, err := kernels.Source(spec.Module)
	if err != nil {
		return err
	}
	module := strings.TrimSuffix(spec.Module, ".hip")
	d.Add(module, gpu.Source{Objects: shipped, Code: &gpu.Code{Name: spec.Module, Src: src, Options: []string{"-DNDEBUG"}}})
	fmt.Fprintf(w, "device: %s (%s, %s)\n", d.Info().Name, d.Info().Backend, d.Info().Arch)

	t := time.Now()
	if _, err := d.Function(module, spec.Name); err != nil {
		return err
	}
	first := time.Since(t)
	t = time.Now()
	if _, err := d.Function(module, spec.Name); err != nil {
		return err
	}
	fmt.Fprintf(w, "loaded: %s\nfirst Function %v, second %v\n", d.Explain(module), first.Round(time.Microsecond), time.Since(t))

	c := spec.Make(kernels.Options{Size: n})
	if c.Gen != nil {
		c.Gen(c)
	}
	out, err := d.Run(context.Background(), module, c.Plan(c.Ref(c.Buffers)), verify.RunnerOptions{Warmup: 2, Repeats: 10})
	if err != nil {
		return err
	}
	if !out.OK() {
		for _, o := range out.Outputs {
			if !o.Comparison.OK() {
				return fmt.Errorf("%s: %s", spec.Name, o.Describe())
			}
		}
		return fmt.Errorf("%s: %s", spec.Name, out.Status)
	}
	fmt.Fprintf(w, "%s on %d elements: %s", spec.Name, c.Elems, out.Status)
	if out.Time != nil {
		fmt.Fprintf(w, "; GPU time median %v over %d runs", out.Time.Median, out.Time.Repeats)
	}
	fmt.Fprintln(w)
	return nil
}
