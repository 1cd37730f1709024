package toolchain

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Checkup is what `rocmk doctor` says about the toolchain, the GPUs and
// the targets `rocmk build` would pick (its JSON fields are doctor's).
type Checkup struct {
	Toolchain    *Installation `json:"toolchain"`
	ToolchainErr string        `json:"toolchain_error,omitempty"`
	// Toolchains are the candidates in order of preference, each with its
	// probe and the targets it builds, or why it was skipped.
	Toolchains []*Candidate `json:"toolchains"`
	GPUs       []GPU        `json:"gpus"`
	GPUErr     string       `json:"gpu_error,omitempty"`
	Arch       ArchCheck    `json:"arch"`
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
	// Choices are the selected targets' toolchains; Unbuildable lists
	// those no toolchain builds.
	Choices     []*TargetChoice `json:"choices"`
	Unbuildable []string        `json:"unbuildable,omitempty"`
}

// Checkup discovers the toolchain and the GPUs and resolves the targets
// arch (--arch) would select, without building anything.
func (r *Resolver) Checkup(ctx context.Context, arch []string) Checkup {
	c := Checkup{GPUs: []GPU{}, Toolchains: []*Candidate{}}
	inst, err := r.Installation()
	if err != nil {
		c.ToolchainErr, c.Err = err.Error(), err
		c.Problems = append(c.Problems, "no ROCm toolchain: rocmk build cannot run (install: sudo apt-get install hipcc, or set ROCM_PATH)")
	} else {
		c.Toolchain = inst
		if inst.DeviceLibTargets == nil {
			inst.DeviceLibTargets = []string{}
		}
		c.Problems = append(c.Problems, inst.Warnings...)
		if cs, err := r.Candidates(ctx); err == nil {
			c.Toolchains = cs
		} else {
			c.Problems = append(c.Problems, err.Error())
		}
		for _, t := range c.Toolchains {
			if t.Skipped != "" {
				c.Problems = append(c.Problems, fmt.Sprintf("%s (%s) skipped: %s", t.Name, t.Clang, t.Skipped))
			}
		}
	}
	gpus, gpuErr := DetectGPUs(r.FindOptions())
	if gpus != nil {
		c.GPUs = gpus
	}
	if gpuErr != nil {
		c.GPUErr = gpuErr.Error()
		c.Problems = append(c.Problems, gpuErr.Error())
	}
	ts, archErr := ResolveTargets(TargetRequest{Flag: arch, Getenv: r.o.Getenv, GPUs: func() []GPU { return gpus }})
	c.Arch = ArchCheck{Targets: []string{}, Source: ts.From, Choices: []*TargetChoice{}}
	for _, t := range ts.List {
		c.Arch.Targets = append(c.Arch.Targets, t.String())
		if inst == nil {
			continue
		}
		ch := r.Choose(ctx, t)
		c.Arch.Choices = append(c.Arch.Choices, ch)
		if ch.err != nil {
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
		c.Problems = append(c.Problems, fmt.Sprintf("no toolchain here builds %s (see Build targets); %s, or use a newer ROCm (ROCM_PATH) or other targets",
			strings.Join(c.Arch.Unbuildable, ", "), InstallHint))
	}
	if w := r.OlderDeviceLibs(ctx, ts.List); w != "" && inst != nil {
		c.Problems = append(c.Problems, w)
	}
	return c
}
