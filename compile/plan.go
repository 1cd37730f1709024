package compile

import (
	"context"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/slurm"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/inspect"
)

// usagef reports an error whose fix is in how rocmk was called or
// configured: a flag or a project setting (exit status 2).
func usagef(format string, a ...any) error { return safefile.Usagef(format, a...) }

// PlanOptions are `rocmk build`'s flags.
type PlanOptions struct {
	Sources []string // named on the command line
	Project string   // --project ("" = ./rocmk.toml when there is one)
	// Bundled writes the bundled kernels and returns their paths: the
	// sources when none are named and there is no project.
	Bundled   func() ([]string, error)
	Arch      []string // --arch
	OutDir    string   // -o ("" = the project's, else DefaultOutDir)
	Bundle    bool
	Embed     []string // rust, go, c (none: the project's)
	GoPackage string   // --go-package (the project's wins over "hsaco", the flag's default)
	Defines   []string // -D, after the project's flags
	Includes  []string // -I
	Flags     []string // -X
	DryRun    bool     // -n: the translated tree is named, not written
	Executor  string   // --executor ("" = the project's, else local)
	SlurmMode string   // --slurm-mode ("" = the project's, else slurm.DefaultMode)
	// ReadSource reads a CUDA source or header to translate (nil: a
	// regular file of at most 256 MiB).
	ReadSource func(name string) ([]byte, error)
}

// Plan turns a build's options into its Request: the sources (named, the
// project's or the bundled kernels; a directory stands for its kernel
// sources), the targets (ResolveTargets over --arch, the project's, the
// environment, the GPUs and the toolchain's defaults), the flags, the output
// names (checked before anything is written), and, when a source is CUDA,
// the translated tree the build compiles in (Request.Tree, PrepareTree).
func (s *Session) Plan(ctx context.Context, o PlanOptions) (Request, toolchain.Targets, error) {
	req := Request{OutDir: o.OutDir, Bundle: o.Bundle, Embed: o.Embed, EmbedPackage: o.GoPackage}
	for _, e := range o.Embed {
		if !strings.Contains(" rust go c ", " "+e+" ") {
			return req, toolchain.Targets{}, usagef("--embed: unknown kind %q (want rust, go or c)", e)
		}
	}
	if err := checkGoPackage(o.GoPackage, "--go-package"); err != nil {
		return req, toolchain.Targets{}, err
	}
	p, err := s.project(o)
	if err != nil {
		return req, toolchain.Targets{}, err
	}
	if err := planExecutor(p, o, &req); err != nil {
		return req, toolchain.Targets{}, err
	}
	var flags, includes, dirs []string
	hipifyDir, strict, manifest := "", false, []string(nil)
	switch {
	case len(o.Sources) > 0:
		if req.Sources, dirs, err = kernelSources(o.Sources); err != nil {
			return req, toolchain.Targets{}, err
		}
	case p != nil:
		if req.Sources, dirs, err = p.ExpandSourceDirs(); err != nil {
			return req, toolchain.Targets{}, err
		}
		if err := s.fromProject(p, o, &req); err != nil {
			return req, toolchain.Targets{}, err
		}
		flags, includes, manifest = p.CompileFlags(), p.IncludeDirs(), p.Targets
		hipifyDir, strict = p.HipifyDir(), p.Hipify.Strict
		s.o.Verbose("project %s: %d sources", p.Path, len(req.Sources))
	default:
		if req.Sources, err = o.Bundled(); err != nil {
			return req, toolchain.Targets{}, err
		}
		s.o.Verbose("no sources and no %s: building the bundled kernels (%d modules)", ProjectFile, len(req.Sources))
	}
	if req.OutDir == "" {
		req.OutDir = DefaultOutDir
	}
	req.Flags = append(flags, buildFlags(o)...)
	for _, i := range o.Includes {
		if abs, err := filepath.Abs(i); err == nil {
			i = abs
		}
		includes = append(includes, i)
	}
	ts, err := toolchain.ResolveTargets(toolchain.TargetRequest{Flag: o.Arch, Manifest: manifest, Getenv: s.o.Getenv, GPUs: s.res.DetectGPUs, Default: func() []inspect.Target { return s.res.DefaultTargets(ctx) }})
	if err != nil {
		return req, ts, err
	}
	req.Targets = ts.List
	// Before anything is translated: a.cu and b/a.cu would both write a-gfx90a.hsaco.
	if err := CheckOutputNames(req.Sources, ts.List, req.OutDir, len(req.Embed) > 0); err != nil {
		return req, ts, err
	}
	if hipifyDir == "" {
		hipifyDir = filepath.Join(req.OutDir, "hipified")
	}
	err = s.planTree(&req, TreeBuild{Includes: includes, Dirs: dirs, Options: hipify.Options{HIPVersion: s.TranslationHIP()},
		Root: s.TreeRoot(), DryRun: o.DryRun, Read: o.ReadSource}, hipifyDir, strict)
	return req, ts, err
}

