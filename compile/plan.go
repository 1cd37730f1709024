package compile

import (
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/hipify"
)

// UsageError is an error whose fix is in how rocmk was called or
// configured: a flag or a project setting (exit status 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

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
	DryRun    bool     // -n: hipify writes nothing
	// ReadSource reads a .cu source to hipify (nil: a regular file of at
	// most 256 MiB).
	ReadSource func(name string) ([]byte, error)
}

// Plan turns a build's options into its Request: the sources (named, the
// project's or the bundled kernels), the targets (ResolveTargets over
// --arch, the project's, the environment, the GPUs and the toolchain's
// defaults), the flags, the output names (checked before anything is
// written), and .cu sources hipified to .hip first.
func (s *Session) Plan(o PlanOptions) (Request, Targets, error) {
	req := Request{OutDir: o.OutDir, Bundle: o.Bundle, Embed: o.Embed, EmbedPackage: o.GoPackage}
	for _, e := range o.Embed {
		if !strings.Contains(" rust go c ", " "+e+" ") {
			return req, Targets{}, usagef("--embed: unknown kind %q (want rust, go or c)", e)
		}
	}
	if err := checkGoPackage(o.GoPackage, "--go-package"); err != nil {
		return req, Targets{}, err
	}
	p, err := s.project(o)
	if err != nil {
		return req, Targets{}, err
	}
	var flags []string
	hipifyDir, strict, manifest := "", false, []string(nil)
	switch {
	case len(o.Sources) > 0:
		req.Sources = o.Sources
	case p != nil:
		if req.Sources, err = p.ExpandSources(); err != nil {
			return req, Targets{}, err
		}
		if err := s.fromProject(p, o, &req); err != nil {
			return req, Targets{}, err
		}
		flags, manifest = p.CompileFlags(), p.Targets
		hipifyDir, strict = p.HipifyDir(), p.Hipify.Strict
		s.o.Verbose("project %s: %d sources", p.Path, len(req.Sources))
	default:
		if req.Sources, err = o.Bundled(); err != nil {
			return req, Targets{}, err
		}
		s.o.Verbose("no sources and no %s: building the bundled kernels (%d modules)", ProjectFile, len(req.Sources))
	}
	if req.OutDir == "" {
		req.OutDir = DefaultOutDir
	}
	req.Flags = append(flags, buildFlags(o)...)
	ts, err := ResolveTargets(TargetRequest{Flag: o.Arch, Manifest: manifest, Getenv: s.o.Getenv, GPUs: s.DetectGPUs, Default: s.DefaultTargets})
	if err != nil {
		return req, ts, err
	}
	req.Targets = ts.List
	// Before hipify writes anything: a.cu and b/a.cu would both become a.hip.
	if err := CheckOutputNames(req.Sources, ts.List, req.OutDir, len(req.Embed) > 0); err != nil {
		return req, ts, err
	}
	if hipifyDir == "" {
		hipifyDir = filepath.Join(req.OutDir, "hipified")
	}
	for i, src := range req.Sources {
		if strings.HasSuffix(src, ".cu") || strings.HasSuffix(src, ".cuh") {
			if req.Sources[i], err = hipifySource(o, src, hipifyDir, strict); err != nil {
				return req, ts, err
			}
		}
	}
	return req, ts, nil
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

// buildFlags are the command line's -D, -I (absolute) and -X flags.
func buildFlags(o PlanOptions) []string {
	var flags []string
	for _, d := range o.Defines {
		flags = append(flags, "-D"+d)
	}
	for _, i := range o.Includes {
		if abs, err := filepath.Abs(i); err == nil {
			i = abs
		}
		flags = append(flags, "-I"+i)
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

// hipifySource translates a .cu source into dir/<stem>.hip (with -n, only
// names it) and returns that path.
func hipifySource(o PlanOptions, src, dir string, strict bool) (string, error) {
	read := o.ReadSource
	if read == nil {
		read = func(name string) ([]byte, error) { return safefile.Read(name, 256<<20) }
	}
	data, err := read(src)
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
	dst := filepath.Join(dir, Stem(src)+".hip")
	if o.DryRun {
		return dst, nil
	}
	return dst, safefile.Write(dst, out, safefile.Options{SkipIfSame: true})
}
