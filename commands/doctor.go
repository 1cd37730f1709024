package commands

import (
	"fmt"
	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/commands/term"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

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
			&cli.StringSliceFlag{Name: "arch", Usage: "targets to check the selection with (as 'rocmk build --arch')"},
		},
		Action: func(c *cli.Context) error {
			env := envOf(c)
			g := globals(c)
			opts := doctorOptions{ROCmPath: c.String("rocm-path"), Arch: c.StringSlice("arch"), CacheDir: g.CacheDir, CacheDirFlag: c.IsSet("cache-dir") || isSetAbove(c, "cache-dir")}
			opts.Remote, opts.RemoteErr = remoteConfig(g, env, "")
			return runDoctor(opts, env, newUI(env, g))
		},
	}
}

func isSetAbove(c *cli.Context, name string) bool {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(name) {
			return true
		}
	}
	return false
}

type doctorOptions struct {
	ROCmPath     string
	Arch         []string
	CacheDir     string // --cache-dir or ROCMK_CACHE_DIR ("" = default)
	CacheDirFlag bool
	Remote       *remote.Config // nil: no remote cache configured
	RemoteErr    error          // a bad remote cache configuration
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

type doctorDoc struct {
	OK    bool        `json:"ok"` // rocmk build can run
	Rocmk doctorRocmk `json:"rocmk"`
	compile.Checkup
	Cache       doctorCache            `json:"cache"`
	RemoteCache *remote.CheckResult    `json:"remote_cache,omitempty"`
	Libraries   []verify.LibraryStatus `json:"runtime_libraries"`
	Environment map[string]string      `json:"environment"`
	Problems    []string               `json:"problems"`
}

type doctorRocmk struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OSArch  string `json:"os_arch"`
	Cgo     string `json:"cgo"`
}

type doctorCache struct {
	Dir    string `json:"dir"`
	Source string `json:"source"` // "--cache-dir", "ROCMK_CACHE_DIR", "default"
	Exists bool   `json:"exists"`
	Files  int    `json:"files"`
	Bytes  int64  `json:"bytes"`
}

// doctorEnvVars are the variables the report shows when they are set.
var doctorEnvVars = []string{
	"ROCM_PATH", "HIP_PATH", "HIP_CLANG_PATH", "HIP_DEVICE_LIB_PATH", "HIP_PLATFORM",
	"ROCMK_ARCH", "PYTORCH_ROCM_ARCH", "GPU_TARGETS", "AMDGPU_TARGETS", "CANDLE_ROCM_ARCH",
	"ROCMK_ROCM_VERSION", "CANDLE_ROCM_VERSION", "ROCMK_CACHE_DIR", "ROCMK_REMOTE_CACHE", "ROCMK_REMOTE_CACHE_MODE",
	"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION",
	"HIPCC_COMPILE_FLAGS_APPEND", "LD_LIBRARY_PATH", "CUDA_PATH",
}

