package toolchain

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/par"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/inspect"
)

// Options are what a Resolver knows before it looks for anything.
type Options struct {
	// Discovery: --rocm-path, the environment, and the fakes tests use
	// (see FindOptions).
	ROCmPath string
	Getenv   func(string) string
	Root     string
	LookPath func(string) (string, error)
	Runner   runner.Runner // nil: runner.ExecRunner
	Layout   string        // --layout ("" = clang)
	// Clang pins the clang of every target (--clang; "" = ROCMK_CLANG,
	// else the candidates' order, see Candidate).
	Clang string
	// Store remembers identities and probe verdicts (in its local cache);
	// nil: none.
	Store Store
	// CacheDir is where generated device libraries go ("": a temporary
	// directory, removed at Close).
	CacheDir string
	Verbose  func(format string, a ...any) // nil: discarded
}

// Resolver finds and chooses toolchains for one command: the installation
// (found on first use), the candidate clangs, each target's choice with
// its probe and generated device libraries, the GPUs and doctor's
// checkup. Each is worked out once and remembered. Its methods are safe
// for concurrent use.
type Resolver struct {
	o   Options
	Run runner.Runner

	tcOnce sync.Once
	in     *Installation
	tc     *Clang
	tcErr  error

	candFind, candOnce sync.Once // the candidates; their probes (Candidates)
	cands              []*Candidate
	candErr            error
	choices            par.Cache[string, *TargetChoice]
	probes             par.Cache[cache.ActionID, *Probe]

	mu            sync.Mutex
	tmpLibs       string // generated device libraries without a cache
	removeTmpLibs func()
}

// New makes a Resolver; it looks for nothing yet.
func New(o Options) *Resolver {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Verbose == nil {
		o.Verbose = func(string, ...any) {}
	}
	r := &Resolver{o: o, Run: o.Runner}
	if r.Run == nil {
		r.Run = runner.ExecRunner{}
	}
	return r
}

// Store is where the Resolver remembers identities and probes (nil: none).
func (r *Resolver) Store() Store { return r.o.Store }

// CacheDir is where generated device libraries go ("": a temporary
// directory).
func (r *Resolver) CacheDir() string { return r.o.CacheDir }

// FindOptions are the Resolver's discovery options.
func (r *Resolver) FindOptions() FindOptions {
	return FindOptions{ROCmPath: r.o.ROCmPath, Getenv: r.o.Getenv, LookPath: r.o.LookPath, Root: r.o.Root, Run: r.Run}
}

// Installation is the discovered toolchain installation, found once.
func (r *Resolver) Installation() (*Installation, error) {
	r.find()
	return r.in, r.tcErr
}

// Toolchain is the clang toolchain of the installation, in the Resolver's
// layout, found once. A bad layout is an error wrapping ErrBadLayout.
func (r *Resolver) Toolchain() (*Clang, error) {
	r.find()
	return r.tc, r.tcErr
}

// ToolchainFor is the toolchain that builds target t: the installation's
// clang where it can, else a newer clang with newer device libraries
// (Choose; toolchains.go). An error says why no candidate can (a
// *NoToolchainError), or wraps ErrToolchainNotFound. ctx ends the probes
// it runs (an interrupted build kills them).
func (r *Resolver) ToolchainFor(ctx context.Context, t inspect.Target) (Toolchain, error) {
	if _, err := r.Toolchain(); err != nil {
		return nil, err
	}
	ch := r.Choose(ctx, t)
	if ch.err != nil {
		return nil, ch.err
	}
	return ch.tc, nil
}

// OlderDeviceLibs is the warning for the targets of ts built with device
// libraries older than the target ("" when none).
func (r *Resolver) OlderDeviceLibs(ctx context.Context, ts []inspect.Target) string {
	var parts []string
	seen := map[string]bool{}
	for _, t := range ts {
		if seen[t.Proc] {
			continue
		}
		seen[t.Proc] = true
		if ch := r.Choose(ctx, t); ch.Older != "" {
			parts = append(parts, t.Proc+" ("+ch.Older+")")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "built with device libraries older than the target, not proven on hardware (docs/targets-and-doctor.md): " + strings.Join(parts, ", ")
}

// ErrBadLayout is wrapped by the error of an unknown --layout.
var ErrBadLayout = errors.New("unknown layout")

func (r *Resolver) find() {
	r.tcOnce.Do(func() {
		if r.in, r.tcErr = FindInstallation(r.FindOptions()); r.tcErr != nil {
			return
		}
		r.tc, r.tcErr = NewClang(r.in, r.o.Layout)
	})
}

// DefaultTargets are what a build with no target named compiles for: the
// common data-centre and desktop targets the toolchain can build.
func (r *Resolver) DefaultTargets(ctx context.Context) []inspect.Target {
	var out []inspect.Target
	for _, p := range []string{"gfx90a", "gfx942", "gfx1030", "gfx1100"} {
		t := inspect.MustParseTarget(p)
		if tc, err := r.ToolchainFor(ctx, t); err == nil && tc.Check(t) == nil {
			out = append(out, t)
		}
	}
	return out
}

// DetectGPUs lists the machine's GPUs (nil when detection fails).
func (r *Resolver) DetectGPUs() []GPU {
	gpus, _ := DetectGPUs(r.FindOptions())
	return gpus
}

// HIPVersion is the installation's HIP version, found without running
// any program (from hip_version.h: cheap); "" when there is none.
func (r *Resolver) HIPVersion() string {
	o := r.FindOptions()
	o.Run = noRun{}
	in, err := FindInstallation(o)
	if err != nil {
		return ""
	}
	return in.HIPVersion
}

// Close removes the device libraries generated without a cache.
func (r *Resolver) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removeTmpLibs != nil {
		r.removeTmpLibs()
		r.removeTmpLibs, r.tmpLibs = nil, ""
	}
}
