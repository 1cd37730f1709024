package program

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocmk/rocmk/compile"
)

// buildTimeout bounds one build of a program.
const buildTimeout = 10 * time.Minute

// errNoCompiler says a side has no compiler here; the Side says which.
var errNoCompiler = errors.New("no compiler")

// build builds one side with the argv argvOf gives for the output path.
func (r *run) build(ctx context.Context, side string, argvOf func(out string) ([]string, string, error)) *Side {
	s := &Side{Name: side}
	dir := filepath.Join(r.o.Work, side)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.BuildError = err.Error()
		return s
	}
	s.Binary = filepath.Join(dir, "prog")
	argv, tool, err := argvOf(s.Binary)
	s.Toolchain = tool
	if err != nil {
		s.BuildError = err.Error()
		return s
	}
	s.BuildArgv = argv
	r.o.Info("%s: building the %s with %s", r.o.Program, side, tool)
	res, err := r.o.Exec.Run(ctx, Cmd{Argv: argv, Dir: dir, Timeout: buildTimeout})
	s.BuildTime = res.Elapsed
	switch {
	case err != nil:
		s.BuildError = err.Error()
	case res.ExitCode != 0 || res.Signal != "" || res.TimedOut:
		s.BuildError = res.Status() + ": " + firstError(string(res.Stderr)+string(res.Stdout))
		s.BuildLog = tail(string(res.Stderr)+string(res.Stdout), 4000)
	default:
		if _, err := os.Stat(s.Binary); err != nil {
			s.BuildError = tool + " reported success but wrote no program: " + err.Error()
		}
	}
	s.Built = s.BuildError == ""
	return s
}

// originalArgv is nvcc over the original units.
func (r *run) originalArgv(out string) ([]string, string, error) {
	t := r.o.Tools
	if t.NVCC == "" {
		return nil, "nvcc", errors.New("no nvcc here: record the original where nvcc is (--record FILE) and compare with --against FILE")
	}
	argv := []string{t.NVCC, "-O2"}
	if strings.HasPrefix(t.Arch, "sm_") {
		argv = append(argv, "-arch="+t.Arch)
	}
	for _, i := range r.includes {
		argv = append(argv, "-I"+i)
	}
	argv = append(append(argv, r.units...), "-o", out)
	return append(append(argv, libDirFlags(t.CUDALibDirs)...), linkFlags(r.rep.Libraries, false)...), "nvcc", nil
}

// translationArgv builds the translation: nvcc through HIP's NVIDIA
// platform on NVIDIA, hipcc for an AMD target (or, with no GPU, hipcc's
// default target, so a replay goes as far as it can).
func (r *run) translationArgv(out string) ([]string, string, error) {
	t := r.o.Tools
	units := make([]string, len(r.tree.Sources))
	for i, rel := range r.tree.Sources {
		units[i] = r.tree.Path(rel)
	}
	switch {
	case t.translationPlatform() == PlatformNVIDIA:
		if t.NVCC == "" {
			return nil, "nvcc (HIP's NVIDIA platform)", errors.New("no nvcc here: HIP's NVIDIA platform builds with nvcc")
		}
		inc, err := r.hipnvIncludes()
		if err != nil {
			return nil, "", err
		}
		argv := []string{t.NVCC, "-O2"}
		if strings.HasPrefix(t.Arch, "sm_") {
			argv = append(argv, "-arch="+t.Arch)
		}
		argv = append(append(append(argv, "-D__HIP_PLATFORM_NVIDIA__", "-Wno-deprecated-gpu-targets"), inc...), r.tree.IncludeFlags()...)
		argv = append(append(append(argv, "-x", "cu"), units...), "-o", out)
		return append(append(argv, libDirFlags(t.CUDALibDirs)...), linkFlags(r.rep.Libraries, true)...), "nvcc (HIP's NVIDIA platform)", nil
	case t.HIPCC == "":
		return nil, "hipcc", errors.New("no hipcc here: install ROCm (hipcc) to build the translation for AMD")
	}
	argv := []string{t.HIPCC, "-O2"}
	if strings.HasPrefix(t.Arch, "gfx") {
		argv = append(argv, "--offload-arch="+t.Arch)
	}
	argv = append(append(argv, r.tree.IncludeFlags()...), units...)
	argv = append(append(argv, "-o", out), libDirFlags(t.HIPLibDirs)...)
	return append(argv, linkFlags(r.rep.Libraries, true)...), "hipcc", nil
}

func libDirFlags(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = "-L" + d
	}
	return out
}

// hipnvIncludes are the include flags of HIP's NVIDIA platform: HIP's own
// headers when named, else rocmk's with the names header.
func (r *run) hipnvIncludes() ([]string, error) {
	if inc := r.o.Tools.HIPInclude; inc != "" {
		return []string{"-I" + inc}, nil
	}
	hipnv, err := compile.HIPNVInclude(filepath.Join(r.o.Work, "hipnv"))
	if err != nil {
		return nil, err
	}
	shims := filepath.Join(r.o.Work, "hipnv-names")
	if err := writeShims(shims); err != nil {
		return nil, err
	}
	return []string{"-I" + shims, "-I" + hipnv, "-include", namesHeader}, nil
}

// firstError is the first compiler line that says "error", else the first.
func firstError(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
