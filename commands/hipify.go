package commands

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile/toolchain"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/kernels/cuda"
)

// defaultHIPVersion is the HIP version assumed when --hip-version is not
// given and no ROCm toolchain is found: the version HIPIFY's tables describe.
var defaultHIPVersion = hipify.Version{Major: 6, Minor: 3}

type hipifyOptions struct {
	Tree           hipify.TreeOptions // inputs, outputs, renames, translation options
	Diff           bool
	Check          bool
	NoOutput       bool
	Stats          bool
	Sample         bool
	QuietWarnings  bool
	HIPVersion     string
	G              globalOptions
	hipVersionFrom string
	hipInclude     string // the discovered toolchain's, where --stats looks for ROCm libraries
}

func hipifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "hipify",
		Usage:     "translate CUDA sources to HIP (token-aware; no CUDA or LLVM needed)",
		ArgsUsage: "[FILE|DIR|-]...",
		Description: `Translates CUDA C++ to HIP using HIPIFY's CUDA-to-HIP tables: runtime, driver,
device functions, RTC, cuComplex, cuBLAS, cuRAND, cuFFT, cuSPARSE, cuSOLVER, cuDNN, CUB.
Comments are never changed; string literals only have whole CUDA API names renamed.
Unsupported APIs and porting hazards (warp size 32, dropped *_sync masks, fp16/bf16 types,
inline PTX, texture references) are reported as file:line:col diagnostics on stderr.

One FILE prints to stdout (or -o FILE). A DIR (or several inputs) needs -o DIR (the tree
is mirrored, files processed in parallel with -j) or --in-place. --diff prints a unified
diff; --check exits 1 when anything would change or an unsupported API remains.
hipify-clang's and hipify-perl's option names are accepted (-roc, -inplace, -o=FILE ...).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Aliases: []string{"o-dir"}, Usage: "output file (- for stdout), or directory for several inputs / a tree"},
			&cli.BoolFlag{Name: "in-place", Usage: "rewrite the inputs atomically (temp file + rename)"},
			&cli.BoolFlag{Name: "inplace", Usage: "hipify-clang/perl spelling of --in-place; keeps a .prehip backup"},
			&cli.StringFlag{Name: "backup", Usage: "with --in-place, keep the original as FILE`SUFFIX` (e.g. .orig)"},
			&cli.BoolFlag{Name: "diff", Usage: "print a unified diff instead of the translation"},
			&cli.BoolFlag{Name: "check", Usage: "write nothing; exit 1 if a file would change or has unsupported APIs (for CI)"},
			&cli.BoolFlag{Name: "stats", Aliases: []string{"print-stats"}, Usage: "print per-file and total statistics"},
			&cli.BoolFlag{Name: "no-output", Usage: "translate and report, write nothing (hipify-perl -no-output)"},
			&cli.BoolFlag{Name: "examine", Usage: "hipify-perl: --no-output --stats"},
			&cli.BoolFlag{Name: "quiet-warnings", Usage: "do not print hazards and unsupported-API warnings"},
			&cli.BoolFlag{Name: "sample", Usage: "translate rocmk's bundled CUDA sample instead of files"},
			&cli.StringSliceFlag{Name: "rename", Usage: "in tree mode, rename extensions: `.cu=.hip` (repeatable)"},
			&cli.StringFlag{Name: "hip-version", Usage: "HIP version `X.Y` the output must build with (default: the discovered toolchain's)"},
			&cli.BoolFlag{Name: "hip-kernel-execution-syntax", Usage: "rewrite k<<<...>>>(...) to hipLaunchKernelGGL(...)"},
			&cli.BoolFlag{Name: "cuda-kernel-execution-syntax", Usage: "keep <<<...>>> launches (the default)"},
			&cli.BoolFlag{Name: "roc", Usage: "translate to roc* libraries (rocBLAS, rocSPARSE, rocRAND, rocSOLVER) where possible"},
			&cli.BoolFlag{Name: "miopen", Usage: "translate cuDNN to MIOpen"},
			&cli.BoolFlag{Name: "experimental", Usage: "also translate APIs HIP marks experimental"},
			&cli.BoolFlag{Name: "amap", Usage: "hipify as much as possible (every preprocessor branch)"},
			&cli.BoolFlag{Name: "skip-excluded-preprocessor-conditional-blocks", Usage: "leave #if branches that are inactive under -D alone"},
			&cli.BoolFlag{Name: "default-preprocessor", Usage: "hipify-clang: same as --skip-excluded-preprocessor-conditional-blocks"},
			&cli.BoolFlag{Name: "use-hip-data-types", Usage: "keep cudaDataType/CUDA_R_* as hipDataType/HIP_R_* under --roc"},
			&cli.StringSliceFlag{Name: "D", Usage: "define `NAME[=VALUE]` for #if evaluation (repeatable)"},
			&cli.BoolFlag{Name: "no-hazards", Usage: "skip the porting-hazard analysis"},
			&cli.StringFlag{Name: "cuda-macros", Value: "map", Usage: "CUDA's guard, version and __CUDA_ARCH__ macros in #if: `map` them to what holds under HIP, or keep them (reported either way)"},
			&cli.StringFlag{Name: "cuda-arch", Value: "sm_80", Usage: "the CUDA `arch` HIP device code is taken to have when mapping __CUDA_ARCH__ tests"},
			&cli.StringFlag{Name: "cuda-version", Value: "12.0", Usage: "the CUDA `X.Y` that CUDART_VERSION, __CUDACC_VER_MAJOR__... tests are evaluated as"},
			&cli.StringSliceFlag{Name: "rocm-switch", Usage: "a project macro meaning \"building for ROCm\", whose branches are taken (`NAME`, repeatable; default USE_ROCM, GGML_USE_HIP, GGML_USE_HIPBLAS; none: no switch)"},
			&cli.BoolFlag{Name: "no-compat", Usage: "never use rocmk_hip_compat.h: report what the target HIP lacks as unsupported"},
		},
		Action: func(c *cli.Context) error {
			opts, err := hipifyOptionsFrom(c)
			if err != nil {
				return err
			}
			return runHipify(c.Context, opts, envOf(c))
		},
	}
}

func hipifyOptionsFrom(c *cli.Context) (hipifyOptions, error) {
	o := hipifyOptions{
		Tree: hipify.TreeOptions{Inputs: c.Args().Slice(), Output: c.String("o"), InPlace: c.Bool("in-place") || c.Bool("inplace"),
			Backup: c.String("backup")},
		Diff: c.Bool("diff"), Check: c.Bool("check"),
		Stats: c.Bool("stats") || c.Bool("examine"), NoOutput: c.Bool("no-output") || c.Bool("examine"),
		Sample: c.Bool("sample"), QuietWarnings: c.Bool("quiet-warnings"), HIPVersion: c.String("hip-version"),
		G: globals(c),
	}
	if c.Bool("inplace") && o.Tree.Backup == "" {
		o.Tree.Backup = ".prehip"
	}
	o.Tree.Translate = hipify.Options{
		KernelExecutionSyntax: c.Bool("hip-kernel-execution-syntax"), Roc: c.Bool("roc"), MIOpen: c.Bool("miopen"),
		Experimental: c.Bool("experimental"), Amap: c.Bool("amap"),
		SkipExcluded:    c.Bool("skip-excluded-preprocessor-conditional-blocks"),
		UseHIPDataTypes: c.Bool("use-hip-data-types"), DefaultPreprocessor: c.Bool("default-preprocessor"),
		NoHazards: c.Bool("no-hazards"),
	}
	var ok bool
	if o.Tree.Translate.CUDAMacros, ok = hipify.ParseMacroPolicy(c.String("cuda-macros")); !ok {
		return o, usagef("--cuda-macros %q: want map or keep", c.String("cuda-macros"))
	}
	if o.Tree.Translate.CUDAArch, ok = hipify.ParseCUDAArch(c.String("cuda-arch")); !ok {
		return o, usagef("--cuda-arch %q: want sm_XY (e.g. sm_80) or the __CUDA_ARCH__ value (800)", c.String("cuda-arch"))
	}
	if o.Tree.Translate.CUDAVersion, ok = hipify.ParseVersion(c.String("cuda-version")); !ok {
		return o, usagef("--cuda-version %q: want X.Y (e.g. 12.0)", c.String("cuda-version"))
	}
	o.Tree.Translate.NoCompat = c.Bool("no-compat")
	var err error
	if o.Tree.Translate.ROCmSwitches, err = hipify.ParseROCmSwitches(c.StringSlice("rocm-switch")); err != nil {
		return o, usagef("--rocm-switch %v", err)
	}
	if o.Tree.Translate.Defines, err = hipify.ParseDefines(c.StringSlice("D")); err != nil {
		return o, usagef("-D %v", err)
	}
	if o.Tree.Rename, err = hipify.ParseRenames(c.StringSlice("rename")); err != nil {
		return o, usagef("--rename %v", err)
	}
	return o, nil
}

func runHipify(ctx context.Context, o hipifyOptions, env Env) error {
	ui := newUI(env, o.G)
	if err := resolveHIPVersion(&o, env); err != nil {
		return err
	}
	ui.Verbosef(1, "hipify: target HIP %s (%s)", o.Tree.Translate.HIPVersion, o.hipVersionFrom)
	limit, err := inputLimit(env, maxSourceSize)
	if err != nil {
		return err
	}
	t := o.Tree
	t.Write = !o.Check && !o.Diff && !o.NoOutput && !o.G.JSON || o.G.JSON && (t.Output != "" || t.InPlace)
	t.Show = !o.Check && !o.Diff && !o.NoOutput
	t.Parity, t.Jobs = o.Stats, o.G.Jobs
	t.Read = func(name string) ([]byte, error) { return readInput(name, limit) }
	t.ReadStdin = func() ([]byte, error) {
		b, err := safefile.ReadAll("<stdin>", env.Stdin, limit)
		return b, inputHint(err)
	}
	if o.Sample {
		t.Samples = cuda.Samples()
	}
	jobs, err := hipify.PlanTree(t)
	if err != nil {
		return err
	}
	var bar term.Progress = term.NopProgress{}
	if len(jobs) > 1 {
		bar = ui.NewProgress(len(jobs), "hipify")
	}
	start := time.Now()
	results, err := hipify.RunTree(ctx, jobs, t, func() { bar.Add(1) })
	bar.Finish()
	if err != nil {
		return err
	}
	return reportHipify(ui, o, results, time.Since(start))
}

// resolveHIPVersion fills Translate.HIPVersion from --hip-version, the
// discovered toolchain, or the default.
func resolveHIPVersion(o *hipifyOptions, env Env) error {
	s, inc, err := toolchain.HIPHeaders(env.Getenv)
	o.hipInclude = inc
	if o.HIPVersion != "" {
		v, ok := hipify.ParseVersion(o.HIPVersion)
		if !ok {
			return usagef("--hip-version %q: want X.Y (e.g. 6.2)", o.HIPVersion)
		}
		o.Tree.Translate.HIPVersion = v
		o.hipVersionFrom = "--hip-version"
		return nil
	}
	if err == nil && s != "" {
		parts := strings.SplitN(s, ".", 3)
		if len(parts) >= 2 {
			if v, ok := hipify.ParseVersion(parts[0] + "." + parts[1]); ok {
				o.Tree.Translate.HIPVersion = v
				o.hipVersionFrom = "discovered toolchain"
				return nil
			}
		}
	}
	o.Tree.Translate.HIPVersion = defaultHIPVersion
	o.hipVersionFrom = "default: no ROCm toolchain found"
	return nil
}

// hipifyOutput prints each file's error or diagnostics on stderr and
// gathers what goes to stdout: the translations, or the diffs (--diff);
// with --json the translations go into doc. It returns the files --check
// reports and the failures.
func hipifyOutput(ui *term.UI, o hipifyOptions, results []hipify.Result, doc *hipify.TreeReport) (stdout bytes.Buffer, changed []string, failed []error) {
	for i, r := range results {
		if r.Err != nil {
			failed = append(failed, r.Err)
			if !ui.JSON { // with --json the document has it, and the exit_error line
				ui.Println(ui.Err, ui.ErrS.Err.Render("error:")+" "+r.Err.Error())
			}
			continue
		}
		if r.NeedsHipify() {
			changed = append(changed, r.Name)
		}
		if !o.QuietWarnings && !ui.Quiet {
			term.HipifyDiagnostics(ui, r.Report)
		}
		switch {
		case o.Diff:
			if r.Report.Changed {
				name := strings.TrimPrefix(filepath.ToSlash(r.Name), "/")
				stdout.WriteString(hipify.UnifiedDiff("a/"+name, "b/"+name, string(r.In), string(r.Out)))
			}
		case o.Check || o.NoOutput || r.Dst != "":
		case ui.JSON:
			doc.Files[i].Content = string(r.Out)
		default:
			stdout.Write(r.Out)
		}
	}
	return stdout, changed, failed
}

// hipifyFailure is the error of a run in which files failed: in text mode
// hipifyOutput printed each, so only the exit status (and a count) is left.
func hipifyFailure(json bool, failed []error, n int) error {
	switch {
	case json && len(failed) == 1:
		return failed[0]
	case json:
		return fmt.Errorf("%d of %d files failed (first: %w)", len(failed), n, failed[0])
	case len(failed) == 1:
		return exitError{exitCode(failed[0]), errSilent}
	}
	return exitError{exitCode(failed[0]), fmt.Errorf("%d of %d files failed", len(failed), n)}
}

// reportHipify prints the diagnostics and the translations, diffs or
// --check list, then the --stats table or the --json document.
func reportHipify(ui *term.UI, o hipifyOptions, results []hipify.Result, elapsed time.Duration) error {
	doc := hipify.Summarize(results, o.Tree.Translate.HIPVersion, elapsed)
	if o.Stats {
		doc.Blockers = hipify.TreeBlockers(results, o.Tree.Inputs, o.hipInclude)
	}
	stdout, changed, failed := hipifyOutput(ui, o, results, &doc)
	if o.Check && !ui.JSON {
		for _, n := range changed {
			stdout.WriteString(n + "\n")
		}
	}
	if !ui.JSON {
		if _, err := ui.Out.Write(stdout.Bytes()); err != nil {
			return err
		}
	}
	statsOut := ui.Out
	if stdout.Len() > 0 && !o.Check { // translation or diff on stdout: keep it clean
		statsOut = ui.Err
	}
	err := ui.Result("hipify", doc, func(_ io.Writer, s *term.Styles) error {
		if !o.Stats {
			return nil
		}
		return term.HipifyStats(statsOut, s, doc)
	})
	if err != nil {
		return err
	}
	switch {
	case len(failed) > 0:
		return hipifyFailure(ui.JSON, failed, len(results))
	case o.Check && len(changed) > 0:
		if !ui.JSON {
			ui.Infof("%d of %d files need hipify (changes or unsupported APIs)", len(changed), len(results))
		}
		return exitError{ExitFailure, errSilent}
	}
	if !o.Stats && !ui.JSON && len(results) > 1 {
		ui.Infof("hipify: %d files, %d lines, %d replacements, %d unsupported, %d hazards in %s",
			doc.Total.Files, doc.Total.Lines, doc.Total.Replacements, doc.Total.Unsupported, doc.Total.Hazards, elapsed.Round(time.Millisecond))
	}
	return nil
}
