package commands

import (
	"context"
	"io"

	"github.com/rocmk/rocmk/commands/portrun"
	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile/toolchain"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/inspect"
	"github.com/rocmk/rocmk/verify"
	"github.com/rocmk/rocmk/verify/port"
	"github.com/rocmk/rocmk/verify/spec"
)

func portCommand() *cli.Command {
	return &cli.Command{
		Name:      "port",
		Usage:     "hipify a CUDA file, build it for AMD targets and verify its kernels on a GPU against a spec; or, with --run, build and run a whole program and its translation and compare them",
		ArgsUsage: "FILE.cu --spec SPEC.toml | --run PROGRAM [-- ARGS]",
		Description: `port checks a CUDA port in one go: it translates FILE (.cu; a .hip file is
used as is) with hipify and reports hazards, builds the translation for the
--arch targets through the build cache, checks each spec'd kernel against the
code object's metadata (symbol, argument count and kinds), then compiles the
translation for the GPU it finds (AMD: its gfx target; NVIDIA: its sm_XY,
through HIP's NVIDIA platform), runs every case of the spec and compares the
outputs with the spec's reference. It ends with a verdict per kernel.

The spec is TOML with one [[verify]] table per kernel (see docs/port.md);
specs whose source names another file are skipped.

Examples:
   rocmk port softmax.cu --spec softmax.toml --arch gfx90a,gfx1100
   rocmk port kernels.cu --spec rocmk.toml --kernel softmax_rows --json
   rocmk port kernels.cu --spec kernels.toml --arch gfx90a --no-verify

With --run, PROGRAM (a .cu file or a directory of units) and its translation
are built (nvcc; hipcc or nvcc through HIP's NVIDIA platform), run with ARGS
and compared; see docs/port-report.md. Exit 3: they differ; 5: a build
failed; 6: a run failed; 4: no GPU.
   rocmk port --run Samples/vectorAdd -I Common
   rocmk port --run prog.cu --record prog.rec.json -- 1024   (NVIDIA)
   rocmk port --run prog.cu --against prog.rec.json -- 1024  (AMD)`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "spec", Aliases: []string{"s"}, Usage: "kernel spec file (TOML with [[verify]] tables); required"},
			&cli.StringSliceFlag{Name: "kernel", Aliases: []string{"k"}, Usage: "only the specs with this name or kernel (repeatable)"},
			&cli.StringSliceFlag{Name: "arch", Aliases: []string{"a"}, Usage: "AMD targets to build for (gfx90a,gfx1100:xnack-...)"},
			&cli.StringFlag{Name: "backend", Value: "auto", Usage: "GPU runtime: auto, hip or cuda"},
			&cli.IntFlag{Name: "device", Usage: "GPU index among the visible ones", Action: intAtLeast("device", 0)},
			&cli.BoolFlag{Name: "no-verify", Usage: "translate, build and check metadata only; run nothing"},
			&cli.BoolFlag{Name: "time", Usage: "also time each passing case (median of 10 launches)"},
			&cli.StringFlag{Name: "keep", Usage: "write the translation and code objects to this directory (default: a temporary one, removed)"},
			&cli.BoolFlag{Name: "no-nvcc", Usage: "NVIDIA: compile with NVRTC even when nvcc and the HIP headers are found"},
			&cli.StringFlag{Name: "hip-include", Usage: "NVIDIA: directory holding hip/hip_runtime.h and hip/nvidia_detail"},
			&cli.StringSliceFlag{Name: "I", Usage: "an include directory of the source (repeatable)"},
		}, portrun.Flags()...),
		Action: func(c *cli.Context) error {
			if c.Bool("run") {
				return runPortProgram(c)
			}
			o, err := portOptionsOf(c)
			if err != nil {
				return err
			}
			return runPort(c.Context, o, envOf(c))
		},
	}
}

func portOptionsOf(c *cli.Context) (portOptions, error) {
	o := portOptions{Spec: c.String("spec"), Kernels: splitCommas(c.StringSlice("kernel")), Arch: c.StringSlice("arch"),
		Backend: c.String("backend"), Device: c.Int("device"), NoVerify: c.Bool("no-verify"), Time: c.Bool("time"),
		Keep: c.String("keep"), NoNVCC: c.Bool("no-nvcc"), HIPInclude: c.String("hip-include"), Includes: c.StringSlice("I"), g: globals(c)}
	if c.NArg() != 1 {
		return o, usagef("port takes one source file (got %d arguments)", c.NArg())
	}
	o.File = c.Args().First()
	if o.Spec == "" {
		return o, usagef("port needs --spec SPEC.toml (the kernels' launch geometry, inputs and reference)")
	}
	return o, nil
}

type portOptions struct {
	File       string
	Spec       string
	Kernels    []string
	Arch       []string
	Backend    string
	Device     int
	NoVerify   bool
	Time       bool
	Keep       string
	NoNVCC     bool
	HIPInclude string
	Includes   []string // -I
	g          globalOptions
}

