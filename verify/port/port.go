// Package port checks ports of GPU kernels against specs: it translates a
// CUDA source with hipify, builds it for AMD targets, checks each spec
// against the code object's metadata, builds the source for the GPU at hand,
// runs every case of the spec and compares the outputs with its reference.
// `rocmk port` and `rocmk verify --spec` are flag parsing, Run and printing.
package port

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/inspect"
	"github.com/rocmk/rocmk/verify"
	"github.com/rocmk/rocmk/verify/spec"
)

// Group is one source file and the specs that run against it.
type Group struct {
	File  string
	Specs []*spec.Spec
}

// Options says what Run does and with what.
type Options struct {
	Spec string // the spec file, as reported

	// Targets are the AMD targets to build for (none: no AMD build).
	// TargetsFrom says where they came from when the command line did not
	// name them (rocmk.toml, ROCMK_ARCH...): without a toolchain they are
	// then skipped with a warning instead of failing the run.
	Targets     []inspect.Target
	TargetsFrom string
	// Session builds for the targets: its toolchain, Runner and cache.
	Session *compile.Session

	// Includes are the sources' -I directories; a source and what it
	// includes from them and beside it is translated into one tree, under
	// TreeRoot ("": the work directory), for the HIP version HIPVersion.
	Includes   []string
	TreeRoot   string
	HIPVersion hipify.Version

	// NoVerify translates, builds and checks only. Otherwise Open opens
	// the GPU; when it finds no runtime or device, Run still translates
	// and builds, and the report says why nothing ran.
	NoVerify bool
	Open     func() (verify.Runtime, error)
	Images   *compile.ImageBuilder // builds the image for the GPU
	Time     bool                  // time passing cases

	Keep string // directory for the translation and code objects ("": a temporary one, removed)

	// ReadSource reads a source or header the user's source includes (nil:
	// a regular file of at most 256 MiB, rocmk's default limit for sources).
	ReadSource func(name string) ([]byte, error)

	// Info, Warn and Verbose receive progress messages (nil: discarded).
	Info, Warn, Verbose func(format string, a ...any)
}

// SpecsFor returns the specs for file: those naming it (or a file of the
// same name) as their source, and those naming none.
func SpecsFor(specs []*spec.Spec, file string) []*spec.Spec {
	var mine []*spec.Spec
	for _, s := range specs {
		if s.Source == "" || sameFile(s.SourcePath(), file) || filepath.Base(s.Source) == filepath.Base(file) {
			mine = append(mine, s)
		}
	}
	return mine
}

// BySource groups specs by their source file, in order of appearance.
func BySource(specs []*spec.Spec, specFile string) ([]Group, error) {
	var groups []Group
	index := map[string]int{}
	for _, s := range specs {
		if s.Source == "" {
			return nil, fmt.Errorf("%s: spec %q names no source file", specFile, s.Label())
		}
		src := s.SourcePath()
		i, ok := index[src]
		if !ok {
			i = len(groups)
			index[src] = i
			groups = append(groups, Group{File: src})
		}
		groups[i].Specs = append(groups[i].Specs, s)
	}
	return groups, nil
}

