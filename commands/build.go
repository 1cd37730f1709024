package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/remote"
	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/inspect"
	"github.com/rocmk/rocmk/kernels"
)

type buildOptions struct {
	Sources       []string
	Arch          []string
	OutDir        string
	DryRun        bool // -n
	Print         bool // -x
	Defines       []string
	Includes      []string
	Flags         []string
	Bundle        bool
	Embed         []string
	GoPackage     string
	ResourceUsage bool
	Layout        string
	NoCache       bool
	Project       string
	ROCmPath      string
	g             globalOptions
}

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "compile HIP sources for several GPU targets in parallel, through the cache",
		ArgsUsage: "[source.hip|source.cu ...]",
		Description: `Compiles every (source, target) pair with the ROCm toolchain's clang, in
parallel (-j), through the content-addressed build cache. Writes one code
object per source and target (OUT/<stem>-<target>.hsaco, ':' in a target ID
becomes '_'), manifest.json, and on request an offload bundle per source
(--bundle) and embedding files (--embed rust,go,c).

With no sources it builds rocmk.toml when the current directory has one, else
the bundled kernel suite. Flags override the manifest.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "arch", Aliases: []string{"a"}, Usage: "target IDs, comma separated (gfx90a,gfx1030,gfx90a:xnack+)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "output directory", DefaultText: compile.DefaultOutDir},
			&cli.BoolFlag{Name: "n", Usage: "print the commands that would run, run nothing"},
			&cli.BoolFlag{Name: "x", Usage: "print the commands as they run"},
			&cli.StringSliceFlag{Name: "D", Usage: "define a macro (NAME or NAME=VALUE)"},
			&cli.StringSliceFlag{Name: "I", Usage: "add an include directory"},
			&cli.StringSliceFlag{Name: "flag", Aliases: []string{"X"}, Usage: "pass one flag to the compiler (repeatable: -X -ffast-math)"},
			&cli.BoolFlag{Name: "bundle", Usage: "also write one offload bundle of all targets per source (<stem>.hipfb)"},
			&cli.StringSliceFlag{Name: "embed", Usage: "write embedding files: rust (hsaco.rs), go (hsaco_embed.go), c (hsaco.h)"},
			&cli.StringFlag{Name: "go-package", Usage: "package name of the Go embedding file", Value: "hsaco"},
			&cli.BoolFlag{Name: "resource-usage", Usage: "print registers, LDS and scratch per kernel; warn on spills"},
			&cli.StringFlag{Name: "layout", Usage: "how to call the compiler: clang, hipcc or amdclang++", Value: compile.LayoutClang},
			&cli.BoolFlag{Name: "no-cache", Usage: "do not read or write the build cache"},
			&cli.StringFlag{Name: "project", Usage: "project manifest to build", DefaultText: "./rocmk.toml if present"},
			&cli.StringFlag{Name: "rocm-path", Usage: "ROCm install to use (default: ROCM_PATH, HIP_PATH, /opt/rocm, Debian /usr)"},
		},
		Action: func(c *cli.Context) error {
			o := buildOptions{Sources: c.Args().Slice(), Arch: splitList(c.StringSlice("arch")), OutDir: c.String("out"),
				DryRun: c.Bool("n"), Print: c.Bool("x"), Defines: c.StringSlice("D"), Includes: c.StringSlice("I"),
				Flags: c.StringSlice("flag"), Bundle: c.Bool("bundle"), Embed: splitList(c.StringSlice("embed")),
				GoPackage: c.String("go-package"), ResourceUsage: c.Bool("resource-usage"), Layout: c.String("layout"),
				NoCache: c.Bool("no-cache"), Project: c.String("project"), ROCmPath: c.String("rocm-path"), g: globals(c)}
			return runBuild(c.Context, o, envOf(c))
		},
	}
}

// buildDoc is the --json result.
type buildDoc struct {
	Toolchain string             `json:"toolchain"`
	OutDir    string             `json:"out_dir"`
	Targets   []string           `json:"targets"`
	Jobs      []*compile.Result  `json:"jobs"`
	Bundles   []string           `json:"bundles,omitempty"`
	Files     []string           `json:"files,omitempty"`
	Summary   buildSummary       `json:"summary"`
	Remote    *cache.RemoteStats `json:"remote,omitempty"` // with a remote cache
	Commands  []string           `json:"commands,omitempty"`
}

type buildSummary struct {
	Jobs     int     `json:"jobs"`
	Hits     int     `json:"hits"`
	Remote   int     `json:"remote_hits,omitempty"` // of Hits, from the remote cache
	Compiled int     `json:"compiled"`
	Failed   int     `json:"failed"`
	WallSec  float64 `json:"wall_seconds"`
	CPUSec   float64 `json:"cpu_seconds"`
}

func runBuild(ctx context.Context, o buildOptions, env Env) error {
	ui := newUI(env, o.g)
	req, err := planBuild(o, env, ui)
	if err != nil {
		return err
	}
	in, err := compile.FindInstallation(findOptions(env, o.ROCmPath))
	if err != nil {
		return err
	}
	tc, err := compile.NewClang(in, o.Layout)
	if err != nil {
		if errors.Is(err, compile.ErrToolchainNotFound) {
			return err
		}
		return usagef("--layout: %v", err)
	}
	if len(req.Targets) == 0 {
		req.Targets = defaultTargets(tc)
		ui.Infof("no --arch given: building for %s (set --arch, ROCMK_ARCH or targets in %s)", targetList(req.Targets), compile.ProjectFile)
	}
	runner := env.Runner
	if o.DryRun || o.Print {
		sh := &compile.Shell{Runner: runner, Print: env.Stderr, DryRun: o.DryRun}
		if o.DryRun {
			sh.Print = env.Stdout // -n: the commands are the result
		}
		runner = sh
	}
	b := &compile.Builder{TC: tc, Run: runner, Jobs: o.g.Jobs, DryRun: o.DryRun, Getenv: env.Getenv}
	defer cache.SetDebugHook(env.Getenv, env.Stderr)()
	var bc *cache.Cache
	var tier *remote.Tier
	if !o.NoCache && !o.DryRun {
		bc, err = openBuildStore(o.g, env)
		if err != nil {
			ui.Warnf("build cache unavailable (%v); building without it", err)
		} else if bc != nil {
			b.Cache = bc
			ui.Verbosef(2, "cache: %s", bc.Dir())
			cfg, err := remoteConfig(o.g, env, o.Project)
			if err != nil {
				return err
			}
			if cfg != nil {
				if tier, err = openTier(bc, cfg, ui); err != nil {
					return err
				}
				b.Cache = tier
			}
		}
	}
	total := len(req.Sources) * len(req.Targets)
	bar := ui.NewProgress(total, "building")
	if o.DryRun {
		bar = nopProgress{}
	}
	b.Events = func(e compile.Event) {
		if e.Kind != compile.EventDone {
			return
		}
		r := e.Result
		bar.Add(1)
		src := displaySource(r.Src)
		switch r.Status {
		case compile.StatusHit:
			ui.Verbosef(1, "%-9s %s [%s] %s", map[string]string{"local": "hit", "remote": "remote"}[r.Cache], src, r.Target, fmtDur(r.Dur))
		case compile.StatusCompiled:
			ui.Verbosef(1, "compiled  %s [%s] %s (cpu %s)", src, r.Target, fmtDur(r.Dur), fmtDur(r.CPU))
		case compile.StatusFailed:
			ui.Verbosef(1, "FAILED    %s [%s] %s", src, r.Target, fmtDur(r.Dur))
		}
	}
	rep, berr := b.Build(ctx, req)
	bar.Finish()
	var remoteStats *cache.RemoteStats
	if tier != nil {
		rs := closeTier(ctx, tier, ui)
		remoteStats = &rs
	}
	if rep == nil {
		return berr
	}
	if errors.Is(berr, context.Canceled) || errors.Is(berr, context.DeadlineExceeded) {
		return berr
	}
	doc := buildDoc{Toolchain: tc.Name(), OutDir: req.OutDir, Bundles: rep.Bundles, Files: rep.Files, Remote: remoteStats,
		Summary: buildSummary{Jobs: len(rep.Results), Hits: rep.Count(compile.StatusHit), Compiled: rep.Count(compile.StatusCompiled),
			Failed: rep.Count(compile.StatusFailed), WallSec: rep.Wall.Seconds(), CPUSec: rep.CPU.Seconds()}}
	for _, r := range rep.Results {
		doc.Jobs = append(doc.Jobs, r)
		if r.Cache == "remote" {
			doc.Summary.Remote++
		}
	}
	for _, t := range req.Targets {
		doc.Targets = append(doc.Targets, t.String())
	}
	if o.DryRun {
		if o.g.JSON {
			for _, r := range rep.Results {
				doc.Commands = append(doc.Commands, compile.CmdString(compile.Cmd{Argv: r.Argv}))
			}
			return ui.Result("build", doc, nil)
		}
		return nil
	}
	var list compile.ErrorList
	if errors.As(berr, &list) {
		// Compiler diagnostics go to stderr under "# src [target]" headers.
		for _, ce := range list {
			fmt.Fprintln(env.Stderr, ui.ErrS.Header.Render(strings.SplitN(ce.Error(), "\n", 2)[0]))
			if rest := strings.SplitN(ce.Error(), "\n", 2); len(rest) == 2 {
				fmt.Fprintln(env.Stderr, rest[1])
			}
		}
	} else if berr != nil {
		return berr
	}
	if o.ResourceUsage {
		warnSpills(ui, rep)
	}
	if err := cacheAfterBuild(bc, rep); err != nil {
		ui.Verbosef(1, "cache: %v", err)
	}
	if err := ui.Result("build", doc, func(w io.Writer, s *Styles) error {
		if o.ResourceUsage {
			if err := printUsage(w, s, rep); err != nil {
				return err
			}
		}
		if !o.g.Quiet {
			remote := ""
			if tier != nil {
				remote = fmt.Sprintf(" (%d remote)", doc.Summary.Remote)
			}
			fmt.Fprintf(w, "%d jobs: %d cached%s, %d compiled, %d failed; wall %s, compiler CPU %s; output in %s\n",
				doc.Summary.Jobs, doc.Summary.Hits, remote, doc.Summary.Compiled, doc.Summary.Failed,
				fmtDur(rep.Wall), fmtDur(rep.CPU), req.OutDir)
		}
		return nil
	}); err != nil {
		return err
	}
	if len(list) > 0 {
		return fmt.Errorf("build failed: %d of %d jobs failed", len(list), len(rep.Results))
	}
	return nil
}

// displaySource names a source for people: the bundled kernels as
// kernels/<name>, others relative to the current directory when inside it.
func displaySource(src string) string {
	if strings.Contains(src, string(filepath.Separator)+"rocmk-kernels-") {
		return "kernels/" + filepath.Base(src)
	}
	if wd, err := os.Getwd(); err == nil && filepath.IsAbs(src) {
		if rel, err := filepath.Rel(wd, src); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return src
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// checkGoPackage refuses a package name for hsaco_embed.go that is not a Go
// identifier: the name is written into the file as is.
func checkGoPackage(name, from string) error {
	if !token.IsIdentifier(name) || name == "_" {
		return usagef("%s %q: want a Go package name (an identifier, not a keyword)", from, name)
	}
	return nil
}

// planBuild turns options (and rocmk.toml, or the bundled kernels) into a
// compile.Request.
func planBuild(o buildOptions, env Env, ui *UI) (compile.Request, error) {
	req := compile.Request{OutDir: o.OutDir, Bundle: o.Bundle, Embed: o.Embed, EmbedPackage: o.GoPackage}
	for _, e := range o.Embed {
		if e != "rust" && e != "go" && e != "c" {
			return req, usagef("--embed: unknown kind %q (want rust, go or c)", e)
		}
	}
	if err := checkGoPackage(o.GoPackage, "--go-package"); err != nil {
		return req, err
	}
	var manifestTargets []string
	var flags []string
	hipifyDir := ""
	strict := false
	switch {
	case len(o.Sources) > 0:
		req.Sources = o.Sources
	case o.Project != "" || fileExists(compile.ProjectFile):
		path := o.Project
		if path == "" {
			path = compile.ProjectFile
		}
		p, err := compile.LoadProject(path)
		if err != nil {
			return req, err
		}
		srcs, err := p.ExpandSources()
		if err != nil {
			return req, err
		}
		req.Sources = srcs
		manifestTargets = p.Targets
		flags = p.CompileFlags()
		if req.OutDir == "" {
			req.OutDir = p.OutDir()
		}
		req.Bundle = req.Bundle || p.Output.Bundle
		if len(req.Embed) == 0 {
			req.Embed = p.Output.Embed
		}
		if p.Output.GoPackage != "" && o.GoPackage == "hsaco" {
			if err := checkGoPackage(p.Output.GoPackage, p.Path+": output.go_package"); err != nil {
				return req, err
			}
			req.EmbedPackage = p.Output.GoPackage
		}
		hipifyDir, strict = p.HipifyDir(), p.Hipify.Strict
		ui.Verbosef(1, "project %s: %d sources", p.Path, len(srcs))
	default:
		dir, err := writeBundledKernels()
		if err != nil {
			return req, err
		}
		for _, n := range kernels.Sources() {
			req.Sources = append(req.Sources, filepath.Join(dir, n))
		}
		ui.Verbosef(1, "no sources and no %s: building the bundled kernels (%d modules)", compile.ProjectFile, len(req.Sources))
	}
	if req.OutDir == "" {
		req.OutDir = compile.DefaultOutDir
	}
	if hipifyDir == "" {
		hipifyDir = filepath.Join(req.OutDir, "hipified")
	}
	for _, d := range o.Defines {
		flags = append(flags, "-D"+d)
	}
	for _, i := range o.Includes {
		if abs, err := filepath.Abs(i); err == nil {
			i = abs
		}
		flags = append(flags, "-I"+i)
	}
	req.Flags = append(flags, o.Flags...)
	ts, err := selectBuildTargets(o.Arch, manifestTargets, env.Getenv)
	if err != nil {
		return req, err
	}
	req.Targets = ts
	// Before hipify writes anything: a.cu and b/a.cu would both become a.hip.
	if err := compile.CheckOutputNames(req.Sources, ts, req.OutDir, len(req.Embed) > 0); err != nil {
		return req, err
	}
	// .cu sources go through hipify first.
	limit, err := inputLimit(env, maxSourceSize)
	if err != nil {
		return req, err
	}
	for i, s := range req.Sources {
		if strings.HasSuffix(s, ".cu") || strings.HasSuffix(s, ".cuh") {
			out, err := hipifySource(s, hipifyDir, strict, o.DryRun, limit)
			if err != nil {
				return req, err
			}
			req.Sources[i] = out
		}
	}
	return req, nil
}

// selectBuildTargets: compile.SelectTargets over --arch, the manifest and
// ROCMK_ARCH & co., with the GPUs detected only when needed ("native", or
// nothing named). nil means the toolchain default (see defaultTargets).
func selectBuildTargets(flag, manifest []string, getenv func(string) string) ([]inspect.Target, error) {
	named := len(flag) > 0 || len(manifest) > 0
	for _, v := range compile.ArchEnvVars {
		named = named || strings.TrimSpace(getenv(v)) != ""
	}
	native := false
	for _, f := range append(append([]string(nil), flag...), manifest...) {
		native = native || strings.Contains(f, "native")
	}
	var gpus []compile.GPU
	if !named || native {
		gpus, _ = compile.DetectGPUs(compile.FindOptions{Getenv: getenv})
	}
	ts, _, err := compile.SelectTargets(flag, manifest, getenv, gpus)
	if err != nil {
		if !named && errors.Is(err, compile.ErrNoTargets) {
			return nil, nil
		}
		return nil, usagef("%v", err)
	}
	return ts, nil
}

// defaultTargets is what a build with no --arch compiles for: the common
// data-centre and desktop targets this toolchain has device libraries for.
func defaultTargets(tc *compile.Clang) []inspect.Target {
	var out []inspect.Target
	for _, p := range []string{"gfx90a", "gfx942", "gfx1030", "gfx1100"} {
		t := inspect.MustParseTarget(p)
		if tc.Check(t) == nil {
			out = append(out, t)
		}
	}
	return out
}

func targetList(ts []inspect.Target) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, ",")
}

// openBuildStore opens the build cache: --cache-dir, else
// ROCMK_CACHE_DIR, else the user cache dir; ROCMK_CACHE=off disables it
// (nil cache).
func openBuildStore(g globalOptions, env Env) (*cache.Cache, error) {
	dir, off, err := cache.DefaultDir(env.Getenv)
	if err != nil || off {
		return nil, err
	}
	if g.CacheDir != "" {
		if dir, err = filepath.Abs(g.CacheDir); err != nil {
			return nil, err
		}
	}
	return cache.Open(dir)
}

// cacheAfterBuild records hit/miss statistics and trims the cache at most
// once a day.
func cacheAfterBuild(c *cache.Cache, rep *compile.Report) error {
	if c == nil {
		return nil
	}
	if err := c.AddStats(rep.Count(compile.StatusHit), rep.Count(compile.StatusCompiled)); err != nil {
		return err
	}
	return c.AutoTrim()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// writeBundledKernels writes the embedded kernel suite to a directory named
// by its content, so every build sees the same real paths (the compiler
// needs files; stable paths keep cache keys stable).
func writeBundledKernels() (string, error) {
	h := sha256.New()
	names := kernels.Sources()
	for _, n := range names {
		b, err := kernels.FS.ReadFile(n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("rocmk-kernels-%d-%s", os.Getuid(), hex.EncodeToString(h.Sum(nil))[:16]))
	for _, n := range names {
		b, _ := kernels.FS.ReadFile(n)
		if err := safefile.Write(filepath.Join(dir, n), b, safefile.Options{SkipIfSame: true}); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func hipifySource(src, dir string, strict, dryRun bool, limit int64) (string, error) {
	data, err := readInput(src, limit)
	if err != nil {
		return "", err
	}
	// NoCompat: rocmk_hip_compat.h is not on this build's include path yet
	out, rep, err := hipify.Translate(src, data, hipify.Options{NoCompat: true})
	if err != nil {
		return "", fmt.Errorf("hipify %s: %w", src, err)
	}
	if strict && rep != nil && len(rep.Unsupported) > 0 {
		d := rep.Unsupported[0]
		return "", fmt.Errorf("hipify %s: %d unsupported CUDA APIs (first: %s: %s)", src, len(rep.Unsupported), d.Where, d.Msg)
	}
	dst := filepath.Join(dir, compile.Stem(src)+".hip")
	if dryRun {
		return dst, nil
	}
	if err := safefile.Write(dst, out, safefile.Options{SkipIfSame: true}); err != nil {
		return "", err
	}
	return dst, nil
}

// warnSpills warns about kernels that spill registers to scratch.
func warnSpills(ui *UI, rep *compile.Report) {
	for _, r := range rep.Results {
		for _, k := range r.Kernels {
			if k.VGPRSpills > 0 || k.SGPRSpills > 0 {
				ui.Warnf("%s [%s]: kernel %s spills registers (%d VGPRs, %d SGPRs) to scratch", filepath.Base(r.Src), r.Target, k.Name, k.VGPRSpills, k.SGPRSpills)
			}
		}
	}
}

func printUsage(w io.Writer, s *Styles, rep *compile.Report) error {
	t := Table{Header: []string{"SOURCE", "TARGET", "KERNEL", "VGPR", "SGPR", "AGPR", "SPILLS", "LDS", "SCRATCH"},
		Right: map[int]bool{3: true, 4: true, 5: true, 6: true, 7: true, 8: true}}
	rs := append([]*compile.Result(nil), rep.Results...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Src < rs[j].Src })
	for _, r := range rs {
		for _, k := range r.Kernels {
			t.Rows = append(t.Rows, []string{filepath.Base(r.Src), r.Target.String(), k.Name,
				itoaB(k.VGPRs), itoaB(k.SGPRs), itoaB(k.AGPRs), itoaB(k.VGPRSpills + k.SGPRSpills), itoaB(k.LDS), itoaB(k.Scratch)})
		}
	}
	return t.Render(w, s)
}

func itoaB(n int) string { return fmt.Sprint(n) }
