package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/slurm"
	"github.com/rocmk/rocmk/compile/toolchain"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/kernels"
)

type buildOptions struct {
	Plan          compile.PlanOptions
	Print         bool // -x
	ResourceUsage bool
	Layout        string
	NoCache       bool
	ROCmPath      string
	Clang         string
	g             globalOptions
}

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "compile HIP sources for several GPU targets in parallel, through the cache",
		ArgsUsage: "[source.hip|source.cu|DIR ...]",
		Description: `Compiles every (source, target) pair with the ROCm toolchain's clang, in
parallel (-j), through the content-addressed build cache. Writes one code
object per source and target (OUT/<stem>-<target>.hsaco, ':' in a target ID
becomes '_'), manifest.json, and on request an offload bundle per source
(--bundle) and embedding files (--embed rust,go,c).

A directory stands for the kernel sources under it (.cu, .hip). CUDA sources
are translated with everything they include (beside them, through .. and -I)
into one tree under the cache and built there; each code object is checked
for the kernels its CUDA source defines.

With no sources it builds rocmk.toml when the current directory has one, else
the bundled kernel suite. Flags override the manifest.`,
		Flags: append(planFlags(), []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "output directory", DefaultText: compile.DefaultOutDir},
			&cli.BoolFlag{Name: "n", Usage: "print the commands that would run, run nothing"},
			&cli.BoolFlag{Name: "x", Usage: "print the commands as they run"},
			&cli.BoolFlag{Name: "bundle", Usage: "also write one offload bundle of all targets per source (<stem>.hipfb)"},
			&cli.StringSliceFlag{Name: "embed", Usage: "write embedding files: rust (hsaco.rs), go (hsaco_embed.go), c (hsaco.h)"},
			&cli.StringFlag{Name: "go-package", Usage: "package name of the Go embedding file", Value: "hsaco"},
			&cli.BoolFlag{Name: "resource-usage", Usage: "print registers, LDS and scratch per kernel; warn on spills"},
			&cli.BoolFlag{Name: "no-cache", Usage: "do not read or write the build cache"},
			&cli.StringFlag{Name: "executor", Usage: "where cache misses compile: local, or slurm (srun jobs; the cache must be on a shared filesystem)", DefaultText: "rocmk.toml's executor, else local"},
			&cli.StringFlag{Name: "slurm-mode", Usage: "how --executor slurm submits: steps (srun steps in one allocation), job (one srun job each) or array (sbatch arrays)", DefaultText: "rocmk.toml's [slurm] mode, else " + slurm.DefaultMode},
			clangFlag(),
		}...),
		Action: func(c *cli.Context) error {
			o := buildOptions{Plan: planOptionsOf(c), Print: c.Bool("x"), ResourceUsage: c.Bool("resource-usage"),
				Layout: c.String("layout"), NoCache: c.Bool("no-cache"), ROCmPath: c.String("rocm-path"), Clang: c.String("clang"), g: globals(c)}
			o.Plan.OutDir, o.Plan.DryRun, o.Plan.Bundle, o.Plan.GoPackage, o.Plan.Executor, o.Plan.SlurmMode = c.String("out"), c.Bool("n"), c.Bool("bundle"), c.String("go-package"), c.String("executor"), c.String("slurm-mode")
			o.Plan.Embed = toolchain.SplitList(strings.Join(c.StringSlice("embed"), ","))
			return runBuild(c.Context, o, envOf(c))
		},
	}
}

// planFlags say what a build compiles: `rocmk build`'s and `rocmk cache
// pull`'s.
func planFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "arch", Aliases: []string{"a"}, Usage: "target IDs, comma separated (gfx90a,gfx1030,gfx90a:xnack+)"},
		&cli.StringSliceFlag{Name: "D", Usage: "define a macro (NAME or NAME=VALUE)"},
		&cli.StringSliceFlag{Name: "I", Usage: "add an include directory"},
		&cli.StringSliceFlag{Name: "flag", Aliases: []string{"X"}, Usage: "pass one flag to the compiler (repeatable: -X -ffast-math)"},
		&cli.StringFlag{Name: "layout", Usage: "how to call the compiler: clang, hipcc or amdclang++", Value: toolchain.LayoutClang},
		&cli.StringFlag{Name: "project", Usage: "project manifest to build", DefaultText: "./rocmk.toml if present"},
		&cli.StringFlag{Name: "rocm-path", Usage: "ROCm install to use (default: ROCM_PATH, HIP_PATH, /opt/rocm, Debian /usr)"},
	}
}

