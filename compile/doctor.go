package compile

import (
	"errors"
	"fmt"
	"strings"
)

// Checkup is what `rocmk doctor` says about the toolchain, the GPUs and
// the targets `rocmk build` would pick (its JSON fields are doctor's).
type Checkup struct {
	Toolchain    *Installation `json:"toolchain"`
	ToolchainErr string        `json:"toolchain_error,omitempty"`
	GPUs         []GPU         `json:"gpus"`
	GPUErr       string        `json:"gpu_error,omitempty"`
	Arch         ArchCheck     `json:"arch"`
	// Problems say what stops or limits a build, each with its fix.
	Problems []string `json:"-"`
	// Err is the toolchain's discovery error (nil: rocmk build can run).
	Err error `json:"-"`
}

// ArchCheck is the target selection with --arch (or the environment, or
// the GPUs).
type ArchCheck struct {
	Targets []string `json:"targets"`
	Source  string   `json:"source,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Unbuildable lists selected targets the toolchain has no device libraries for.
	Unbuildable []string `json:"unbuildable,omitempty"`
}

// Checkup discovers the toolchain and the GPUs and resolves the targets
// arch (--arch) would select, without building anything.
func (s *Session) Checkup(arch []string) Checkup {
	c := Checkup{GPUs: []GPU{}}
	inst, err := s.Installation()
	if err != nil {
		c.ToolchainErr, c.Err = err.Error(), err
		c.Problems = append(c.Problems, "no ROCm toolchain: rocmk build cannot run (install: sudo apt-get install hipcc, or set ROCM_PATH)")
	} else {
		c.Toolchain = inst
		if inst.DeviceLibTargets == nil {
			inst.DeviceLibTargets = []string{}
		}
		c.Problems = append(c.Problems, inst.Warnings...)
	}
	gpus, gpuErr := DetectGPUs(s.FindOptions())
	if gpus != nil {
		c.GPUs = gpus
	}
	if gpuErr != nil {
		c.GPUErr = gpuErr.Error()
		c.Problems = append(c.Problems, gpuErr.Error())
	}
	ts, archErr := ResolveTargets(TargetRequest{Flag: arch, Getenv: s.o.Getenv, GPUs: func() []GPU { return gpus }})
	c.Arch = ArchCheck{Targets: []string{}, Source: ts.From}
	for _, t := range ts.List {
		c.Arch.Targets = append(c.Arch.Targets, t.String())
		if inst != nil && !inst.CanCompile(t) {
			c.Arch.Unbuildable = append(c.Arch.Unbuildable, t.String())
		}
	}
	switch {
	case errors.Is(archErr, ErrNoTargets):
		c.Arch.Error = archErr.Error()
		c.Problems = append(c.Problems, "no GPU target: rocmk build needs --arch (or ROCMK_ARCH, or a GPU)")
	case archErr != nil:
		c.Arch.Error = archErr.Error()
		c.Problems = append(c.Problems, archErr.Error())
	}
	if len(c.Arch.Unbuildable) > 0 {
		c.Problems = append(c.Problems, fmt.Sprintf("the toolchain has no device libraries for %s: use a newer ROCm (ROCM_PATH) or other targets",
			strings.Join(c.Arch.Unbuildable, ", ")))
	}
	return c
}
