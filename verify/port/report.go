package port

import (
	"errors"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/verify"
	"github.com/rocmk/rocmk/verify/spec"
)

// Report is the outcome of Run: one entry per source and per kernel (the
// --json document of `rocmk port` and `rocmk verify --spec`).
type Report struct {
	Spec    string         `json:"spec"`
	Sources []*Source      `json:"sources"`
	Device  *verify.Device `json:"device,omitempty"`
	Kernels []*Verdict     `json:"kernels"`
	OK      bool           `json:"ok"`
	Summary Summary        `json:"summary"`

	// NoVerify: nothing was meant to run (--no-verify).
	NoVerify bool `json:"-"`
	// EnvErr is why nothing ran when the GPU runtime or device is missing.
	EnvErr error `json:"-"`
}

// Summary counts the verdicts.
type Summary struct {
	Kernels int `json:"kernels"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Cases   int `json:"cases"`
}

// Source is one source file's translation and builds.
type Source struct {
	File        string              `json:"file"`
	HIP         string              `json:"hip_file,omitempty"`
	Hipified    bool                `json:"hipified"`
	Replaced    int                 `json:"replacements"`
	Hazards     []hipify.Diagnostic `json:"hazards"`
	Builds      []Build             `json:"builds"`
	Image       string              `json:"device_compiler,omitempty"` // clang, nvcc, nvcc-rocmk, nvrtc
	ImageCached bool                `json:"device_image_cached,omitempty"`
	Tree        string              `json:"tree"` // the translated tree it was built in
	// Parity is, per image, the kernels the CUDA source defines against
	// those the image has.
	Parity []compile.KernelParity `json:"kernel_parity,omitempty"`
}

// Build is one AMD target's build of a source.
type Build struct {
	Target string `json:"target"`
	Status string `json:"status"`
	File   string `json:"file,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Verdict statuses.
const (
	StatusPass  = "pass"
	StatusFail  = "fail"  // ran, and some cases did not match
	StatusError = "error" // could not run or check it (Error says why)
	StatusBuilt = "built" // translated and built; nothing ran
)

// Verdict is one kernel's outcome.
type Verdict struct {
	Spec     string       `json:"spec"`
	Kernel   string       `json:"kernel"`
	Symbol   string       `json:"symbol,omitempty"`
	Source   string       `json:"source"`
	Hazards  int          `json:"hazards"`
	Built    []string     `json:"built_for"`
	Failed   []string     `json:"failed_targets,omitempty"`
	Checked  bool         `json:"metadata_checked"`
	Verified bool         `json:"verified"`
	Status   string       `json:"status"`
	Error    string       `json:"error,omitempty"`
	Result   *spec.Result `json:"result,omitempty"`

	specBad bool // the spec does not match the code object: nothing to run
}

func (v *Verdict) fail(err error) { v.Status, v.Error = StatusError, err.Error() }

// summarize fills OK and Summary from the verdicts.
func (r *Report) summarize() {
	r.OK = r.EnvErr == nil
	for _, v := range r.Kernels {
		r.Summary.Kernels++
		if v.Result != nil {
			r.Summary.Cases += len(v.Result.Cases)
		}
		switch v.Status {
		case StatusPass, StatusBuilt:
			r.Summary.Passed++
		default:
			r.Summary.Failed++
			r.OK = false
		}
	}
}

// Err is the report's outcome as an error: a *verify.MismatchError when
// cases did not match, the first kernel's error when one could not run,
// else EnvErr (nothing ran for want of a GPU), else nil.
func (r *Report) Err() error {
	failed := 0
	for _, v := range r.Kernels {
		if v.Result != nil {
			failed += v.Result.Failed()
		}
	}
	if failed > 0 {
		return &verify.MismatchError{Failed: failed, Total: r.Summary.Cases}
	}
	for _, v := range r.Kernels {
		if v.Status == StatusError || v.Status == StatusFail {
			return errors.New(v.Error)
		}
	}
	return r.EnvErr
}
