package commands

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile/runner"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache/remote"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/verify"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "report the toolchain, device libraries, GPUs, target selection, cache and runtime libraries",
		Description: `One report of everything rocmk finds on this machine, like 'go env' and
'hipconfig --full': the ROCm/HIP toolchain (clang, hipcc, clang-offload-bundler,
device libraries and the gfx targets they cover, HIP and ROCm versions), the
GPUs (KFD sysfs, amdgpu-arch/rocminfo, nvidia-smi), which targets 'rocmk build'
would pick and why, the build cache, and the GPU runtime libraries 'rocmk verify'
would load (its own list of names, resolved as the dynamic loader does:
LD_LIBRARY_PATH, the ldconfig cache, the system directories; nothing is loaded).

Exit status 0 means 'rocmk build' can run; 4 means no usable toolchain (the
report says what to install). --json prints the same report as one document.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "rocm-path", Usage: "ROCm install to use (default: ROCM_PATH, /opt/rocm, Debian /usr)"},
			clangFlag(),
			&cli.StringSliceFlag{Name: "arch", Usage: "targets to check the selection with (as 'rocmk build --arch')"},
		},
		Action: func(c *cli.Context) error {
			env := envOf(c)
			g := globals(c)
			opts := doctorOptions{ROCmPath: c.String("rocm-path"), Clang: c.String("clang"), Arch: c.StringSlice("arch"), CacheDir: g.CacheDir}
			opts.Remote, opts.RemoteErr = remoteConfig(g, env, "")
			return runDoctor(opts, env, newUI(env, g))
		},
	}
}

type doctorOptions struct {
	ROCmPath  string
	Clang     string
	Arch      []string
	CacheDir  string         // --cache-dir or ROCMK_CACHE_DIR ("" = default)
	Remote    *remote.Config // nil: no remote cache configured
	RemoteErr error          // a bad remote cache configuration
}

// doctorCgo is whether this binary was built with cgo ("true", "false" or
// "unknown"); tests pin it.
var doctorCgo = buildSetting("CGO_ENABLED")

func buildSetting(key string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == key {
				switch s.Value {
				case "1":
					return "true"
				case "0":
					return "false"
				}
				return s.Value
			}
		}
	}
	return "unknown"
}

// doctorEnvVars are the variables the report shows when they are set.
var doctorEnvVars = []string{
	"ROCM_PATH", "HIP_PATH", "HIP_CLANG_PATH", "HIP_DEVICE_LIB_PATH", "HIP_PLATFORM", "ROCMK_CLANG", "ROCMK_DEVICE_LIBS_DIR",
	"ROCMK_ARCH", "PYTORCH_ROCM_ARCH", "GPU_TARGETS", "AMDGPU_TARGETS", "CANDLE_ROCM_ARCH",
	"ROCMK_ROCM_VERSION", "CANDLE_ROCM_VERSION", "ROCMK_CACHE_DIR", "ROCMK_REMOTE_CACHE", "ROCMK_REMOTE_CACHE_MODE",
	"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION",
	"HIPCC_COMPILE_FLAGS_APPEND", "LD_LIBRARY_PATH", "CUDA_PATH",
}

func runDoctor(o doctorOptions, env Env, ui *term.UI) error {
	s, err := compile.OpenSession(compile.SessionOptions{ROCmPath: o.ROCmPath, Clang: o.Clang, Getenv: env.Getenv, Root: env.Root,
		LookPath: env.LookPath, Runner: env.Runner, CacheDir: o.CacheDir, CacheIfPresent: true})
	if err != nil {
		return err
	}
	defer s.Close(env.Context)
	doc := term.DoctorReport{
		Rocmk:       term.DoctorRocmk{Version: version(), Go: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH, Cgo: doctorCgo},
		Checkup:     s.Resolver().Checkup(env.Context, o.Arch),
		Cache:       doctorCacheOf(o, env),
		Libraries:   verify.FindLibraries(verify.Loader{Root: env.Root, Getenv: env.Getenv, Cache: ldconfigCache(env)}),
		Environment: map[string]string{},
	}
	doc.OK = doc.Checkup.Err == nil
	doc.Problems = append([]string{}, doc.Checkup.Problems...)
	doc.RemoteCache, doc.Problems = doctorRemote(env, o, doc.Problems)
	doc.Executor = s.CheckExecutor(env.Context, doc.Checkup.Arch.Targets)
	haveRuntime := false
	for _, l := range doc.Libraries {
		haveRuntime = haveRuntime || (l.Found && (l.Backend == "hip" || l.Backend == "cuda"))
	}
	if !haveRuntime {
		doc.Problems = append(doc.Problems, "no GPU runtime library (libamdhip64.so or libcuda.so.1): rocmk verify cannot run kernels")
	} else if doc.Rocmk.Cgo == "false" {
		doc.Problems = append(doc.Problems, "rocmk was built with CGO_ENABLED=0: rocmk verify cannot load the runtime; rebuild with cgo")
	}
	for _, k := range doctorEnvVars {
		if v := env.Getenv(k); v != "" {
			doc.Environment[k] = v
		}
	}
	if err := ui.Result("doctor", doc, func(w io.Writer, s *term.Styles) error { return term.Doctor(w, s, doc) }); err != nil {
		return err
	}
	if doc.Checkup.Err != nil {
		return exitError{code: ExitEnvMissing, err: fmt.Errorf("doctor: %w", doc.Checkup.Err)}
	}
	return nil
}

// doctorRemote checks the configured remote cache: reachable, authorised,
// writable in a mode that writes, and one lookup's round-trip time.
func doctorRemote(env Env, o doctorOptions, problems []string) (*remote.CheckResult, []string) {
	if o.RemoteErr != nil {
		return nil, append(problems, "remote cache: "+o.RemoteErr.Error())
	}
	if o.Remote == nil {
		return nil, problems
	}
	r := remote.Check(env.Context, o.Remote)
	switch {
	case !r.Reachable:
		problems = append(problems, fmt.Sprintf("remote cache %s unreachable (%s): builds use the local cache only", r.URL, r.Error))
	case !r.Authorized:
		problems = append(problems, fmt.Sprintf("remote cache %s refused a lookup (%s)", r.URL, r.Error))
	case r.Writable != nil && !*r.Writable:
		problems = append(problems, fmt.Sprintf("remote cache %s refused an upload in mode %s (%s)", r.URL, r.Mode, r.Error))
	}
	return &r, problems
}

func doctorCacheOf(o doctorOptions, env Env) term.DoctorCache {
	loc, err := cache.ResolveDir(o.CacheDir, env.Getenv)
	if err != nil {
		return term.DoctorCache{Source: err.Error()}
	}
	c := term.DoctorCache{Dir: loc.Dir, Source: loc.Source}
	if loc.Off {
		c.Dir = "off"
		return c
	}
	c.Files, c.Bytes, c.Exists = cache.Usage(filepath.Join(env.Root, c.Dir))
	return c
}

// ldconfigCache is the ld.so cache as `ldconfig -p` lists it. With a fake
// Root, only a fake runner answers.
func ldconfigCache(env Env) map[string]string {
	if _, real := env.Runner.(runner.ExecRunner); real && env.Root != "" {
		return nil
	}
	ldconfig := "ldconfig"
	if _, err := os.Stat("/sbin/ldconfig"); err == nil && env.Root == "" {
		ldconfig = "/sbin/ldconfig" // often not on a user's PATH
	}
	out, err := env.Runner.Run(env.Context, runner.Cmd{Argv: []string{ldconfig, "-p"}})
	if err != nil {
		return nil
	}
	return verify.ParseLDConfig(out.Stdout)
}
