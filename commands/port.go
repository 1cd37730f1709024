package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
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
		Usage:     "hipify a CUDA file, build it for AMD targets and verify its kernels on a GPU against a spec",
		ArgsUsage: "FILE.cu --spec SPEC.toml",
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
   rocmk port kernels.cu --spec kernels.toml --arch gfx90a --no-verify`,
		Flags: []cli.Flag{
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
		},
		Action: func(c *cli.Context) error {
			o, err := portOptionsOf(c)
			if err != nil {
				return err
			}
			return runPort(c.Context, o, envOf(c))
		},
	}
}

// portFlagTable maps each port flag name and alias (and the global ones) to
// its canonical name and whether it takes a value: urfave/cli v2 stops at
// the first argument, so flags written after FILE ("rocmk port k.cu --spec
// k.toml") are parsed here.
var portFlagTable = map[string]struct {
	name  string
	value bool
}{
	"spec": {"spec", true}, "s": {"spec", true}, "kernel": {"kernel", true}, "k": {"kernel", true},
	"arch": {"arch", true}, "a": {"arch", true}, "backend": {"backend", true}, "device": {"device", true},
	"no-verify": {"no-verify", false}, "time": {"time", false}, "keep": {"keep", true},
	"no-nvcc": {"no-nvcc", false}, "hip-include": {"hip-include", true},
	"json": {"json", false}, "quiet": {"quiet", false}, "q": {"quiet", false},
	"verbose": {"verbose", false}, "v": {"verbose", false}, "cache-dir": {"cache-dir", true},
	"jobs": {"jobs", true}, "j": {"jobs", true},
}

// parseTail splits args into positionals and flags (name -> values).
func parseTail(args []string) ([]string, map[string][]string, error) {
	var pos []string
	vals := map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f, ok := portFlagTable[name]
		if !ok {
			return nil, nil, usagef("flag provided but not defined: %s", a)
		}
		switch {
		case f.value && !hasVal:
			if i+1 >= len(args) {
				return nil, nil, usagef("flag needs an argument: %s", a)
			}
			i++
			val = args[i]
		case !f.value && !hasVal:
			val = "true"
		}
		vals[f.name] = append(vals[f.name], val)
	}
	return pos, vals, nil
}

func portOptionsOf(c *cli.Context) (portOptions, error) {
	args, tail, err := parseTail(c.Args().Slice())
	if err != nil {
		return portOptions{}, err
	}
	last := func(name string) (string, bool) {
		if v := tail[name]; len(v) > 0 {
			return v[len(v)-1], true
		}
		return "", false
	}
	o := portOptions{Spec: c.String("spec"), Kernels: c.StringSlice("kernel"), Arch: c.StringSlice("arch"),
		Backend: c.String("backend"), Device: c.Int("device"), NoVerify: c.Bool("no-verify"), Time: c.Bool("time"),
		Keep: c.String("keep"), NoNVCC: c.Bool("no-nvcc"), HIPInclude: c.String("hip-include"), g: globals(c)}
	if v, ok := last("spec"); ok {
		o.Spec = v
	}
	o.Kernels = splitCommas(append(o.Kernels, tail["kernel"]...))
	o.Arch = splitCommas(append(o.Arch, tail["arch"]...))
	if v, ok := last("backend"); ok {
		o.Backend = v
	}
	if v, ok := last("device"); ok {
		if _, err := fmt.Sscan(v, &o.Device); err != nil {
			return o, usagef("--device: %q is not a number", v)
		}
	}
	if v, ok := last("keep"); ok {
		o.Keep = v
	}
	if v, ok := last("hip-include"); ok {
		o.HIPInclude = v
	}
	o.NoNVCC = o.NoNVCC || len(tail["no-nvcc"]) > 0 && tail["no-nvcc"][0] != "false"
	o.NoVerify = o.NoVerify || len(tail["no-verify"]) > 0 && tail["no-verify"][0] != "false"
	o.Time = o.Time || len(tail["time"]) > 0 && tail["time"][0] != "false"
	if len(tail["json"]) > 0 {
		o.g.JSON, o.g.Verbose = true, 0
	}
	if len(tail["quiet"]) > 0 {
		o.g.Quiet = true
	}
	if o.g.Verbose < 0 { // globals' -v count reads -1 with no -v
		o.g.Verbose = 0
	}
	if !o.g.JSON {
		o.g.Verbose += len(tail["verbose"])
	}
	if v, ok := last("cache-dir"); ok {
		o.g.CacheDir = v
	}
	if v, ok := last("jobs"); ok {
		if _, err := fmt.Sscan(v, &o.g.Jobs); err != nil || o.g.Jobs < 1 {
			return o, usagef("--jobs: %q is not a positive number", v)
		}
	}
	if len(args) != 1 {
		return o, usagef("port takes one source file (got %d arguments)", len(args))
	}
	o.File = args[0]
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
	g          globalOptions
}

// verifySpecOptions is what `rocmk verify --spec` passes to runVerifySpec.
type verifySpecOptions struct {
	Spec       string   // the spec file
	Kernels    []string // only these specs (name or kernel); empty: all
	Backend    string   // auto, hip, cuda
	Device     int
	Time       bool
	NoNVCC     bool   // NVIDIA: NVRTC even when nvcc and the HIP headers are found
	HIPInclude string // NVIDIA: directory with hip/hip_runtime.h for the NVIDIA platform
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
	targets, from, err := portTargets(o.Arch, env)
	if err != nil {
		return usagef("%v", err)
	}
	ui := newUI(env, o.g)
	po := portSetup(env, o.g, ui, o.Backend, o.Device, o.NoNVCC, o.HIPInclude)
	po.Spec, po.Targets, po.TargetsFrom, po.NoVerify, po.Time, po.Keep = o.Spec, targets, from, o.NoVerify, o.Time, o.Keep
	return runPortGroups(ctx, ui, "port", po, []port.Group{{File: o.File, Specs: mine}}, o.g.Quiet)
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
	po := portSetup(env, g, ui, o.Backend, o.Device, o.NoNVCC, o.HIPInclude)
	po.Spec, po.Time = o.Spec, o.Time
	return runPortGroups(ctx, ui, "verify-spec", po, groups, g.Quiet)
}

// runPortGroups runs port's pipeline, prints the report and turns it into
// the exit status.
func runPortGroups(ctx context.Context, ui *UI, schema string, po port.Options, groups []port.Group, quiet bool) error {
	rep, err := port.Run(ctx, groups, po)
	if err != nil {
		return err
	}
	if err := ui.Result(schema, rep, func(w io.Writer, s *Styles) error { return printPort(w, s, rep, quiet) }); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return rep.Err()
}

// portSetup wires port to this process: the GPU runtime, AMD builds through
// the build cache, and the device image builder.
func portSetup(env Env, g globalOptions, ui *UI, backend string, device int, noNVCC bool, hipInclude string) port.Options {
	open := env.OpenRuntime
	if open == nil {
		open = verify.Open
	}
	verbose := func(f string, a ...any) { ui.Verbosef(1, f, a...) }
	return port.Options{
		Build:  amdBuild(env, g, ui),
		Open:   func() (verify.Runtime, error) { return open(backend, device, env.Getenv) },
		Images: newImageBuilder(env, g, ui, noNVCC, hipInclude, verbose, nil),
		Info:   ui.Infof, Warn: ui.Warnf, Verbose: verbose,
		ReadSource: func(name string) ([]byte, error) {
			limit, err := inputLimit(env, maxSourceSize)
			if err != nil {
				return nil, err
			}
			return readInput(name, limit)
		},
	}
}

// amdBuild builds a source for AMD targets as `rocmk build` does: the
// discovered toolchain, the build cache, its statistics and daily trim.
func amdBuild(env Env, g globalOptions, ui *UI) func(context.Context, string, []inspect.Target, string) (*compile.Report, error) {
	return func(ctx context.Context, src string, targets []inspect.Target, outDir string) (*compile.Report, error) {
		in, err := compile.FindInstallation(findOptions(env, ""))
		if err != nil {
			return nil, err
		}
		tc, err := compile.NewClang(in, "")
		if err != nil {
			return nil, err
		}
		b := &compile.Builder{TC: tc, Run: env.Runner, Jobs: g.Jobs, Getenv: env.Getenv}
		bc, err := openBuildStore(g, env)
		if err != nil {
			ui.Warnf("build cache unavailable (%v); building without it", err)
		} else if bc != nil {
			b.Cache = bc
		}
		// The source lives in port's work directory (a new temporary one per
		// run): the compiler runs there, so the key does not name it.
		rep, err := b.Build(ctx, compile.Request{BaseDir: filepath.Dir(src), Sources: []string{src}, Targets: targets, OutDir: outDir, NoManifest: true})
		if rep != nil && !errors.Is(err, context.Canceled) {
			if err := cacheAfterBuild(bc, rep); err != nil {
				ui.Verbosef(1, "cache: %v", err)
			}
		}
		return rep, err
	}
}

// portTargets picks the AMD targets to build for: --arch, else the targets
// of ./rocmk.toml, else ROCMK_ARCH and the other arch variables (as rocmk
// build does, without GPU detection: the device build covers the local GPU).
// None of them: no AMD build.
func portTargets(arch []string, env Env) ([]inspect.Target, string, error) {
	var manifest []string
	if _, err := os.Stat(compile.ProjectFile); err == nil && len(arch) == 0 {
		p, err := compile.LoadProject(compile.ProjectFile)
		if err != nil {
			return nil, "", err
		}
		manifest = p.Targets
	}
	ts, from, err := compile.SelectTargets(arch, manifest, env.Getenv, nil)
	switch {
	case err != nil && len(arch) == 0 && errors.Is(err, compile.ErrNoTargets):
		return nil, "", nil
	case err != nil && len(arch) > 0:
		return nil, "", fmt.Errorf("--arch: %v", err)
	case err != nil:
		return nil, "", err
	case len(arch) > 0:
		return ts, "", nil
	}
	if from == "manifest" {
		from = compile.ProjectFile
	}
	return ts, from, nil
}

func fmtPortDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d.Nanoseconds())/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1e3)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// printPort writes the case table and the verdicts.
func printPort(w io.Writer, s *Styles, doc *port.Report, quiet bool) error {
	for _, src := range doc.Sources {
		if quiet {
			break
		}
		line := src.File
		if src.Hipified {
			line += fmt.Sprintf(": hipified, %d replacements, %d hazards", src.Replaced, len(src.Hazards))
		}
		for _, b := range src.Builds {
			line += fmt.Sprintf("; %s %s", b.Target, b.Status)
		}
		if src.Image != "" {
			line += "; device image by " + src.Image
		}
		fmt.Fprintln(w, s.Dim.Render(line))
	}
	for _, v := range doc.Kernels {
		if v.Result == nil || quiet {
			continue
		}
		t := Table{Header: []string{"CASE", "GRID", "BLOCK", "RESULT", "MAX ABS", "MAX REL", "WORST", "GPU"}, Right: map[int]bool{4: true, 5: true}}
		for _, c := range v.Result.Cases {
			res, worst := "ok", ""
			var maxAbs, maxRel float64
			for _, o := range c.Outputs {
				maxAbs = max(maxAbs, o.Comparison.MaxAbs)
				maxRel = max(maxRel, o.Comparison.MaxRel)
				if !o.Comparison.OK() {
					res = fmt.Sprintf("FAIL %d/%d", o.Comparison.Mismatches, o.Comparison.N)
					worst = o.Describe()
				}
			}
			if c.Error != "" {
				res, worst = "ERROR", c.Error
			}
			gpu := ""
			if c.GPUTime > 0 {
				gpu = fmtPortDur(c.GPUTime)
			}
			t.Rows = append(t.Rows, []string{c.Case, fmtDim3(c.Grid), fmtDim3(c.Block), res,
				fmt.Sprintf("%.2g", maxAbs), fmt.Sprintf("%.2g", maxRel), worst, gpu})
		}
		t.Style = func(col int, row []string) *lipgloss.Style {
			if col == 3 {
				if row[3] == "ok" {
					return &s.OK
				}
				return &s.Err
			}
			return nil
		}
		if err := t.Render(w, s); err != nil {
			return err
		}
	}
	for _, v := range doc.Kernels {
		fmt.Fprintln(w, verdictLine(s, doc, v))
	}
	return nil
}

func fmtDim3(d [3]int) string {
	switch {
	case d[2] != 1:
		return fmt.Sprintf("%dx%dx%d", d[0], d[1], d[2])
	case d[1] != 1:
		return fmt.Sprintf("%dx%d", d[0], d[1])
	}
	return fmt.Sprint(d[0])
}

// verdictLine is "NAME: translated with N hazards; built for T; verified on
// DEVICE: pass (worst ...)".
func verdictLine(s *Styles, doc *port.Report, v *port.Verdict) string {
	var parts []string
	if strings.HasSuffix(strings.ToLower(v.Source), ".cu") || strings.HasSuffix(strings.ToLower(v.Source), ".cuh") {
		parts = append(parts, fmt.Sprintf("translated with %d hazard%s", v.Hazards, portPlural(v.Hazards)))
	}
	if len(v.Built) > 0 {
		parts = append(parts, "built for "+strings.Join(v.Built, ","))
	}
	if len(v.Failed) > 0 {
		parts = append(parts, s.Err.Render("build failed for "+strings.Join(v.Failed, ",")))
	}
	if v.Checked {
		parts = append(parts, "metadata ok")
	}
	switch {
	case v.Result != nil && doc.Device != nil:
		st := s.OK.Render("pass")
		if !v.Result.OK {
			st = s.Err.Render("FAIL") + fmt.Sprintf(" (%d of %d cases)", v.Result.Failed(), len(v.Result.Cases))
		}
		worst := ""
		if w := v.Result.Worst; w != nil {
			if w.Comparison.OK() {
				worst = fmt.Sprintf(", worst abs err %.2g rel %.2g over %d cases", w.Comparison.MaxAbs, w.Comparison.MaxRel, len(v.Result.Cases))
			} else {
				worst = fmt.Sprintf(", worst %s in case %q", w.Describe(), w.Case)
			}
		}
		parts = append(parts, fmt.Sprintf("verified on %s (%s): %s%s", doc.Device.Name, doc.Device.Arch, st, worst))
	case v.Status == port.StatusError:
		parts = append(parts, s.Err.Render("error: ")+v.Error)
	case doc.NoVerify:
		parts = append(parts, "not run (--no-verify)")
	case doc.Device == nil:
		parts = append(parts, "not run (no GPU)")
	}
	return s.Kernel.Render(v.Spec) + ": " + strings.Join(parts, "; ")
}

func portPlural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