func runDoctor(o doctorOptions, env Env, ui *term.UI) error {
	s, err := compile.OpenSession(compile.SessionOptions{ROCmPath: o.ROCmPath, Getenv: env.Getenv, Root: env.Root,
		LookPath: env.LookPath, Runner: env.Runner, NoCache: true})
	if err != nil {
		return err
	}
	doc := doctorDoc{
		Rocmk:       doctorRocmk{Version: version(), Go: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH, Cgo: doctorCgo},
		Checkup:     s.Checkup(o.Arch),
		Cache:       doctorCacheOf(o, env),
		Libraries:   verify.FindLibraries(verify.Loader{Root: env.Root, Getenv: env.Getenv, Cache: ldconfigCache(env)}),
		Environment: map[string]string{},
	}
	doc.OK = doc.Checkup.Err == nil
	doc.Problems = append([]string{}, doc.Checkup.Problems...)
	doc.RemoteCache, doc.Problems = doctorRemote(env, o, doc.Problems)
	haveRuntime := false
	for _, l := range doc.Libraries {
		haveRuntime = haveRuntime || (l.Found && l.Backend != "nvrtc")
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
	if err := ui.Result("doctor", doc, func(w io.Writer, s *term.Styles) error { return renderDoctor(w, s, doc) }); err != nil {
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

func doctorCacheOf(o doctorOptions, env Env) doctorCache {
	c := doctorCache{Dir: o.CacheDir, Source: "--cache-dir"}
	switch {
	case o.CacheDir == "":
		c.Dir, _ = cache.UserDir(env.Getenv)
		c.Source = "default"
	case !o.CacheDirFlag:
		c.Source = "ROCMK_CACHE_DIR"
	}
	if c.Dir != "" {
		c.Files, c.Bytes, c.Exists = cache.Usage(filepath.Join(env.Root, c.Dir))
	}
	return c
}

// ldconfigCache is the ld.so cache as `ldconfig -p` lists it. With a fake
// Root, only a fake runner answers.
func ldconfigCache(env Env) map[string]string {
	if _, real := env.Runner.(compile.ExecRunner); real && env.Root != "" {
		return nil
	}
	ldconfig := "ldconfig"
	if _, err := os.Stat("/sbin/ldconfig"); err == nil && env.Root == "" {
		ldconfig = "/sbin/ldconfig" // often not on a user's PATH
	}
	out, err := env.Runner.Run(env.Context, compile.Cmd{Argv: []string{ldconfig, "-p"}})
	if err != nil {
		return nil
	}
	return verify.ParseLDConfig(out.Stdout)
}

func renderDoctor(w io.Writer, s *term.Styles, d doctorDoc) error {
	var b strings.Builder
	ok := func(text string) string { return s.OK.Render(text) }
	bad := func(text string) string { return s.Err.Render(text) }
	dim := func(text string) string { return s.Dim.Render(text) }
	kv := func(k, v string) { fmt.Fprintf(&b, "  %-14s %s\n", k, v) }
	orNone := func(v string) string {
		if v == "" {
			return dim("not found")
		}
		return v
	}

	fmt.Fprintf(&b, "%s %s (%s %s, cgo %s)\n\n", s.Header.Render("rocmk"), d.Rocmk.Version, d.Rocmk.Go, d.Rocmk.OSArch, d.Rocmk.Cgo)

	if t := d.Toolchain; t != nil {
		fmt.Fprintf(&b, "%s  %s\n", s.Header.Render("Toolchain"), ok("found")+dim(" via "+t.Source))
		kv("root", t.Root+" ("+t.Layout+" layout)")
		kv("clang", t.Clang+" ("+orNone(t.ClangVersion)+")")
		kv("hipcc", orNone(t.HIPCC))
		kv("bundler", orNone(t.Bundler))
		kv("device libs", t.DeviceLibDir)
		kv("", doctorWrap(fmt.Sprintf("%d targets: ", len(t.DeviceLibTargets)), t.DeviceLibTargets, 17, 78))
		hip := orNone(t.HIPVersion)
		if t.HIPInclude != "" {
			hip += " (" + t.HIPInclude + ")"
		}
		kv("HIP", hip)
		rocm := orNone(t.ROCmVersion)
		if t.ROCmVersionFrom != "" {
			rocm += dim(" (from " + t.ROCmVersionFrom + ")")
		}
		kv("ROCm", rocm)
	} else {
		fmt.Fprintf(&b, "%s  %s\n", s.Header.Render("Toolchain"), bad("not found"))
		for _, line := range strings.Split(d.ToolchainErr, "\n") {
			fmt.Fprintf(&b, "  %s\n", strings.TrimSpace(line))
		}
	}

	fmt.Fprintf(&b, "\n%s\n", s.Header.Render("GPUs"))
	if len(d.GPUs) == 0 {
		fmt.Fprintf(&b, "  %s\n", dim("none found (no KFD GPU node, amdgpu-arch, rocminfo or nvidia-smi GPU)"))
	}
	for _, g := range d.GPUs {
		fmt.Fprintf(&b, "  [%d] %-6s %-8s %s %s\n", g.Index, g.Vendor, s.Target.Render(term.PadRight(g.Arch, 8)), g.Name, dim("("+g.Source+")"))
	}
	if d.GPUErr != "" {
		fmt.Fprintf(&b, "  %s %s\n", s.Warn.Render("warning:"), d.GPUErr)
	}

	fmt.Fprintf(&b, "\n%s\n", s.Header.Render("Build targets"))
	if d.Arch.Error != "" {
		fmt.Fprintf(&b, "  %s\n", dim(strings.SplitN(d.Arch.Error, "\n", 2)[0]))
	} else {
		var ts []string
		for _, t := range d.Arch.Targets {
			ts = append(ts, s.Target.Render(t))
		}
		fmt.Fprintf(&b, "  %s %s\n", strings.Join(ts, " "), dim("(from "+d.Arch.Source+")"))
	}

	fmt.Fprintf(&b, "\n%s\n", s.Header.Render("Cache"))
	state := "absent (created on first build)"
	if d.Cache.Exists {
		state = fmt.Sprintf("%d files, %s", d.Cache.Files, cache.FormatSize(d.Cache.Bytes))
	}
	kv("dir", d.Cache.Dir+dim(" ("+d.Cache.Source+")"))
	kv("size", state)
	if r := d.RemoteCache; r != nil {
		state := ok("reachable, authorised") + dim(fmt.Sprintf(" (round trip %.1f ms)", r.RTTms))
		switch {
		case !r.Reachable:
			state = bad("unreachable")
		case !r.Authorized:
			state = bad("not authorised")
		}
		kv("remote", r.URL+dim(" ("+string(r.Mode)+")"))
		kv("", state)
		if r.Writable != nil {
			kv("", map[bool]string{true: ok("uploads accepted"), false: bad("uploads refused")}[*r.Writable])
		}
	}

	fmt.Fprintf(&b, "\n%s %s\n", s.Header.Render("Runtime libraries"), dim("(what rocmk verify would load)"))
	for _, l := range d.Libraries {
		where := dim("not found (tried " + strings.Join(l.Tried, ", ") + ")")
		if l.Found {
			where = ok(l.Path) + dim(" ("+l.Via+")")
		}
		fmt.Fprintf(&b, "  %-6s %s\n", l.Backend, where)
	}

	if len(d.Environment) > 0 {
		fmt.Fprintf(&b, "\n%s\n", s.Header.Render("Environment"))
		keys := make([]string, 0, len(d.Environment))
		for k := range d.Environment {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s=%s\n", k, d.Environment[k])
		}
	}

	fmt.Fprintf(&b, "\n%s\n", s.Header.Render("Summary"))
	if d.OK {
		fmt.Fprintf(&b, "  %s\n", ok("rocmk build can run"))
	} else {
		fmt.Fprintf(&b, "  %s\n", bad("rocmk build cannot run"))
	}
	for _, p := range d.Problems {
		fmt.Fprintf(&b, "  - %s\n", p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// doctorWrap joins items after prefix, wrapping at width with indent spaces.
func doctorWrap(prefix string, items []string, indent, width int) string {
	var b strings.Builder
	b.WriteString(prefix)
	col := indent + len(prefix)
	for i, it := range items {
		if i > 0 {
			if col+1+len(it) > width {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(it)
		col += len(it)
	}
	return b.String()
}
