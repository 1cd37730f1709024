// Package program is rocmk port --run: a whole CUDA program (one .cu file,
// or a directory of units and local headers linked together) and its HIP
// translation are built, each with its own toolchain, run with the same
// arguments, working directory and time limit, and compared with
// verify/outcmp. The reference is the original run now (nvcc) or a
// Recording made where nvcc is (the AMD machine's path).
package program

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/verify/outcmp"
)

// Platforms a program's translation is built for.
const (
	PlatformNVIDIA = "nvidia" // HIP's NVIDIA platform: nvcc and HIP headers over CUDA
	PlatformAMD    = "amd"    // hipcc for an AMD target
)

// Toolchains are what builds and runs the two versions.
type Toolchains struct {
	// Platform is the GPU's ("" when there is none: nothing runs).
	Platform string
	Arch     string // "sm_90", "gfx90a"; "" = the compiler's default
	Device   string // the GPU in words, for the report and recordings
	NVCC     string // "" when absent: the original cannot be built
	HIPCC    string // AMD: hipcc ("" when absent)
	// HIPInclude, on NVIDIA, is a directory with HIP's own headers for the
	// NVIDIA platform (hip/nvidia_detail); "" uses rocmk's and the names
	// header (hipnv.go).
	HIPInclude  string
	HIP         hipify.Version // the ROCm installation's HIP, which translations target (zero: hipify's newest)
	CUDALibDirs []string
	HIPLibDirs  []string
}

// translationPlatform is the platform the translation is built for: the
// GPU's, or with none, AMD where hipcc is (a replay builds as far as it
// can) and else NVIDIA.
func (t Toolchains) translationPlatform() string {
	switch {
	case t.Platform != "":
		return t.Platform
	case t.HIPCC != "":
		return PlatformAMD
	}
	return PlatformNVIDIA
}

// Options say what to build, run and compare.
type Options struct {
	Program  string   // a .cu file or a directory
	Args     []string // the program's arguments
	Includes []string // -I directories of the sources
	Rules    outcmp.Rules
	Timeout  time.Duration // each run's time limit (0: 60s)
	// Record, when set, runs the original only and saves it there.
	Record string
	// Against, when set, is the reference: a Recording; the original is
	// neither built nor run.
	Against string
	// GotOutput, with Against: the translation's stdout stored in a file,
	// compared instead of running the translation (no GPU needed).
	GotOutput string
	Work      string // where translations, builds and run directories go
	Tools     Toolchains
	Exec      Exec // nil: OSExec
	// Probe checks the GPU after the runs ("" = usable, else why not);
	// nil: not checked.
	Probe func(ctx context.Context) string
	Info  func(format string, a ...any)
}

// maxDataBytes bounds the program's data copied into each run directory.
const maxDataBytes = 256 << 20

// Run builds, runs and compares. The error is for what stops before a
// verdict can be given (unreadable program, bad flags); build failures,
// crashes and differences are in the Report (Report.Err).
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Exec == nil {
		o.Exec = OSExec{}
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.Info == nil {
		o.Info = func(string, ...any) {}
	}
	r := &run{o: o, rep: &Report{Program: o.Program, Args: append([]string{}, o.Args...), Platform: o.Tools.Platform,
		Arch: o.Tools.Arch, Device: o.Tools.Device, Against: o.Against}}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	r.pipeline(ctx)
	return r.rep, nil
}

type run struct {
	o        Options
	rep      *Report
	prog     string   // the program, absolute
	includes []string // -I, absolute
	units    []string // the program's compilation units
	dataDir  string   // the directory whose files each run gets a copy of
	tree     *compile.Tree
	ref      *outcmp.Recording
}