// SourceList names the specs' sources, sorted (for messages).
func SourceList(specs []*spec.Spec) string {
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

// Run translates, builds and verifies every group. Its error is about Run
// itself (an unreadable source, a cancelled context); what the kernels did
// is in the report (see Report.Err).
func Run(ctx context.Context, groups []Group, o Options) (*Report, error) {
	r := &runner{o: o}
	for _, f := range []*func(string, ...any){&r.o.Info, &r.o.Warn, &r.o.Verbose} {
		if *f == nil {
			*f = func(string, ...any) {}
		}
	}
	work, cleanup, err := workDir(o.Keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	r.work = work
	rep := &Report{Spec: o.Spec, NoVerify: o.NoVerify}
	if !o.NoVerify {
		rt, err := r.open()
		if err != nil {
			return nil, err
		}
		if rt == nil {
			rep.EnvErr = r.envErr
		} else {
			defer rt.Close()
			r.store = verify.NewStore(rt)
			defer r.store.Close()
			d := rt.Device()
			rep.Device = &d
		}
	}
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		src, verdicts, err := r.source(ctx, g)
		if err != nil {
			return nil, err
		}
		rep.Sources = append(rep.Sources, src)
		rep.Kernels = append(rep.Kernels, verdicts...)
	}
	rep.summarize()
	return rep, nil
}

// workDir is Keep, created, or a temporary directory removed by cleanup.
func workDir(keep string) (dir string, cleanup func(), err error) {
	if keep != "" {
		return keep, func() {}, os.MkdirAll(keep, 0o777)
	}
	return safefile.MkdirTemp("rocmk-port-")
}

type runner struct {
	o      Options
	work   string
	rt     verify.Runtime // nil: nothing runs
	store  *verify.Store  // rt's modules
	envErr error          // why rt is nil
}

// open opens the GPU. No runtime or no device is not an error: the run
// translates and builds, and the report says why nothing ran.
func (r *runner) open() (verify.Runtime, error) {
	open := r.o.Open
	if open == nil {
		return nil, errors.New("port: no GPU runtime opener")
	}
	rt, err := open()
	if err != nil {
		if !errors.Is(err, verify.ErrRuntimeUnavailable) && !errors.Is(err, verify.ErrNoDevice) {
			return nil, err
		}
		r.envErr = err
		r.o.Warn("no usable GPU runtime: translating and building only (details at the end)")
		return nil, nil
	}
	d := rt.Device()
	r.o.Info("device: %s (%s, %s)", d.Name, rt.Name(), d.Arch)
	r.rt = rt
	return rt, nil
}

// source translates, builds and verifies one source file's specs.
func (r *runner) source(ctx context.Context, g Group) (*Source, []*Verdict, error) {
	src, tree, err := r.translate(g.File)
	if err != nil {
		return nil, nil, err
	}
	file := tree.File(g.File)
	verdicts := make([]*Verdict, len(g.Specs))
	for i, s := range g.Specs {
		verdicts[i] = &Verdict{Spec: s.Label(), Kernel: s.Kernel, Source: g.File, Hazards: len(src.Hazards), Built: []string{}, Status: StatusBuilt}
	}
	amdKernels, err := r.buildTargets(ctx, tree, file, src, verdicts)
	if err != nil {
		return nil, nil, err
	}
	checkMetadata(g.Specs, verdicts, amdKernels)
	if r.rt == nil {
		return src, verdicts, checkOnCPU(ctx, g.Specs, verdicts)
	}
	img := compile.ImageSource{Name: filepath.Base(g.File), Data: file.Data, Tree: tree, Rel: file.Rel}
	if err := r.runOnDevice(ctx, img, src, g.Specs, verdicts, amdKernels); err != nil {
		return nil, nil, err
	}
	return src, verdicts, nil
}

// translate translates file (hipify for CUDA; a .hip file is used as is)
// with every local file it includes into a tree, placed under the tree
// root (--keep's directory, when given), and reports the translation.
func (r *runner) translate(file string) (*Source, *compile.Tree, error) {
	tree, err := compile.TranslateTree(compile.TreeRequest{Sources: []string{file}, Includes: r.o.Includes,
		Options: hipify.Options{HIPVersion: r.o.HIPVersion}, Read: r.o.ReadSource})
	if err != nil {
		return nil, nil, fmt.Errorf("translating %s: %w", file, err)
	}
	root := r.o.TreeRoot
	switch {
	case r.o.Keep != "":
		root = filepath.Join(r.o.Keep, "tree")
	case root == "":
		root = filepath.Join(r.work, "trees")
	}
	if err := tree.Place(root); err != nil {
		return nil, nil, err
	}
	src := &Source{File: file, Hipified: compile.IsCUDASource(file), Hazards: []hipify.Diagnostic{}, Builds: []Build{}, Tree: tree.Dir}
	if r.o.Keep != "" {
		src.HIP = tree.Path(tree.Sources[0])
	}
	for _, w := range tree.Warnings {
		r.o.Warn("%s", w)
	}
	for _, f := range tree.Files {
		if f.Report == nil {
			continue
		}
		src.Replaced += f.Report.Replacements()
		src.Hazards = append(append(src.Hazards, f.Report.Hazards...), f.Report.Unsupported...)
	}
	for _, h := range src.Hazards {
		r.o.Warn("%s", h.String())
	}
	return src, tree, nil
}

// buildTargets builds a tree's file for the AMD targets, records each build
// and its kernel parity in src and the verdicts, and returns the kernels of
// the first code object that built (nil when none did).
func (r *runner) buildTargets(ctx context.Context, tree *compile.Tree, file *compile.TreeFile, src *Source, verdicts []*Verdict) ([]spec.KernelInfo, error) {
	if len(r.o.Targets) == 0 {
		return nil, nil
	}
	objs, builds, err := r.build(ctx, tree, file)
	if err != nil && r.o.TargetsFrom != "" && errors.Is(err, toolchain.ErrToolchainNotFound) {
		// Targets nobody asked for on this command line: skip them.
		r.o.Warn("not building for %s (from %s): %v", targetList(r.o.Targets), r.o.TargetsFrom, err)
		r.o.Targets = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	src.Builds = builds
	for _, b := range builds {
		for _, v := range verdicts {
			if b.Status == string(compile.StatusFailed) {
				v.Failed = append(v.Failed, b.Target)
				v.Status, v.Error = StatusError, "build failed for "+b.Target
			} else {
				v.Built = append(v.Built, b.Target)
			}
		}
	}
	if len(objs) == 0 {
		return nil, nil
	}
	for _, obj := range objs {
		r.parity(tree, file, src, obj.target, specKernels(obj.co))
	}
	return specKernels(objs[0].co), nil
}

// parity checks the kernels of one image built from file against those its
// CUDA source defines, in src and as a warning.
func (r *runner) parity(tree *compile.Tree, file *compile.TreeFile, src *Source, target string, ks []spec.KernelInfo) {
	if !src.Hipified {
		return
	}
	syms := make([]string, len(ks))
	for i, k := range ks {
		syms[i] = k.Name
	}
	p := tree.SourceParity(file, target, hipify.DefaultCUDAArch, hipify.DefaultCUDAVersion, syms)
	src.Parity = append(src.Parity, p)
	if len(p.Missing) > 0 {
		r.o.Warn("%s", p)
	}
}

// object is a code object built for a target, as the build parsed it.
type object struct {
	target string
	co     *inspect.CodeObject
}

// build compiles a tree's file for the targets, in the tree (so the key
// does not name where it is), and returns the code objects that built and
// one entry per target.
func (r *runner) build(ctx context.Context, tree *compile.Tree, file *compile.TreeFile) ([]object, []Build, error) {
	req := compile.Request{BaseDir: tree.Dir, Sources: []string{tree.Path(file.Rel)}, Targets: r.o.Targets,
		Flags: tree.IncludeFlags(), OutDir: filepath.Join(r.work, "build"), NoManifest: true}
	rep, err := r.o.Session.Build(ctx, req, compile.BuildOptions{})
	var list compile.ErrorList
	if rep == nil || errors.Is(err, context.Canceled) || (err != nil && !errors.As(err, &list)) {
		return nil, nil, err
	}
	var objs []object
	var builds []Build
	for _, res := range rep.Results {
		b := Build{Target: res.Target.String(), Status: string(res.Status)}
		if res.Status == compile.StatusFailed {
			b.Error = buildError(res, list)
			r.o.Warn("%s", b.Error)
		} else if res.Object != nil {
			objs = append(objs, object{res.Target.String(), res.Object})
			if r.o.Keep != "" {
				b.File = res.Out
			}
		}
		builds = append(builds, b)
	}
	return objs, builds, nil
}

// buildError is the compiler's message for a failed build.
func buildError(res *compile.Result, list compile.ErrorList) string {
	for _, e := range list {
		if e.Target == res.Target {
			return e.Error()
		}
	}
	if res.Err != nil {
		return res.Err.Error()
	}
	return "build failed"
}

// checkMetadata resolves each spec's kernel in the AMD code object and
// checks its arguments against the metadata.
func checkMetadata(specs []*spec.Spec, verdicts []*Verdict, kernels []spec.KernelInfo) {
	if kernels == nil {
		return
	}
	for i, s := range specs {
		v := verdicts[i]
		k, err := spec.Resolve(s, kernels)
		if err == nil {
			err = spec.CheckArgs(s, k)
		}
		if err != nil {
			v.fail(err)
			v.specBad = true
			continue
		}
		v.Symbol, v.Checked = k.Name, true
	}
}

// runOnDevice builds the source for the GPU, loads it and runs each spec.
// A failed device build is every verdict's error, not Run's.
func (r *runner) runOnDevice(ctx context.Context, s compile.ImageSource, src *Source, specs []*spec.Spec, verdicts []*Verdict, amdKernels []spec.KernelInfo) error {
	name := s.Name
	t0 := time.Now()
	img, err := r.o.Images.BuildSource(ctx, PlatformOf(r.rt), r.rt.Device().Arch, s)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, v := range verdicts {
			v.fail(fmt.Errorf("device build: %w", err))
		}
		r.o.Warn("%s: building for the device failed: %v", name, err)
		return nil
	}
	src.Image, src.ImageCached = img.Compiler, img.Cached
	r.o.Verbose("%s: device image by %s in %v (cached: %v)", name, img.Compiler, time.Since(t0).Round(time.Microsecond), img.Cached)
	devKernels, err := r.deviceKernels(img, amdKernels)
	if err != nil {
		return fmt.Errorf("%s: reading the device image: %w", name, err)
	}
	if p := PlatformOf(r.rt); p == compile.AMD || p == compile.NVIDIA {
		r.parity(s.Tree, s.Tree.File(src.File), src, r.rt.Device().Arch, devKernels)
	}
	// The store's key is the image's content: a source of the same name
	// built differently is another module.
	key := fmt.Sprintf("%s@%x", name, sha256.Sum256(img.Data))
	l, err := r.store.Get(ctx, key, func(context.Context) (verify.Image, error) {
		return verify.Image{Data: img.Data, Explain: "built by " + img.Compiler}, nil
	})
	if err != nil {
		return fmt.Errorf("%s: loading the device image: %w", name, err)
	}
	mod := l.Module
	for i, s := range specs {
		if err := r.runSpec(ctx, s, verdicts[i], mod, devKernels); err != nil {
			return err
		}
	}
	return nil
}

// runSpec resolves one spec's kernel in the device image, runs its cases
// and records the verdict. Only a cancelled context is returned.
func (r *runner) runSpec(ctx context.Context, s *spec.Spec, v *Verdict, mod verify.Module, devKernels []spec.KernelInfo) error {
	if v.specBad {
		return nil // the metadata check failed: the spec is wrong
	}
	symbol := s.Kernel
	if devKernels != nil {
		k, err := spec.Resolve(s, devKernels)
		if err == nil && !v.Checked {
			err = spec.CheckArgs(s, k)
			v.Checked = err == nil && k.Args != nil
		}
		if err != nil {
			v.fail(err)
			return nil
		}
		symbol = k.Name
	}
	v.Symbol = symbol
	n, err := s.NumCases()
	if err != nil {
		v.fail(err)
		return nil
	}
	r.o.Info("%s: running %d case(s)", s.Label(), n)
	// nil cases: the sweep is built one case at a time, however large.
	res, err := spec.Run(ctx, s, nil, spec.RunOptions{Runtime: r.rt, Module: mod, Symbol: symbol, Time: r.o.Time,
		Progress: func(cr *spec.CaseResult) {
			st := "ok"
			if !cr.OK {
				st = "MISMATCH"
			}
			r.o.Verbose("  %-40s %s (reference %v)", cr.Case, st, cr.RefTime.Round(time.Microsecond))
		}})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		v.fail(err)
		return nil
	}
	v.Result, v.Verified = res, true
	switch {
	case !res.OK:
		v.Status = StatusFail
		v.Error = fmt.Sprintf("%d of %d cases did not match", res.Failed(), len(res.Cases))
	case v.Status != StatusError:
		v.Status = StatusPass
	}
	return nil
}

