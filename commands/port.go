package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/inspect"
	"github.com/rocmk/rocmk/verify"
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
			&cli.IntFlag{Name: "device", Usage: "GPU index among the visible ones"},
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
	if o.g.Verbose < 0 { // globals' -v count reads -1 with no -v (reported to the lead)
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

// portDoc is the --json result of port and verify --spec.
type portDoc struct {
	Spec    string         `json:"spec"`
	Sources []*portSource  `json:"sources"`
	Device  *verify.Device `json:"device,omitempty"`
	Kernels []*portVerdict `json:"kernels"`
	OK      bool           `json:"ok"`
	Summary portDocSummary `json:"summary"`

	noVerify bool
}

type portDocSummary struct {
	Kernels int `json:"kernels"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Cases   int `json:"cases"`
}

// portSource is one source file's translation and builds.
type portSource struct {
	File        string              `json:"file"`
	HIP         string              `json:"hip_file,omitempty"`
	Hipified    bool                `json:"hipified"`
	Replaced    int                 `json:"replacements"`
	Hazards     []hipify.Diagnostic `json:"hazards"`
	Builds      []portBuild         `json:"builds"`
	Image       string              `json:"device_compiler,omitempty"` // nvcc, nvrtc, hipcc
	ImageCached bool                `json:"device_image_cached,omitempty"`
}

type portBuild struct {
	Target string `json:"target"`
	Status string `json:"status"`
	File   string `json:"file,omitempty"`
	Error  string `json:"error,omitempty"`
}

// portVerdict is one kernel's outcome.
type portVerdict struct {
	Spec     string       `json:"spec"`
	Kernel   string       `json:"kernel"`
	Symbol   string       `json:"symbol,omitempty"`
	Source   string       `json:"source"`
	Hazards  int          `json:"hazards"`
	Built    []string     `json:"built_for"`
	Failed   []string     `json:"failed_targets,omitempty"`
	Checked  bool         `json:"metadata_checked"`
	Verified bool         `json:"verified"`
	Status   string       `json:"status"` // pass, fail, error, built, skipped
	Error    string       `json:"error,omitempty"`
	Result   *spec.Result `json:"result,omitempty"`

	specBad bool // the spec does not match the code object: nothing to run
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
	var mine []*spec.Spec
	for _, s := range specs {
		if s.Source == "" || sameFile(s.SourcePath(), o.File) || filepath.Base(s.Source) == filepath.Base(o.File) {
			mine = append(mine, s)
		}
	}
	if len(mine) == 0 {
		return usagef("no spec in %s is for %s (their sources: %s)", o.Spec, o.File, specSources(specs))
	}
	targets, from, err := portTargets(o.Arch, env)
	if err != nil {
		return usagef("%v", err)
	}
	p := &portRunner{ui: newUI(env, o.g), env: env, g: o.g, targets: targets, implicit: from, keep: o.Keep,
		backend: o.Backend, device: o.Device, noVerify: o.NoVerify, time: o.Time, schema: "port",
		noNVCC: o.NoNVCC, hipInclude: o.HIPInclude}
	doc := &portDoc{Spec: o.Spec, noVerify: o.NoVerify}
	return p.run(ctx, doc, []portGroup{{file: o.File, specs: mine}})
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
	var groups []portGroup
	index := map[string]int{}
	for _, s := range specs {
		if s.Source == "" {
			return fmt.Errorf("%s: spec %q names no source file", o.Spec, s.Label())
		}
		src := s.SourcePath()
		i, ok := index[src]
		if !ok {
			i = len(groups)
			index[src] = i
			groups = append(groups, portGroup{file: src})
		}
		groups[i].specs = append(groups[i].specs, s)
	}
	p := &portRunner{ui: newUI(env, g), env: env, g: g, backend: o.Backend, device: o.Device, time: o.Time,
		schema: "verify-spec", noNVCC: o.NoNVCC, hipInclude: o.HIPInclude}
	return p.run(ctx, &portDoc{Spec: o.Spec}, groups)
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

func specSources(specs []*spec.Spec) string {
	var s []string
	for _, x := range specs {
		s = append(s, x.Source)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

type portGroup struct {
	file  string
	specs []*spec.Spec
}

type portRunner struct {
	ui         *UI
	env        Env
	g          globalOptions
	targets    []inspect.Target
	implicit   string // where targets came from when not --arch (rocmk.toml, ROCMK_ARCH...)
	keep       string
	backend    string
	device     int
	noVerify   bool
	time       bool
	schema     string // "port" or "verify-spec"
	noNVCC     bool
	hipInclude string

	work string
	rt   verify.Runtime
}

func (p *portRunner) run(ctx context.Context, doc *portDoc, groups []portGroup) error {
	if p.keep != "" {
		if err := os.MkdirAll(p.keep, 0o777); err != nil {
			return err
		}
		p.work = p.keep
	} else {
		dir, err := os.MkdirTemp("", "rocmk-port-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		p.work = dir
	}
	var envErr error
	if !p.noVerify {
		open := p.env.OpenRuntime
		if open == nil {
			open = verify.Open
		}
		rt, err := open(p.backend, p.device, p.env.Getenv)
		if err != nil {
			if !errors.Is(err, verify.ErrRuntimeUnavailable) && !errors.Is(err, verify.ErrNoDevice) {
				return err
			}
			// Translate and build anyway: the verdict says what ran.
			envErr = err
			p.ui.Warnf("no usable GPU runtime: translating and building only (details at the end)")
		} else {
			defer rt.Close()
			p.rt = rt
			d := rt.Device()
			doc.Device = &d
			p.ui.Infof("device: %s (%s, %s)", d.Name, rt.Name(), d.Arch)
		}
	}
	for _, gr := range groups {
		if err := ctx.Err(); err != nil {
			return err
		}
		src, verdicts, err := p.source(ctx, gr)
		if err != nil {
			return err
		}
		doc.Sources = append(doc.Sources, src)
		doc.Kernels = append(doc.Kernels, verdicts...)
	}
	doc.OK = true
	failedCases, totalCases := 0, 0
	for _, v := range doc.Kernels {
		doc.Summary.Kernels++
		if v.Result != nil {
			totalCases += len(v.Result.Cases)
			failedCases += v.Result.Failed()
		}
		switch v.Status {
		case "pass", "built":
			doc.Summary.Passed++
		default:
			doc.Summary.Failed++
			doc.OK = false
		}
	}
	doc.Summary.Cases = totalCases
	if envErr != nil {
		doc.OK = false
	}
	if err := p.ui.Result(p.schema, doc, func(w io.Writer, s *Styles) error { return printPort(w, s, doc, p.g.Quiet) }); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if failedCases > 0 {
		return &verify.MismatchError{Failed: failedCases, Total: totalCases}
	}
	for _, v := range doc.Kernels {
		if v.Status == "error" || v.Status == "fail" {
			return exitError{code: ExitFailure, err: errors.New(v.Error)}
		}
	}
	if envErr != nil {
		return envErr
	}
	return nil
}

// source translates, builds and verifies one source file's specs.
func (p *portRunner) source(ctx context.Context, gr portGroup) (*portSource, []*portVerdict, error) {
	data, err := os.ReadFile(gr.file)
	if err != nil {
		return nil, nil, err
	}
	ps := &portSource{File: gr.file, Hazards: []hipify.Diagnostic{}, Builds: []portBuild{}}
	hip := data
	name := filepath.Base(gr.file)
	ext := strings.ToLower(filepath.Ext(name))
	if ext == ".cu" || ext == ".cuh" {
		out, rep, err := hipify.Translate(name, data, hipify.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("hipify %s: %w", gr.file, err)
		}
		hip = out
		ps.Hipified = true
		ps.Replaced = rep.Replacements()
		ps.Hazards = append(append(ps.Hazards, rep.Hazards...), rep.Unsupported...)
		name = strings.TrimSuffix(name, filepath.Ext(name)) + ".hip"
		for _, h := range ps.Hazards {
			p.ui.Warnf("%s", h.String())
		}
	}
	hipPath := filepath.Join(p.work, name)
	if err := os.WriteFile(hipPath, hip, 0o666); err != nil {
		return nil, nil, err
	}
	if p.keep != "" {
		ps.HIP = hipPath
	}
	verdicts := make([]*portVerdict, len(gr.specs))
	for i, s := range gr.specs {
		verdicts[i] = &portVerdict{Spec: s.Label(), Kernel: s.Kernel, Source: gr.file, Hazards: len(ps.Hazards), Built: []string{}, Status: "built"}
	}
	// AMD builds, and the metadata check against the first code object.
	var amdKernels []spec.KernelInfo
	if len(p.targets) > 0 {
		objs, builds, err := p.buildAMD(ctx, hipPath, p.targets)
		if err != nil && p.implicit != "" && errors.Is(err, compile.ErrToolchainNotFound) {
			// Targets nobody asked for on this command line: skip them.
			p.ui.Warnf("not building for %s (from %s): %v", targetList(p.targets), p.implicit, err)
			p.targets, objs, builds, err = nil, nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		ps.Builds = builds
		for _, b := range builds {
			for _, v := range verdicts {
				if b.Status == "failed" {
					v.Failed = append(v.Failed, b.Target)
					v.Status, v.Error = "error", "build failed for "+b.Target
				} else {
					v.Built = append(v.Built, b.Target)
				}
			}
		}
		for _, obj := range objs {
			ks, err := codeObjectKernels(obj)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: reading the code object: %w", name, err)
			}
			amdKernels = ks
			break
		}
		if amdKernels != nil {
			for i, s := range gr.specs {
				v := verdicts[i]
				k, err := spec.Resolve(s, amdKernels)
				if err == nil {
					err = spec.CheckArgs(s, k)
				}
				if err != nil {
					v.Status, v.Error, v.specBad = "error", err.Error(), true
					continue
				}
				v.Symbol, v.Checked = k.Name, true
			}
		}
	}
	if p.rt == nil {
		return ps, verdicts, nil
	}
	// The device: compile for it, load, resolve, run.
	t0 := time.Now()
	iopts := verify.ImageOptions{Getenv: p.env.Getenv, NoNVCC: p.noNVCC, HIPInclude: p.hipInclude,
		BuildAMD: func(ctx context.Context, name string, src []byte, target string) ([]byte, error) {
			t, err := inspect.ParseTarget(target)
			if err != nil {
				return nil, err
			}
			objs, builds, err := p.buildAMD(ctx, hipPath, []inspect.Target{t})
			if err != nil {
				return nil, err
			}
			if len(objs) == 0 {
				return nil, fmt.Errorf("build for %s failed: %s", target, builds[0].Error)
			}
			return objs[0], nil
		},
		Log: func(format string, a ...any) { p.ui.Verbosef(1, format, a...) }}
	if bc, err := openBuildStore(p.g, p.env); err == nil && bc != nil {
		iopts.Cache = imageCache{bc}
	}
	img, err := verify.BuildImage(ctx, p.rt, name, hip, iopts)
	if err != nil {
		for _, v := range verdicts {
			v.Status, v.Error = "error", "device build: "+err.Error()
		}
		p.ui.Warnf("%s: building for the device failed: %v", name, err)
		return ps, verdicts, nil
	}
	ps.Image, ps.ImageCached = img.Compiler, img.Cached
	p.ui.Verbosef(1, "%s: device image by %s in %s (cached: %v)", name, img.Compiler, fmtPortDur(time.Since(t0)), img.Cached)
	devKernels, err := p.deviceKernels(img.Image, amdKernels)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading the device image: %w", name, err)
	}
	mod, err := p.rt.Load(img.Image)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: loading the device image: %w", name, err)
	}
	defer mod.Close()
	for i, s := range gr.specs {
		v := verdicts[i]
		if v.specBad {
			continue // the metadata check failed: the spec is wrong
		}
		symbol := s.Kernel
		if devKernels != nil {
			k, err := spec.Resolve(s, devKernels)
			if err == nil && !v.Checked {
				err = spec.CheckArgs(s, k)
				v.Checked = err == nil && k.Args != nil
			}
			if err != nil {
				v.Status, v.Error = "error", err.Error()
				continue
			}
			symbol = k.Name
		}
		v.Symbol = symbol
		cases, err := s.Expand()
		if err != nil {
			v.Status, v.Error = "error", err.Error()
			continue
		}
		p.ui.Infof("%s: running %d case(s)", s.Label(), len(cases))
		res, err := spec.Run(ctx, s, cases, spec.RunOptions{Runtime: p.rt, Module: mod, Symbol: symbol, Time: p.time,
			Progress: func(cr *spec.CaseResult) {
				st := "ok"
				if !cr.OK {
					st = "MISMATCH"
				}
				p.ui.Verbosef(1, "  %-40s %s (reference %s)", cr.Case, st, fmtPortDur(cr.RefTime))
			}})
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			v.Status, v.Error = "error", err.Error()
			continue
		}
		v.Result, v.Verified = res, true
		if res.OK {
			if v.Status != "error" {
				v.Status = "pass"
			}
		} else {
			v.Status = "fail"
			v.Error = fmt.Sprintf("%d of %d cases did not match", res.Failed(), len(res.Cases))
		}
	}
	return ps, verdicts, nil
}

// deviceKernels lists the kernels of the device image: from AMD metadata on
// a HIP device, from the cubin's symbols (or PTX entries) on CUDA. For other
// runtimes (the tests' fake) it falls back to the AMD build's list, or nil
// (launch the spec's kernel name as given).
func (p *portRunner) deviceKernels(img []byte, amd []spec.KernelInfo) ([]spec.KernelInfo, error) {
	switch p.rt.Name() {
	case "hip":
		return codeObjectKernels(img)
	case "cuda":
		return spec.ImageKernels(img)
	}
	return amd, nil
}

// codeObjectKernels reads kernel names and argument metadata from an AMD
// code object (a raw ELF, or the first code object of a bundle).
func codeObjectKernels(data []byte) ([]spec.KernelInfo, error) {
	co, err := inspect.ReadCodeObject(data)
	if err != nil {
		f, perr := inspect.Parse("image", data)
		if perr != nil || len(f.Objects) == 0 {
			return nil, err
		}
		co = f.Objects[0]
	}
	var out []spec.KernelInfo
	for _, k := range co.Kernels {
		ki := spec.KernelInfo{Name: k.Name, Demangled: k.Demangled, Args: []spec.ArgInfo{}}
		for _, a := range k.Args {
			ki.Args = append(ki.Args, spec.ArgInfo{Name: a.Name, TypeName: a.TypeName, Offset: a.Offset, Size: a.Size, Kind: a.ValueKind})
		}
		out = append(out, ki)
	}
	return out, nil
}

// buildAMD compiles hipPath for targets through the build cache and returns
// the code objects that built and one entry per target.
func (p *portRunner) buildAMD(ctx context.Context, hipPath string, targets []inspect.Target) ([][]byte, []portBuild, error) {
	in, err := compile.FindInstallation(findOptions(p.env, ""))
	if err != nil {
		return nil, nil, err
	}
	tc, err := compile.NewClang(in, "")
	if err != nil {
		return nil, nil, err
	}
	b := &compile.Builder{TC: tc, Run: &compile.ExecRunner{}, Jobs: p.g.Jobs, Getenv: p.env.Getenv}
	bc, err := openBuildStore(p.g, p.env)
	if err != nil {
		p.ui.Warnf("build cache unavailable (%v); building without it", err)
	} else if bc != nil {
		b.Cache = compile.CacheStore(bc)
	}
	out := filepath.Join(p.work, "build")
	rep, berr := b.Build(ctx, compile.Request{Sources: []string{hipPath}, Targets: targets, OutDir: out, NoManifest: true})
	if rep == nil {
		return nil, nil, berr
	}
	if errors.Is(berr, context.Canceled) {
		return nil, nil, berr
	}
	if bc != nil {
		if err := cacheAfterBuild(bc, rep); err != nil {
			p.ui.Verbosef(1, "cache: %v", err)
		}
	}
	var objs [][]byte
	var builds []portBuild
	for _, r := range rep.Results {
		pb := portBuild{Target: r.Target.String(), Status: string(r.Status)}
		if r.Status == compile.StatusFailed {
			msg := "build failed"
			if r.Err != nil {
				msg = r.Err.Error()
			}
			var ce *compile.CompileError
			if errors.As(berr, new(compile.ErrorList)) {
				for _, e := range berr.(compile.ErrorList) {
					if e.Target == r.Target {
						ce = e
					}
				}
			}
			if ce != nil {
				msg = ce.Error()
			}
			pb.Error = msg
			p.ui.Warnf("%s", msg)
		} else if data, err := os.ReadFile(r.Out); err == nil {
			objs = append(objs, data)
			if p.keep != "" {
				pb.File = r.Out
			}
		}
		builds = append(builds, pb)
	}
	return objs, builds, nil
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
func printPort(w io.Writer, s *Styles, doc *portDoc, quiet bool) error {
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
func verdictLine(s *Styles, doc *portDoc, v *portVerdict) string {
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
	case v.Status == "error":
		parts = append(parts, s.Err.Render("error: ")+v.Error)
	case doc.noVerify:
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