// pipeline is the steps after prepare, stopping at the first that leaves
// nothing to compare.
func (r *run) pipeline(ctx context.Context) {
	o, rep := r.o, r.rep
	if o.Against == "" {
		rep.Original = r.build(ctx, "original", r.originalArgv)
	}
	switch {
	case o.GotOutput != "": // nothing to build: the output is stored
		rep.Translation = &Side{Name: "translation", Toolchain: "stored output", Stored: o.GotOutput}
	case o.Record == "":
		rep.Translation = r.build(ctx, "translation", r.translationArgv)
	}
	if rep.Stage = StageBuildFailed; !rep.Original.built() || !rep.Translation.built() {
		return
	}
	if o.GotOutput == "" && o.Tools.Platform == "" {
		rep.Stage, rep.Note = StageNoGPU, "no GPU found: built, but nothing can run here (give --got-output FILE to compare a stored output)"
		return
	}
	ref, got := r.reference(ctx), r.translated(ctx)
	if o.Probe != nil && o.GotOutput == "" {
		if why := o.Probe(ctx); why != "" {
			rep.GPU = "not usable after the runs: " + why
		} else {
			rep.GPU = "usable after the runs"
		}
	}
	rep.Stage = StageRunFailed
	if ref == nil || got == nil {
		return
	}
	if o.Record != "" {
		r.record(*ref)
		return
	}
	v := outcmp.Compare(*ref, *got, o.Rules)
	rep.Verdict = &v
	rep.Stage = StageDiffer
	if v.Pass {
		rep.Stage = StageSame
	}
}

// prepare finds the units and data, reads the recording and translates.
func (r *run) prepare() error {
	o := r.o
	// compilers run in their own directories: every path absolute
	prog, err := filepath.Abs(o.Program)
	if err != nil {
		return err
	}
	incs := make([]string, len(o.Includes))
	for i, inc := range o.Includes {
		if incs[i], err = filepath.Abs(inc); err != nil {
			return err
		}
	}
	r.prog, r.includes = prog, incs
	fi, err := os.Stat(prog)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		r.dataDir = prog
		if r.units, err = unitsOf(prog); err != nil {
			return err
		}
	} else {
		r.dataDir, r.units = filepath.Dir(prog), []string{prog}
	}
	if o.Against != "" {
		rec, err := outcmp.ReadRecording(o.Against)
		if err != nil {
			return err
		}
		r.ref = &rec
		r.rep.Reference = fmt.Sprintf("%s (%s, %s, %s)", o.Against, rec.Toolchain, rec.Device, rec.Created.Format("2006-01-02"))
	}
	if o.GotOutput != "" && o.Against == "" {
		return errors.New("--got-output compares a stored output with a recording: give --against FILE too")
	}
	srcs := map[string][]byte{}
	tree, err := compile.TranslateTree(compile.TreeRequest{Sources: r.units, Includes: incs,
		Options: hipify.Options{HIPVersion: o.Tools.HIP}})
	if err != nil {
		return fmt.Errorf("translating %s: %w", o.Program, err)
	}
	if err := tree.Place(filepath.Join(o.Work, "tree")); err != nil {
		return err
	}
	r.tree = tree
	for _, f := range tree.Files {
		srcs[f.Path] = f.Orig
		if f.Report != nil {
			r.rep.Replaced += f.Report.Replacements()
			for _, u := range f.Report.Unsupported {
				r.rep.Unsupported = append(r.rep.Unsupported, u.String())
			}
		}
	}
	r.rep.Libraries = DetectLibraries(srcs)
	resolve(r.rep.Libraries, o.Tools.translationPlatform(), o.Tools.CUDALibDirs, o.Tools.HIPLibDirs)
	return nil
}

// unitExts are the files of a program directory that are compiled and
// linked together.
var unitExts = map[string]bool{".cu": true, ".cpp": true, ".cc": true, ".cxx": true, ".c": true}

// unitsOf lists a program directory's units (hidden directories skipped).
func unitsOf(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && unitExts[strings.ToLower(filepath.Ext(p))] {
			out = append(out, p)
		}
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no .cu, .cpp, .cc, .cxx or .c file to build", dir)
	}
	sort.Strings(out)
	return out, err
}
