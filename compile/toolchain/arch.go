package toolchain

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rocmk/rocmk/inspect"
)

// ErrNoTargets means no GPU target was given and none could be detected.
var ErrNoTargets = errors.New("no GPU target selected")

// archEnvVars are the environment variables ResolveTargets reads, in order
// of precedence (after --arch and the project manifest).
var archEnvVars = []string{"ROCMK_ARCH", "PYTORCH_ROCM_ARCH", "GPU_TARGETS", "AMDGPU_TARGETS", "CANDLE_ROCM_ARCH"}

// TargetRequest says where a command's GPU targets may come from.
type TargetRequest struct {
	Flag     []string // --arch values: each a list, may say "native" (the detected GPUs)
	Manifest []string // the project's targets (used without Flag)
	// ManifestName names the manifest in Targets.From ("" = rocmk.toml).
	ManifestName string
	Getenv       func(string) string // ROCMK_ARCH & co. (nil: none set)
	// GPUs detects the machine's GPUs. It is called only for "native", or
	// when nothing names a target (nil: no detection).
	GPUs func() []GPU
	// Default gives the targets when nothing names one and no AMD GPU is
	// detected; nil makes that an error wrapping ErrNoTargets. A Default
	// returning none means no target, not an error (port: the device build
	// only).
	Default func() []inspect.Target
}

// Targets are the resolved targets and where they came from: "--arch",
// the manifest's name, "ROCMK_ARCH", ..., "detected GPUs", "default".
type Targets struct {
	List []inspect.Target
	From string
}

// ResolveTargets picks the GPU targets to build for: the --arch flag, else
// the project manifest, else ROCMK_ARCH, else PYTORCH_ROCM_ARCH,
// GPU_TARGETS, AMDGPU_TARGETS (deprecated) or CANDLE_ROCM_ARCH, else the
// detected AMD GPUs, else the request's Default. Lists are separated by
// commas, semicolons or spaces, as the ecosystem's variables write them;
// "native" stands for the detected GPUs. The targets are validated with
// clang's rules. Every error wraps ErrNoTargets or inspect.ErrInvalidTarget
// and names the source (a usage error: the fix is a flag or a variable).
func ResolveTargets(r TargetRequest) (Targets, error) {
	getenv := r.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	detected := func() []inspect.Target {
		if r.GPUs == nil {
			return nil
		}
		return AMDTargets(r.GPUs())
	}
	if len(r.Flag) > 0 {
		return parseTargets(strings.Join(r.Flag, ","), "--arch", detected)
	}
	if len(r.Manifest) > 0 {
		name := r.ManifestName
		if name == "" {
			name = "rocmk.toml" // compile.ProjectFile
		}
		return parseTargets(strings.Join(r.Manifest, ","), name, detected)
	}
	for _, v := range archEnvVars {
		if s := strings.TrimSpace(getenv(v)); s != "" {
			return parseTargets(s, v, detected)
		}
	}
	if ts := detected(); len(ts) > 0 {
		if err := inspect.ValidateTargets(ts); err != nil {
			return Targets{From: "detected GPUs"}, fmt.Errorf("detected GPUs: %w", err)
		}
		return Targets{ts, "detected GPUs"}, nil
	}
	if r.Default != nil {
		ts := r.Default()
		if len(ts) == 0 {
			return Targets{}, nil
		}
		return Targets{ts, "default"}, nil
	}
	return Targets{}, fmt.Errorf("%w: no --arch flag, no targets in the project manifest, ROCMK_ARCH and %s unset, and no AMD GPU detected\n  fix: pass --arch, e.g. --arch gfx90a,gfx1100 (rocmk targets lists them)",
		ErrNoTargets, strings.Join(archEnvVars[1:], "/"))
}

// parseTargets parses one source's list.
func parseTargets(list, source string, detected func() []inspect.Target) (Targets, error) {
	var ts []inspect.Target
	native := false
	for _, f := range SplitList(list) {
		if f == "native" {
			native = true
			continue
		}
		t, err := inspect.ParseTarget(f)
		if err != nil {
			return Targets{From: source}, fmt.Errorf("%s: %w", source, err)
		}
		ts = append(ts, t)
	}
	if native {
		d := detected()
		if len(d) == 0 {
			return Targets{From: source}, fmt.Errorf("%w: %s: \"native\" asks for the detected GPUs, and no AMD GPU was found; name targets, e.g. --arch gfx90a", ErrNoTargets, source)
		}
		ts = append(d, ts...)
	}
	if len(ts) == 0 {
		return Targets{From: source}, fmt.Errorf("%w: %s names no target (%q); give e.g. gfx90a", ErrNoTargets, source, list)
	}
	if err := inspect.ValidateTargets(ts); err != nil {
		return Targets{From: source}, fmt.Errorf("%s: %w", source, err)
	}
	return Targets{ts, source}, nil
}

// SplitList splits a list of targets (or processor names) the way the
// ecosystem's variables write them (PYTORCH_ROCM_ARCH, GPU_TARGETS):
// commas, semicolons or white space.
func SplitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' })
}

// String is the list as --arch takes it: "gfx90a,gfx1030".
func (t Targets) String() string {
	s := make([]string, len(t.List))
	for i, x := range t.List {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}