// kernelSources expands the directories among sources into their kernel
// sources (KernelDir) and names them.
func kernelSources(sources []string) (files, dirs []string, err error) {
	for _, src := range sources {
		if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
			files = append(files, src)
			continue
		}
		units, err := KernelDir(src)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, units...)
		dirs = append(dirs, src)
	}
	return files, dirs, nil
}

// planTree translates a build with CUDA sources into a tree (PrepareTree)
// and writes a copy of it to hipifyDir, for reading; without CUDA sources
// the -I directories are the flags'. strict makes an unsupported CUDA API
// an error.
func (s *Session) planTree(req *Request, tb TreeBuild, hipifyDir string, strict bool) error {
	tree, err := PrepareTree(req, tb)
	if err != nil || tree == nil {
		for _, i := range tb.Includes {
			req.Flags = append(req.Flags, "-I"+i)
		}
		return err
	}
	req.Tree = tree
	for _, w := range tree.Warnings {
		s.o.Warn("%s", w)
	}
	translated := 0
	for _, f := range tree.Files {
		if f.Report == nil {
			continue
		}
		translated++
		if strict && len(f.Report.Unsupported) > 0 {
			d := f.Report.Unsupported[0]
			return fmt.Errorf("hipify %s: %d unsupported CUDA APIs (first: %s: %s)", f.Path, len(f.Report.Unsupported), d.Where, d.Msg)
		}
	}
	s.o.Verbose("translated %d files (HIP %s) into %s", translated, tb.Options.HIPVersion, tree.Dir)
	if tb.DryRun {
		return nil
	}
	for _, f := range tree.Files {
		if err := safefile.Write(filepath.Join(hipifyDir, filepath.FromSlash(f.Rel)), f.Data, safefile.Options{SkipIfSame: true}); err != nil {
			return err
		}
	}
	return nil
}

// project loads --project, else ./rocmk.toml when there is one and no
// source is named.
func (s *Session) project(o PlanOptions) (*Project, error) {
	path := o.Project
	if path == "" && len(o.Sources) == 0 {
		if _, err := os.Stat(ProjectFile); err == nil {
			path = ProjectFile
		}
	}
	if path == "" || len(o.Sources) > 0 {
		return nil, nil
	}
	if s.o.Project != nil { // the command's, loaded once
		return s.o.Project, nil
	}
	return LoadProject(path)
}

// fromProject fills what the flags left to the project.
func (s *Session) fromProject(p *Project, o PlanOptions, req *Request) error {
	if req.OutDir == "" {
		req.OutDir = p.OutDir()
	}
	req.Bundle = req.Bundle || p.Output.Bundle
	if len(req.Embed) == 0 {
		req.Embed = p.Output.Embed
	}
	if p.Output.GoPackage != "" && o.GoPackage == "hsaco" {
		if err := checkGoPackage(p.Output.GoPackage, p.Path+": output.go_package"); err != nil {
			return err
		}
		req.EmbedPackage = p.Output.GoPackage
	}
	return nil
}

// planExecutor picks the executor: --executor, else the project's.
func planExecutor(p *Project, o PlanOptions, req *Request) error {
	req.Executor = o.Executor
	from := "--executor"
	if p != nil {
		if req.Executor == "" {
			req.Executor, from = p.Executor, p.Path+": executor"
		}
		req.Slurm = p.Slurm
	}
	if req.Executor != "" && !slices.Contains(Executors, req.Executor) {
		return usagef("%s %q: want local or slurm", from, req.Executor)
	}
	if p != nil {
		from = p.Path + ": [slurm] mode"
	}
	if o.SlurmMode != "" {
		req.Slurm.Mode, from = o.SlurmMode, "--slurm-mode"
	}
	if m := req.Slurm.Mode; m != "" && !slices.Contains(slurm.Modes, m) {
		return usagef("%s %q: want %s", from, m, strings.Join(slurm.Modes, ", "))
	}
	return nil
}

// buildFlags are the command line's -D and -X flags (the -I directories
// are the tree's, or added by planTree).
func buildFlags(o PlanOptions) []string {
	var flags []string
	for _, d := range o.Defines {
		flags = append(flags, "-D"+d)
	}
	return append(flags, o.Flags...)
}

// checkGoPackage refuses a package name for hsaco_embed.go that is not a Go
// identifier: the name is written into the file as is.
func checkGoPackage(name, from string) error {
	if !token.IsIdentifier(name) || name == "_" {
		return usagef("%s %q: want a Go package name (an identifier, not a keyword)", from, name)
	}
	return nil
}