// verifySpecOptions is what `rocmk verify --spec` passes to runVerifySpec.
type verifySpecOptions struct {
	Spec       string   // the spec file
	Kernels    []string // only these specs (name or kernel); empty: all
	Backend    string   // auto, hip, cuda
	Device     int
	Time       bool
	NoNVCC     bool     // NVIDIA: NVRTC even when nvcc and the HIP headers are found
	HIPInclude string   // NVIDIA: directory with hip/hip_runtime.h for the NVIDIA platform
	Includes   []string // -I directories of the sources
}

func runPort(ctx context.Context, o portOptions, env Env) error {
	f, err := spec.ReadFile(o.Spec)
	if err != nil {
		return err
	}
	specs, err := f.Select(o.Kernels)
	if err != nil {
		return usagef("%v", err)
	}
	mine := port.SpecsFor(specs, o.File)
	if len(mine) == 0 {
		return usagef("no spec in %s is for %s (their sources: %s)", o.Spec, o.File, port.SourceList(specs))
	}
	ui := newUI(env, o.g)
	s, err := openSession(env, o.g, ui, sessionFlags{})
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	ts, err := portTargets(o.Arch, env, s.Project())
	if err != nil {
		return err
	}
	po := portSetup(s, env, ui, o.Backend, o.Device, o.NoNVCC, o.HIPInclude, o.Includes)
	po.Spec, po.Targets, po.TargetsFrom, po.NoVerify, po.Time, po.Keep = o.Spec, ts.List, ts.From, o.NoVerify, o.Time, o.Keep
	if len(o.Arch) > 0 {
		po.TargetsFrom = "" // named on the command line: a missing toolchain is an error
	}
	return runPortGroups(ctx, ui, "port", po, []port.Group{{File: o.File, Specs: mine}}, o.g.Quiet)
}

// portTargets are port's AMD targets: --arch, else the project file's
// (p: ./rocmk.toml, nil when there is none), else ROCMK_ARCH and the other
// arch variables, as for rocmk build but without GPU detection (the device
// build covers the local GPU) or defaults: none of them is no AMD build.
func portTargets(arch []string, env Env, p *compile.Project) (toolchain.Targets, error) {
	var manifest []string
	if len(arch) == 0 && p != nil {
		manifest = p.Targets
	}
	return toolchain.ResolveTargets(toolchain.TargetRequest{Flag: arch, Manifest: manifest, Getenv: env.Getenv,
		Default: func() []inspect.Target { return nil }})
}

// runVerifySpec is `rocmk verify --spec FILE`: every spec of the file (or
// those named) is translated when its source is .cu, built for the GPU
// found, run and compared, through the same steps and report as port.
func runVerifySpec(ctx context.Context, o verifySpecOptions, env Env, g globalOptions) error {
	f, err := spec.ReadFile(o.Spec)
	if err != nil {
		return err
	}
	specs, err := f.Select(o.Kernels)
	if err != nil {
		return usagef("%v", err)
	}
	groups, err := port.BySource(specs, o.Spec)
	if err != nil {
		return err
	}
	ui := newUI(env, g)
	s, err := openSession(env, g, ui, sessionFlags{})
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	po := portSetup(s, env, ui, o.Backend, o.Device, o.NoNVCC, o.HIPInclude, o.Includes)
	po.Spec, po.Time = o.Spec, o.Time
	return runPortGroups(ctx, ui, "verify-spec", po, groups, g.Quiet)
}

// runPortGroups runs port's pipeline, prints the report and turns it into
// the exit status.
func runPortGroups(ctx context.Context, ui *term.UI, schema string, po port.Options, groups []port.Group, quiet bool) error {
	rep, err := port.Run(ctx, groups, po)
	if err != nil {
		return err
	}
	if err := ui.Result(schema, rep, func(w io.Writer, s *term.Styles) error { return term.Port(w, s, rep, quiet) }); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return rep.Err()
}

// portSetup wires port to the session: AMD builds and device images through
// its toolchain, Runner and cache, the GPU runtime, and the translation (the
// toolchain's HIP, trees under the cache, the sources' -I directories).
func portSetup(s *compile.Session, env Env, ui *term.UI, backend string, device int, noNVCC bool, hipInclude string, includes []string) port.Options {
	verbose := func(f string, a ...any) { ui.Verbosef(1, f, a...) }
	return port.Options{
		Session:    s,
		Open:       func() (verify.Runtime, error) { return openRuntime(env, backend, device) },
		Images:     s.Images(compile.ImageOptions{NVRTC: verify.NVRTC{Getenv: env.Getenv}, NoNVCC: noNVCC, HIPInclude: hipInclude, Log: verbose, Warn: ui.Warnf}),
		Info:       ui.Infof,
		Warn:       ui.Warnf,
		Verbose:    verbose,
		ReadSource: sourceReader(env),
		Includes:   includes,
		TreeRoot:   s.TreeRoot(),
		HIPVersion: s.TranslationHIP(),
	}
}