// deviceKernels lists the kernels of the device image: from the AMD code
// object's metadata (as its build parsed it) on a HIP device, from the
// cubin's symbols (or PTX entries) on CUDA. For other runtimes (the tests'
// fakes) it falls back to the AMD build's list, or nil (launch the spec's
// kernel name as given).
func (r *runner) deviceKernels(img compile.Image, amd []spec.KernelInfo) ([]spec.KernelInfo, error) {
	switch PlatformOf(r.rt) {
	case compile.AMD:
		if img.Object == nil {
			return nil, errors.New("no code object")
		}
		return specKernels(img.Object), nil
	case compile.NVIDIA:
		return spec.ImageKernels(img.Data)
	}
	return amd, nil
}

// PlatformOf is the platform of rt's devices: the one place verify's
// runtime names ("hip", "cuda") become compile's platforms; any other
// runtime (the tests' fakes, which run Go references) is the host.
func PlatformOf(rt verify.Runtime) compile.Platform {
	switch rt.Name() {
	case "hip":
		return compile.AMD
	case "cuda":
		return compile.NVIDIA
	}
	return compile.Host
}

// specKernels is a code object's kernels with their argument metadata.
func specKernels(co *inspect.CodeObject) []spec.KernelInfo {
	var out []spec.KernelInfo
	for _, k := range co.Kernels {
		ki := spec.KernelInfo{Name: k.Name, Demangled: k.Demangled, Args: []spec.ArgInfo{}}
		for _, a := range k.Args {
			ki.Args = append(ki.Args, spec.ArgInfo{Name: a.Name, TypeName: a.TypeName, Offset: a.Offset, Size: a.Size, Kind: a.ValueKind})
		}
		out = append(out, ki)
	}
	return out
}

func targetList(ts []inspect.Target) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}
