package commands

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/rocmk/rocmk/commands/term"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/kernels"
	"github.com/rocmk/rocmk/verify"
)

type verifyOptions struct {
	Backend    string
	Device     int
	Kernels    []string
	DTypes     []string
	Size       int
	Seed       uint64
	Warmup     int
	Repeats    int
	NoTime     bool
	RTol, ATol float64
	MaxULP     int
	TolSet     bool
	Source     string
	List       bool
	Timeout    time.Duration
	NoNVCC     bool
	HIPInclude string
	g          globalOptions
}

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "run the kernel suite on the GPU and compare it with CPU references",
		Description: `Builds each kernel module of the suite for the detected GPU (AMD: a code
object for its gfx target; NVIDIA: a cubin for its sm_XY, through HIP's NVIDIA
platform with nvcc and the HIP headers, else NVRTC), through the build cache.
It then runs every selected kernel on generated inputs (seeded, with zeros,
negatives, large and small magnitudes, NaN and Inf), compares the results with
Go references computed in float64 (rtol/atol per dtype as torch.testing, or
--max-ulp), and times each kernel with GPU events (GB/s and % of the memory
bandwidth the device's attributes give).

The GPU runtime is loaded with dlopen: libamdhip64.so (--backend hip),
libcuda.so.1 with NVRTC (--backend cuda), or the first that works (auto).
HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES apply before --device.

--source FILE replaces the module of the selected kernels with FILE (a
modified or hand-ported kernel checked against the suite's references).

--spec FILE runs your own kernels from a spec file instead of the suite (see
'rocmk port' and docs/port.md); --kernel then selects specs by name or kernel.

` + exitCodeTable,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "backend", Value: "auto", Usage: "GPU runtime: auto, hip or cuda"},
			&cli.IntFlag{Name: "device", Usage: "device index among the visible GPUs", Action: intAtLeast("device", 0)},
			&cli.StringSliceFlag{Name: "kernel", Aliases: []string{"k"}, Usage: "kernels to run: exact name, family (softmax) or glob (binary_*_f16, attn_decode*); repeatable"},
			&cli.StringSliceFlag{Name: "dtype", Usage: "only these dtypes (f32, f16, bf16); repeatable"},
			&cli.IntFlag{Name: "size", Value: 1 << 24, Usage: "elements per kernel (row kernels: rounded to whole rows)", Action: intAtLeast("size", 1)},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "input generator seed"},
			&cli.IntFlag{Name: "warmup", Value: 3, Usage: "untimed launches before timing", Action: intAtLeast("warmup", 0)},
			&cli.IntFlag{Name: "repeats", Value: 20, Usage: "timed launches (median reported)", Action: intAtLeast("repeats", 1)},
			&cli.BoolFlag{Name: "no-time", Usage: "skip timing"},
			&cli.Float64Flag{Name: "rtol", Usage: "relative tolerance for every output (default: per dtype)", Action: floatAtLeast0("rtol")},
			&cli.Float64Flag{Name: "atol", Usage: "absolute tolerance for every output (default: per dtype)", Action: floatAtLeast0("atol")},
			&cli.IntFlag{Name: "max-ulp", Usage: "compare in units in the last place instead of rtol/atol", Action: intAtLeast("max-ulp", 0)},
			&cli.StringFlag{Name: "source", Usage: "HIP file to run instead of the suite's module"},
			&cli.StringFlag{Name: "spec", Usage: "kernel spec file: verify your own kernels instead of the suite (docs/port.md)"},
			&cli.StringSliceFlag{Name: "I", Usage: "with --spec: an include directory of the sources (repeatable)"},
			&cli.BoolFlag{Name: "list", Usage: "list the suite's kernels and exit (no GPU needed)"},
			&cli.DurationFlag{Name: "timeout", Value: 20 * time.Second, Usage: "longest a launch may run before it counts as hung", Action: positiveDuration("timeout")},
			&cli.BoolFlag{Name: "no-nvcc", Usage: "NVIDIA: compile with NVRTC even when nvcc and the HIP headers are found"},
			&cli.StringFlag{Name: "hip-include", Usage: "NVIDIA: directory holding hip/hip_runtime.h and hip/nvidia_detail (env ROCMK_HIP_INCLUDE)"},
		},
		Action: func(c *cli.Context) error {
			o := verifyOptions{Backend: c.String("backend"), Device: c.Int("device"), Kernels: splitCommas(c.StringSlice("kernel")),
				DTypes: splitCommas(c.StringSlice("dtype")), Size: c.Int("size"), Seed: c.Uint64("seed"), Warmup: c.Int("warmup"),
				Repeats: c.Int("repeats"), NoTime: c.Bool("no-time"), RTol: c.Float64("rtol"), ATol: c.Float64("atol"),
				MaxULP: c.Int("max-ulp"), TolSet: c.IsSet("rtol") || c.IsSet("atol") || c.IsSet("max-ulp"), Source: c.String("source"),
				List: c.Bool("list"), Timeout: c.Duration("timeout"), NoNVCC: c.Bool("no-nvcc"), HIPInclude: c.String("hip-include"), g: globals(c)}
			if c.NArg() > 0 {
				return usagef("verify takes no arguments (use --kernel, --source or --spec)")
			}
			if s := c.String("spec"); s != "" {
				return runVerifySpec(envOf(c).Context, verifySpecOptions{Spec: s, Kernels: o.Kernels, Backend: o.Backend, Device: o.Device,
					Time: !o.NoTime, NoNVCC: o.NoNVCC, HIPInclude: o.HIPInclude, Includes: c.StringSlice("I")}, envOf(c), o.g)
			}
			return runVerify(envOf(c).Context, o, envOf(c))
		},
	}
}

