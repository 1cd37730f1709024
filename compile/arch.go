package compile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rocmk/rocmk/inspect"
)

// ErrNoTargets means no GPU target was given and none could be detected.
var ErrNoTargets = errors.New("no GPU target selected")

// ArchEnvVars are the environment variables SelectTargets reads, in order
// of precedence (after --arch and the project manifest).
var ArchEnvVars = []string{"ROCMK_ARCH", "PYTORCH_ROCM_ARCH", "GPU_TARGETS", "AMDGPU_TARGETS", "CANDLE_ROCM_ARCH"}

// SelectTargets picks the GPU targets to build for: the --arch flag (each
// value may be a comma list; "native" means the detected GPUs), else the
// project manifest, else ROCMK_ARCH, else PYTORCH_ROCM_ARCH, GPU_TARGETS,
// AMDGPU_TARGETS (deprecated) or CANDLE_ROCM_ARCH (lists separated by
// commas, semicolons or spaces), else the detected AMD GPUs. source says
// which one ("--arch", "manifest", "ROCMK_ARCH", ..., "detected GPUs").
// With none of them it returns an error wrapping ErrNoTargets that asks
// for --arch. The targets are validated with clang's rules.
func SelectTargets(flag []string, manifest []string, getenv func(string) string, gpus []GPU) ([]inspect.Target, string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	parse := func(list, source string) ([]inspect.Target, string, error) {
		var fields []string
		native := false
		for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' }) {
			if f == "native" {
				native = true
				continue
			}
			fields = append(fields, f)
		}
		var ts []inspect.Target
		if native {
			ts = AMDTargets(gpus)
			if len(ts) == 0 {
				return nil, source, fmt.Errorf("%w: %s: \"native\" asks for the detected GPUs, and no AMD GPU was found; name targets, e.g. --arch gfx90a", ErrNoTargets, source)
			}
		}
		for _, f := range fields {
			t, err := inspect.ParseTarget(f)
			if err != nil {
				return nil, source, fmt.Errorf("%s: %w", source, err)
			}
			ts = append(ts, t)
		}
		if len(ts) == 0 {
			return nil, source, fmt.Errorf("%w: %s names no target (%q); give e.g. gfx90a", ErrNoTargets, source, list)
		}
		if err := inspect.ValidateTargets(ts); err != nil {
			return nil, source, fmt.Errorf("%s: %w", source, err)
		}
		return ts, source, nil
	}
	if len(flag) > 0 {
		return parse(strings.Join(flag, ","), "--arch")
	}
	if len(manifest) > 0 {
		return parse(strings.Join(manifest, ","), "manifest")
	}
	for _, v := range ArchEnvVars {
		if s := strings.TrimSpace(getenv(v)); s != "" {
			return parse(s, v)
		}
	}
	if ts := AMDTargets(gpus); len(ts) > 0 {
		return ts, "detected GPUs", nil
	}
	return nil, "", fmt.Errorf("%w: no --arch flag, no targets in the project manifest, ROCMK_ARCH and %s unset, and no AMD GPU detected\n  fix: pass --arch, e.g. --arch gfx90a,gfx1100 (rocmk targets lists them)",
		ErrNoTargets, strings.Join(ArchEnvVars[1:], "/"))
}