// planOptionsOf reads the planFlags and the sources.
func planOptionsOf(c *cli.Context) compile.PlanOptions {
	return compile.PlanOptions{Sources: c.Args().Slice(), Arch: c.StringSlice("arch"), Defines: c.StringSlice("D"),
		Includes: c.StringSlice("I"), Flags: c.StringSlice("flag"), Project: c.String("project"), GoPackage: "hsaco",
		Bundled: kernels.WriteSources}
}

// buildDoc is the --json result.
type buildDoc struct {
	Toolchain string             `json:"toolchain"`
	OutDir    string             `json:"out_dir"`
	Targets   []string           `json:"targets"`
	Jobs      []*compile.Result  `json:"jobs"`
	Bundles   []string           `json:"bundles,omitempty"`
	Warnings  []string           `json:"warnings,omitempty"`
	Files     []string           `json:"files,omitempty"`
	Summary   buildSummary       `json:"summary"`
	Remote    *cache.RemoteStats `json:"remote,omitempty"` // with a remote cache
	Commands  []string           `json:"commands,omitempty"`
	// Tree is the translation CUDA sources were built from, and Parity
	// their kernels against each code object's.
	Tree   *compile.Tree          `json:"tree,omitempty"`
	Parity []compile.KernelParity `json:"kernel_parity,omitempty"`
	// FirstErrors: per failing unit, its first compiler error, classified.
	FirstErrors []term.UnitError `json:"first_errors,omitempty"`
}

type buildSummary struct {
	Jobs     int            `json:"jobs"`
	Hits     int            `json:"hits"`
	Remote   int            `json:"remote_hits,omitempty"` // of Hits, from the remote cache
	Compiled int            `json:"compiled"`
	Where    map[string]int `json:"compiled_where,omitempty"` // with an executor: compiles by where they ran (local, slurm)
	Failed   int            `json:"failed"`
	WallSec  float64        `json:"wall_seconds"`
	CPUSec   float64        `json:"cpu_seconds"`
}

func runBuild(ctx context.Context, o buildOptions, env Env) error {
	ui := newUI(env, o.g)
	o.Plan.ReadSource = sourceReader(env)
	s, err := openSession(env, o.g, ui, sessionFlags{ROCmPath: o.ROCmPath, Layout: o.Layout, Clang: o.Clang, NoCache: o.NoCache,
		DryRun: o.Plan.DryRun, Project: o.Plan.Project})
	if err != nil {
		return err
	}
	req, ts, err := s.Plan(ctx, o.Plan)
	if err != nil {
		s.Close(ctx)
		return err
	}
	if ts.From == "default" {
		ui.Infof("no --arch given: building for %s (set --arch, ROCMK_ARCH or targets in %s)", ts, compile.ProjectFile)
	}
	var bar term.Progress = term.NopProgress{}
	if !o.Plan.DryRun {
		bar = ui.NewProgress(len(req.Sources)*len(req.Targets), "building")
	}
	bo := compile.BuildOptions{DryRun: o.Plan.DryRun, Events: buildEvents(ui, bar, req.Tree), Print: commandsTo(o, env)}
	rep, berr := s.Build(ctx, req, bo)
	bar.Finish()
	remote := s.Close(ctx)
	if rep == nil || errors.Is(berr, context.Canceled) || errors.Is(berr, context.DeadlineExceeded) {
		return berr
	}
	var list compile.ErrorList
	if berr != nil && !errors.As(berr, &list) {
		return berr
	}
	tc, _ := s.Resolver().Toolchain()
	parity := treeParity(req.Tree, rep, ui)
	doc := newBuildDoc(tc.Name(), req, rep, remote)
	doc.Tree, doc.Parity = req.Tree, parity
	for _, w := range rep.Warnings {
		ui.Warnf("%s", w)
	}
	if len(list) > 0 && req.Tree != nil {
		ui.Infof("the translated sources the errors below name are in %s", req.Tree.Dir)
	}
	term.Diagnostics(ui, list)
	doc.FirstErrors = term.FirstErrors(ui, term.ClassifyFirstErrors(list, req))
	if o.Plan.DryRun {
		return printDryRun(ui, o.g.JSON, doc, rep, len(list))
	}
	if o.ResourceUsage {
		term.WarnSpills(ui, rep)
	}
	if err := ui.Result("build", doc, func(w io.Writer, st *term.Styles) error { return printBuild(w, st, o, rep, doc) }); err != nil {
		return err
	}
	if len(list) > 0 {
		return fmt.Errorf("build failed: %d of %d jobs failed", len(list), len(rep.Results))
	}
	return nil
}

