package toolchain

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/inspect"
)

// The probe: before a candidate toolchain builds a target, it compiles and
// links probe.hip for that target with the build's own command line and
// the result must read back as a code object for it. A clang without its
// linker, device libraries it cannot read, or headers and libraries that
// do not link together fail here, with a fix, instead of in every job.
// The verdict is remembered in the local cache under the stat data of
// everything it depends on (the clang, the linker beside it, the device
// libraries, the HIP headers), so the next run costs a few stats.

//go:embed probe.hip
var probeSource []byte

// probeFormat starts every verdict's key: bump it when the probe changes.
const probeFormat = "rocmk-probe v1"

// probe runs (or recalls) tc's probe for t's processor.
func (r *Resolver) probe(ctx context.Context, tc *Clang, t inspect.Target) *Probe {
	t = inspect.Target{Proc: t.Proc}
	key := r.probeKey(tc, t)
	return r.probes.Do(key, func() *Probe {
		local := localStore(r.Store())
		if local != nil {
			if b, err := get(local, key); err == nil {
				if p := parseVerdict(b, t.Proc); p != nil {
					return p
				}
			}
		}
		p := r.runProbe(ctx, tc, t)
		if p.OK {
			r.o.Verbose("toolchain: probe %s with %s: ok", t, tc.Name())
		} else {
			r.o.Verbose("toolchain: %s with %s: %s", t, tc.Name(), p.why())
		}
		if local != nil && ctx.Err() == nil {
			_ = put(local, key, []byte(verdictText(p)), cache.Meta{Kind: "probe", Target: t.Proc, Toolchain: tc.Name()})
		}
		return p
	})
}

// probeKey covers what the verdict depends on, by stat data: the command
// line, the clang binary and the linker beside it, the device libraries,
// the HIP headers and the environment that changes a compile.
func (r *Resolver) probeKey(tc *Clang, t inspect.Target) cache.ActionID {
	o := r.FindOptions()
	h := cache.NewHash("probe " + t.Proc)
	h.Line("%s", probeFormat)
	h.Line("source %x", sha256.Sum256(probeSource))
	h.Line("argv %q", tc.Argv(Job{Src: "probe.hip", Target: t, Out: "OUT"}))
	clang := resolve(o.path(tc.Clang))
	h.Line("clang %s", FileStamp(clang))
	for _, ld := range []string{"ld.lld", "lld"} {
		h.Line("linker %s", FileStamp(filepath.Join(filepath.Dir(clang), ld)))
	}
	libs := o.path(tc.DeviceLibDir)
	files, _ := TreeFiles(libs)
	h.Line("libs %s", treeStamp(libs, files))
	if tc.HIPInclude != "" {
		for _, f := range []string{"hip/hip_runtime.h", "hip/hip_version.h"} {
			h.Line("hip %s", FileStamp(o.path(filepath.Join(tc.HIPInclude, f))))
		}
	}
	for _, kv := range CompilerEnv(os.Environ()) {
		h.Line("env %s", kv)
	}
	return h.Sum()
}

// runProbe compiles and links probe.hip for t with tc, in a temporary
// directory, and reads the object back.
func (r *Resolver) runProbe(ctx context.Context, tc *Clang, t inspect.Target) *Probe {
	p := &Probe{Target: t.Proc}
	dir, remove, err := safefile.MkdirTemp("rocmk-probe-")
	if err != nil {
		p.Error = err.Error()
		return p
	}
	defer remove()
	if err := safefile.Write(filepath.Join(dir, "probe.hip"), probeSource, safefile.Options{}); err != nil {
		p.Error = err.Error()
		return p
	}
	j := Job{Src: "probe.hip", Dir: dir, Target: t, Out: filepath.Join(dir, "probe.hsaco")}
	argv := tc.Argv(j)
	argv[0] = r.FindOptions().path(argv[0])
	out, err := r.Run.Run(ctx, runner.Cmd{Dir: dir, Argv: argv})
	if err != nil {
		p.Error, p.Fix = diagnose(out.Stderr, err, tc, t.Proc)
		return p
	}
	data, err := safefile.Read(j.Out, MaxObjectSize)
	if err == nil {
		_, err = ReadObject(data, t)
	}
	if err != nil {
		p.Error = "no code object for " + t.Proc + ": " + err.Error()
		return p
	}
	p.OK = true
	return p
}

// diagnose turns a failed probe's stderr into what failed and the fix.
func diagnose(stderr []byte, err error, tc *Clang, proc string) (what, fix string) {
	msg := string(stderr)
	major := "N"
	if v := strings.SplitN(tc.ClangVersion, ".", 2)[0]; v != "" {
		major = v
	}
	switch {
	case strings.Contains(msg, `Executable "ld.lld" doesn't exist`), strings.Contains(msg, `Executable "lld" doesn't exist`):
		return "its linker (lld) is missing", "sudo apt-get install lld-" + major
	case strings.Contains(msg, "Unknown attribute kind"), strings.Contains(msg, "Invalid record"),
		strings.Contains(msg, "Unknown intrinsic"), strings.Contains(msg, "Invalid bitcode"):
		return "it cannot read the device libraries in " + tc.DeviceLibDir + " (made by a newer LLVM): " + lineWith(msg, "error"),
			"pair it with older device libraries, or use a newer clang"
	case strings.Contains(msg, "cannot find ROCm device library"):
		return "no device library for " + proc + " in " + tc.DeviceLibDir, ""
	case strings.Contains(msg, "invalid target ID"), strings.Contains(msg, "Unsupported CUDA gpu architecture"),
		strings.Contains(msg, "unknown target CPU"):
		return "clang " + major + " does not know " + proc, ""
	case strings.Contains(msg, "undefined hidden symbol"), strings.Contains(msg, "undefined symbol"):
		return "the device libraries do not link with the HIP headers: " + lineWith(msg, "undefined"),
			"use device libraries of a ROCm release close to the HIP headers' (" + tc.HIPVersion + ")"
	}
	if l := lineWith(msg, "error"); l != "" {
		return l, ""
	}
	if l := strings.TrimSpace(msg); l != "" {
		return strings.SplitN(l, "\n", 2)[0], ""
	}
	return err.Error(), ""
}

// firstLine is the first line of msg containing word, trimmed ("" none).
func lineWith(msg, word string) string {
	for _, l := range strings.Split(msg, "\n") {
		if strings.Contains(l, word) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// verdictText is how a verdict is stored: "ok", or "fail", the error and
// the fix on three lines.
func verdictText(p *Probe) string {
	if p.OK {
		return "ok"
	}
	return fmt.Sprintf("fail\n%s\n%s", oneLine(p.Error), oneLine(p.Fix))
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// parseVerdict reads a stored verdict (nil: not one).
func parseVerdict(b []byte, proc string) *Probe {
	lines := strings.Split(string(b), "\n")
	switch {
	case len(lines) == 1 && lines[0] == "ok":
		return &Probe{Target: proc, OK: true, Cached: true}
	case len(lines) == 3 && lines[0] == "fail":
		return &Probe{Target: proc, Error: lines[1], Fix: lines[2], Cached: true}
	}
	return nil
}