// listEntry is one kernel of verify --list --json.
type listEntry struct {
	Name   string `json:"name"`
	Family string `json:"family"`
	Module string `json:"module"`
	DType  string `json:"dtype"`
}

func runVerify(ctx context.Context, o verifyOptions, env Env) error {
	ui := newUI(env, o.g)
	var dts []verify.DType
	for _, s := range o.DTypes {
		d, err := verify.ParseDType(s)
		if err != nil {
			return usagef("--dtype: %v", err)
		}
		dts = append(dts, d)
	}
	if o.List {
		return listSuite(ui, kernels.Specs(o.Kernels, dts))
	}
	vo := kernels.VerifyOptions{Options: kernels.Options{Size: o.Size, Seed: o.Seed}, SourceName: o.Source,
		Run: verify.RunOptions{Warmup: o.Warmup, Repeats: o.Repeats, LaunchTimeout: o.Timeout}, Getenv: env.Getenv,
		Built: func(m kernels.Module) {
			ui.Verbosef(1, "%s: %s%s in %.2fs", m.Source, m.Compiler, map[bool]string{true: " (cached)"}[m.Cached], m.Seconds)
		}}
	cases := kernels.Select(vo.Options, o.Kernels, dts)
	if len(cases) == 0 {
		return usagef("no kernel matches --kernel %s (see rocmk verify --list)", strings.Join(o.Kernels, ","))
	}
	if o.Source != "" {
		var err error
		if vo.Source, err = sourceReader(env)(o.Source); err != nil {
			return err
		}
	}
	if o.NoTime {
		vo.Run.Repeats = 0
	}
	if o.TolSet {
		vo.Run.Tol = &verify.Tolerance{RTol: o.RTol, ATol: o.ATol, MaxULP: o.MaxULP, EqualNaN: true}
	}
	start := env.Now()
	rt, err := openRuntime(env, o.Backend, o.Device)
	if err != nil {
		return err
	}
	defer rt.Close()
	dev := rt.Device()
	ui.Infof("%s: %s (%s, %s), %d kernels", rt.Name(), dev.Name, dev.Arch, dev.Driver, len(cases))
	s, err := openSession(env, o.g, ui, sessionFlags{})
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	vo.Images = s.Images(compile.ImageOptions{NVRTC: verify.NVRTC{Getenv: env.Getenv}, NoNVCC: o.NoNVCC, HIPInclude: o.HIPInclude,
		Log: func(f string, a ...any) { ui.Verbosef(1, f, a...) }, Warn: ui.Warnf})
	bar := ui.NewProgress(len(cases), "verify")
	vo.Run.Progress = func(done, total int, r verify.CaseResult) {
		bar.Add(1)
		bar.Describe(r.Name)
	}
	rep, runErr := kernels.Verify(ctx, rt, cases, vo)
	bar.Finish()
	if rep == nil {
		return runErr
	}
	rep.WallSeconds = env.Now().Sub(start).Seconds()
	if err := ui.Result("verify", rep, func(w io.Writer, st *term.Styles) error { return term.Verify(w, st, rep) }); err != nil {
		return err
	}
	return runErr
}

// listSuite is verify --list: the kernels, no GPU needed.
func listSuite(ui *term.UI, specs []kernels.Spec) error {
	var doc struct {
		Kernels []listEntry `json:"kernels"`
	}
	for _, s := range specs {
		doc.Kernels = append(doc.Kernels, listEntry{s.Name, s.Family, s.Module, s.DType.String()})
	}
	return ui.Result("verify-list", doc, func(w io.Writer, st *term.Styles) error {
		t := term.Table{Header: []string{"KERNEL", "FAMILY", "MODULE", "DTYPE"}}
		for _, k := range doc.Kernels {
			t.Rows = append(t.Rows, []string{k.Name, k.Family, k.Module, k.DType})
		}
		return t.Render(w, st)
	})
}

// openRuntime opens the GPU runtime: env.OpenRuntime (tests' fakes), else
// verify.Open.
func openRuntime(env Env, backend string, device int) (verify.Runtime, error) {
	if env.OpenRuntime != nil {
		return env.OpenRuntime(backend, device, env.Getenv)
	}
	return verify.Open(backend, device, env.Getenv)
}