// commandsTo is where the commands are printed: -n's result on stdout (in
// the document with --json), -x's trace on stderr.
func commandsTo(o buildOptions, env Env) io.Writer {
	switch {
	case o.Plan.DryRun && o.g.JSON:
		return io.Discard
	case o.Plan.DryRun:
		return env.Stdout
	case o.Print:
		return env.Stderr
	}
	return nil
}

// printBuild is build's text: the --resource-usage table, the summary.
func printBuild(w io.Writer, st *term.Styles, o buildOptions, rep *compile.Report, doc buildDoc) error {
	if o.ResourceUsage {
		if err := term.ResourceUsage(w, st, rep); err != nil {
			return err
		}
	}
	if o.g.Quiet {
		return nil
	}
	return term.BuildSummary(w, rep, doc.OutDir, doc.Remote != nil)
}

// buildEvents shows the build's progress: a bar on a TTY, a line per job
// with -v (where a hit came from: local or remote), naming the original of
// a translated source.
func buildEvents(ui *term.UI, bar term.Progress, tree *compile.Tree) func(compile.Event) {
	return func(e compile.Event) {
		if e.Kind != compile.EventDone {
			return
		}
		r := e.Result
		bar.Add(1)
		src := term.SourceName(r.Src)
		if tree != nil && tree.Original(r.Src) != "" {
			src = term.SourceName(tree.Original(r.Src))
		}
		switch r.Status {
		case compile.StatusHit:
			ui.Verbosef(1, "%-9s %s [%s] %s", map[string]string{"local": "hit", "remote": "remote"}[r.Cache], src, r.Target, term.Duration(r.Dur))
		case compile.StatusCompiled:
			ui.Verbosef(1, "compiled  %s [%s] %s (cpu %s)", src, r.Target, term.Duration(r.Dur), term.Duration(r.CPU))
		case compile.StatusFailed:
			ui.Verbosef(1, "FAILED    %s [%s] %s", src, r.Target, term.Duration(r.Dur))
		case compile.StatusMissing:
			ui.Verbosef(1, "missing   %s [%s]", src, r.Target)
		}
	}
}

func newBuildDoc(toolchain string, req compile.Request, rep *compile.Report, remote *cache.RemoteStats) buildDoc {
	doc := buildDoc{Toolchain: toolchain, OutDir: req.OutDir, Jobs: rep.Results, Bundles: rep.Bundles, Warnings: rep.Warnings, Files: rep.Files, Remote: remote,
		Summary: buildSummary{Jobs: len(rep.Results), Hits: rep.Count(compile.StatusHit), Compiled: rep.Count(compile.StatusCompiled),
			Failed: rep.Count(compile.StatusFailed), WallSec: rep.Wall.Seconds(), CPUSec: rep.CPU.Seconds(), Remote: rep.RemoteHits(), Where: rep.Where()}}
	for _, t := range req.Targets {
		doc.Targets = append(doc.Targets, t.String())
	}
	return doc
}

// printDryRun: -n printed the commands as they were planned; --json has
// them in the document. A job with no toolchain (failed) has no command.
func printDryRun(ui *term.UI, asJSON bool, doc buildDoc, rep *compile.Report, failed int) error {
	if asJSON {
		for _, r := range rep.Results {
			if r.Argv != nil {
				doc.Commands = append(doc.Commands, runner.CmdString(runner.Cmd{Argv: r.Argv}))
			}
		}
		if err := ui.Result("build", doc, nil); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("build -n: no command for %d of %d jobs", failed, len(rep.Results))
	}
	return nil
}
