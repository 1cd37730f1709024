// Command example runs one of rocmk's suite kernels (binary_add_f32 of
// kernels/binary.hip, embedded in the program through package kernels) on
// whatever GPU it finds, through verify/gpu: the code object shipped for the
// device if one fits (-objects: files `rocmk build` wrote, code objects or
// offload bundles), else a run-time compile, hipRTC on AMD and NVRTC on
// NVIDIA, cached in rocmk's cache. It checks the result and prints how the
// kernel was loaded and how long each step took.
//
//	go build -o bin/example ./kernels/example && bin/example -objects build/binary.hipfb
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
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
	objects := flag.String("objects", "", "comma-separated code objects or offload bundles shipped for binary.hip")
	n := flag.Int("n", 1<<20, "elements")
	flag.Parse()
	if err := run(*backend, *objects, *n); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

// nvrtcBuilder compiles with compile.ImageBuilder's NVRTC path, the one
// `rocmk verify` uses on NVIDIA (rocmk's HIP-on-NVIDIA headers).
type nvrtcBuilder struct{ ib *compile.ImageBuilder }

func (b nvrtcBuilder) Build(code gpu.Code, target string) ([]byte, bool, error) {
	b.ib.Flags = code.Options
	img, err := b.ib.Build(context.Background(), compile.NVIDIA, target, code.Name, code.Src)
	return img.Data, img.Cached, err
}

func run(backend, objects string, n int) error {
	rt, err := verify.Open(backend, 0, os.Getenv)
	if err != nil {
		return err
	}
	dir, _, err := cache.DefaultDir(os.Getenv)
	if err != nil {
		rt.Close()
		return err
	}
	c, err := cache.Open(dir)
	if err != nil {
		rt.Close()
		return err
	}
	var b gpu.Builder = &gpu.RTC{Compiler: verify.HIPRTC{Getenv: os.Getenv}, Cache: c}
	if rt.Name() == "cuda" {
		b = nvrtcBuilder{&compile.ImageBuilder{Cache: c, NVRTC: verify.NVRTC{Getenv: os.Getenv}, NoNVCC: true}}
	}
	d := gpu.New(rt, b)
	defer d.Close()
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
	src, err := kernels.Source("binary.hip")
	if err != nil {
		return err
	}
	d.Add("binary", gpu.Source{Objects: shipped, Code: &gpu.Code{Name: "binary.hip", Src: src, Options: []string{"-DNDEBUG"}}})
	fmt.Printf("device: %s (%s, %s)\n", d.Info().Name, rt.Name(), d.Info().Arch)

	t := time.Now()
	f, err := d.Function("binary", "binary_add_f32")
	if err != nil {
		return err
	}
	first := time.Since(t)
	t = time.Now()
	if _, err := d.Function("binary", "binary_add_f32"); err != nil {
		return err
	}
	again := time.Since(t)
	fmt.Printf("loaded: %s\nfirst Function %v, second %v\n", d.Explain("binary"), first.Round(time.Microsecond), again)
	return addAndCheck(d, f, n)
}

// addAndCheck adds two vectors on the GPU and compares with the CPU.
func addAndCheck(d *gpu.Device, f *gpu.Function, n int) error {
	a, bb := make([]byte, 4*n), make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(a[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(bb[4*i:], math.Float32bits(0.5))
	}
	var ptrs [3]verify.DevPtr
	for i := range ptrs {
		p, err := d.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer d.Free(p)
		ptrs[i] = p
	}
	if err := d.CopyIn(ptrs[0], a); err != nil {
		return err
	}
	if err := d.CopyIn(ptrs[1], bb); err != nil {
		return err
	}
	t := time.Now()
	err := f.Launch(context.Background(), verify.D1((n+255)/256), verify.D1(256), 0,
		verify.Ptr(ptrs[0]), verify.Ptr(ptrs[1]), verify.Ptr(ptrs[2]), verify.Int64(int64(n)))
	if err != nil {
		return err
	}
	launch := time.Since(t)
	out := make([]byte, 4*n)
	if err := d.CopyOut(out, ptrs[2]); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])); got != float32(i)+0.5 {
			return fmt.Errorf("element %d: got %v, want %v", i, got, float32(i)+0.5)
		}
	}
	fmt.Printf("binary_add_f32 on %d elements: correct; launch and wait %v\n", n, launch.Round(time.Microsecond))
	return nil
}
