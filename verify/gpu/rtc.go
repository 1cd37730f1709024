package gpu

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rocmk/rocmk/cache"
)

// Compiler is a runtime compiler: verify.HIPRTC or verify.NVRTC.
type Compiler interface {
	// ID names the compiler and its version and file; a new ID is a new
	// cache key, so an upgraded ROCm or CUDA never hits an old entry.
	ID() (string, error)
	Compile(name string, src []byte, headers map[string]string, opts []string) ([]byte, string, error)
}

// Code is a kernel source to compile when no shipped object fits.
type Code struct {
	Name    string            // file name in messages and the compiler's log
	Src     []byte            // HIP C++
	Headers map[string]string // include name -> text
	Options []string          // compiler options besides the target
}

// RTC compiles Code for one target at run time and keeps the result in
// rocmk's content-addressed cache.
type RTC struct {
	Compiler Compiler
	// Arch makes the target option: "--offload-arch=" for hipRTC (the
	// default), "--gpu-architecture=" for NVRTC.
	ArchFlag string
	Cache    *cache.Cache // nil: compile every time
}

// CompileError is a failed compile, with the compiler's log.
type CompileError struct {
	Name, Target string
	Log          string
	Err          error
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s: run-time compile for %s failed: %v\n%s", e.Name, e.Target, e.Err, strings.TrimRight(e.Log, "\n"))
}

func (e *CompileError) Unwrap() error { return e.Err }

func (r *RTC) archFlag() string {
	if r.ArchFlag == "" {
		return "--offload-arch="
	}
	return r.ArchFlag
}

// Key is the cache key of code compiled for target: the source, every
// header, the options, the target and the compiler's identity and version.
func (r *RTC) Key(code Code, target string) (cache.ActionID, error) {
	id, err := r.Compiler.ID()
	if err != nil {
		return cache.ActionID{}, err
	}
	h := cache.NewHash("gpu rtc")
	h.Line("compiler %s", id)
	h.Line("target %s", target)
	for _, o := range r.options(code, target) {
		h.Line("option %q", o)
	}
	h.Line("source %s %x", code.Name, sha256.Sum256(code.Src))
	names := make([]string, 0, len(code.Headers))
	for n := range code.Headers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h.Line("header %q %x", n, sha256.Sum256([]byte(code.Headers[n])))
	}
	return h.Sum(), nil
}

func (r *RTC) options(code Code, target string) []string {
	return append(append([]string(nil), code.Options...), r.archFlag()+target)
}

// Build returns the object of code for target from the cache, or compiles
// and stores it; hit says which. A failed compile is a *CompileError with
// the log.
func (r *RTC) Build(code Code, target string) (obj []byte, hit bool, err error) {
	key, err := r.Key(code, target)
	if err != nil {
		return nil, false, err
	}
	if r.Cache != nil {
		b, _, err := r.Cache.GetBytes(key)
		if err == nil {
			return b, true, nil
		}
		if !errors.Is(err, cache.ErrNotFound) {
			return nil, false, err
		}
	}
	obj, log, err := r.Compiler.Compile(code.Name, code.Src, code.Headers, r.options(code, target))
	if err != nil {
		return nil, false, &CompileError{Name: code.Name, Target: target, Log: log, Err: err}
	}
	if r.Cache != nil {
		id, _ := r.Compiler.ID()
		if _, err := r.Cache.PutBytes(key, obj, cache.Meta{Kind: "rtc-object", Source: code.Name, Target: target, Toolchain: id}); err != nil {
			return nil, false, err
		}
	}
	return obj, false, nil
}
