package kernels

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/verify"
	"github.com/rocmk/rocmk/verify/blas"
	"github.com/rocmk/rocmk/verify/port"
)

// Report is what `rocmk verify` found running the suite (rocmk.verify/v1).
type Report struct {
	Device   verify.Device       `json:"device"`
	Backend  string              `json:"backend"`
	Size     int                 `json:"size"`
	Seed     uint64              `json:"seed"`
	Modules  []Module            `json:"modules"`
	Cases    []verify.CaseResult `json:"cases"`
	Passed   int                 `json:"passed"`
	Mismatch int                 `json:"mismatched"`
	Errors   int                 `json:"errors"`
	Skipped  int                 `json:"skipped,omitempty"`
	// BelowGoal counts the timed cases under their Goal (reported, not
	// failed); CopyBandwidthGBps is the measured copy bandwidth goals
	// without a peer are a fraction of (verify.MeasureCopyBandwidth).
	BelowGoal         int     `json:"below_goal,omitempty"`
	CopyBandwidthGBps float64 `json:"copy_bandwidth_gb_per_s,omitempty"`
	CopyBandwidthErr  string  `json:"copy_bandwidth_error,omitempty"`
	// BLAS is the vendor library the blas family ran on ("cuBLAS 13.1.0
	// (path)"), or why it did not run.
	BLAS string `json:"blas,omitempty"`
	// BLASLt is the same for the blaslt_* cases (cuBLASLt, hipBLASLt).
	BLASLt string `json:"blaslt,omitempty"`
	// CopyGBps is the bandwidth of unary_copy_f32 when it ran (the baseline
	// elementwise kernels are compared with).
	CopyGBps    float64 `json:"copy_gb_per_s,omitempty"`
	PeakGBps    float64 `json:"peak_gb_per_s"`
	WallSeconds float64 `json:"wall_s"` // the caller's: from opening the runtime to the end
}

// Module is how one module's image was built for the device.
type Module struct {
	Source   string  `json:"source"`
	Compiler string  `json:"compiler"`
	Cached   bool    `json:"cached"`
	Seconds  float64 `json:"compile_s"`
	Error    string  `json:"error,omitempty"`
}

// VerifyOptions say how the suite runs.
type VerifyOptions struct {
	Options // the cases' size and seed
	Images  *compile.ImageBuilder
	// Source, with SourceName, replaces every selected kernel's module (a
	// modified or hand-ported kernel checked against the references).
	Source     []byte
	SourceName string
	Run        verify.RunOptions // Image is set by Verify
	// Built receives each module as it is built, before it is loaded (nil: none).
	Built func(Module)
	// Getenv reads CUDA_PATH, ROCM_PATH... where the BLAS library is looked
	// for (nil: none set).
	Getenv func(string) string
}

// Verify builds each module the cases need for rt's device (through the
// image builder: the build cache, the toolchain's identity in every key),
// loads it, and runs, times and compares the cases on it.
func Verify(ctx context.Context, rt verify.Runtime, cases []*verify.Case, o VerifyOptions) (*Report, error) {
	dev := rt.Device()
	var mu sync.Mutex
	var mods []Module
	o.Run.Image = func(ctx context.Context, module string) (verify.Image, error) {
		name, src := module, o.Source
		if src == nil {
			var err error
			if src, err = Source(module); err != nil {
				return verify.Image{}, err
			}
		} else {
			name = o.SourceName
		}
		t0 := time.Now()
		img, err := o.Images.Build(ctx, port.PlatformOf(rt), dev.Arch, name, src)
		m := Module{Source: name, Compiler: img.Compiler, Cached: img.Cached, Seconds: time.Since(t0).Seconds()}
		if err != nil {
			m.Error = err.Error()
		}
		mu.Lock()
		mods = append(mods, m)
		mu.Unlock()
		if o.Built != nil {
			o.Built(m)
		}
		return verify.Image{Data: img.Data, Explain: "built by " + img.Compiler}, err
	}
	var blasLib, blasLtLib string
	// open opens a vendor library as a module; desc receives what it is
	// (name, version, file) or why it did not open.
	open := func(openLib func(verify.Runtime, func(string) string) (*blas.Library, error), desc *string) func() (verify.Module, error) {
		return func() (verify.Module, error) {
			l, err := openLib(rt, o.Getenv)
			if err != nil {
				*desc = err.Error()
				return nil, err
			}
			*desc = fmt.Sprintf("%s %s (%s)", l.Name, l.Version, l.Path)
			return verify.NewLibraryModule(rt, l), nil
		}
	}
	o.Run.Libraries = map[string]func() (verify.Module, error){BLASModule: open(blas.Open, &blasLib), BLASLtModule: open(blas.OpenLt, &blasLtLib)}
	rep, err := verify.Run(ctx, rt, cases, o.Run)
	if rep == nil {
		return nil, err
	}
	opts := o.Options.withDefaults()
	r := &Report{Device: dev, Backend: rt.Name(), Size: opts.Size, Seed: opts.Seed, Modules: mods, Cases: rep.Cases,
		Passed: rep.Passed, Mismatch: rep.Mismatch, Errors: rep.Errors, Skipped: rep.Skipped, BelowGoal: rep.BelowGoal,
		CopyBandwidthGBps: rep.CopyBandwidth / 1e9, CopyBandwidthErr: rep.CopyBandwidthError, BLAS: blasLib, BLASLt: blasLtLib,
		PeakGBps: dev.PeakBandwidth() / 1e9}
	for _, c := range rep.Cases {
		if c.Name == "unary_copy_f32" && c.GBps > 0 {
			r.CopyGBps = c.GBps
		}
	}
	return r, err
}
