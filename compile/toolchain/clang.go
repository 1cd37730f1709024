package toolchain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/inspect"
)

// Toolchain knows a compiler's flags and identity; it never execs directly
// (every program runs through a Runner).
type Toolchain interface {
	// Name is a short human description ("clang 15.0.6, ROCm 5.2.3").
	Name() string
	// ID is the compiler's identity for cache keys, the same on every
	// machine with the same compiler: its binaries' sha256, its
	// `--version` text and the versions it was found with. It runs the
	// compiler; Builders remember it under Stamp (see remember).
	ID(ctx context.Context, r runner.Runner) (string, error)
	// Stamp identifies what ID covers by stat data, without running or
	// reading anything (paths, sizes, mtimes, inodes, versions).
	Stamp() string
	// Argv is the command for j. Pure: same job, same argv.
	Argv(j Job) []string
	// Deps parses a -MD dependency file into the files it lists.
	Deps(depfile []byte) ([]string, error)
	// DeviceLibs is the device-library directory target t links from
	// ("" = none): its files' content is part of every key for t.
	DeviceLibs(t inspect.Target) string
	// Check returns nil if the toolchain can build t, else an error saying
	// what it is missing and which targets it supports.
	Check(t inspect.Target) error
	// SearchPath asks the compiler where j looks for headers (run in j.Dir).
	SearchPath(ctx context.Context, r runner.Runner, j Job) (*SearchPath, error)
}

// Job is one compilation: one source for one target. Argv is a pure function
// of a Job and the Toolchain, so the same Job always runs the same command.
type Job struct {
	Src     string         // the source as clang sees it: relative to Dir when inside it, else absolute
	Dir     string         // directory clang runs in: the build's base directory ("" = current)
	Target  inspect.Target // the one --offload-arch
	Flags   []string       // user flags, in order (-D, -I, -f..., -m...)
	Out     string         // where clang writes the code object
	DepFile string         // where clang writes the dependency file ("" = none)
}

// Layouts: how the compiler is invoked.
const (
	LayoutClang    = "clang"      // clang (Debian clang-15, or ROCm's llvm/bin/clang) called directly
	LayoutAMDClang = "amdclang++" // ROCm's amdclang++ wrapper
	LayoutHIPCC    = "hipcc"      // through hipcc (adds its own flags; slower per call)
)

// Clang is the clang-based toolchain, called directly or through hipcc or
// amdclang++.
type Clang struct {
	Layout           string   // LayoutClang, LayoutAMDClang or LayoutHIPCC
	Driver           string   // argv[0]: clang, amdclang++ or hipcc
	Clang            string   // the clang binary that compiles (identity)
	ClangVersion     string   // "15.0.6"
	RocmPath         string   // --rocm-path ("" = none; then -nogpuinc and HIPInclude)
	DeviceLibDir     string   // --hip-device-lib-path: the amdgcn/bitcode directory
	DeviceLibTargets []string // processors with device libraries (gfx90a, ...); nil = unknown
	HIPInclude       string   // directory holding hip/hip_runtime.h, used when RocmPath is ""
	HIPVersion       string
	ROCmVersion      string
	// DeviceLibsROCm is the device libraries' ROCm release when it is not
	// ROCmVersion (a newer clang's: "6.0"); GeneratedLibs says
	// DeviceLibDir is one rocmk made (PrepareDeviceLibs), whose path is
	// this machine's and stays out of cache keys.
	DeviceLibsROCm string
	GeneratedLibs  bool
}

// Name implements Toolchain.
func (c *Clang) Name() string {
	s := filepath.Base(c.Driver)
	if c.ClangVersion != "" {
		s += " " + c.ClangVersion
	}
	if c.ROCmVersion != "" {
		s += ", ROCm " + c.ROCmVersion
	} else if c.HIPVersion != "" {
		s += ", HIP " + c.HIPVersion
	}
	if c.DeviceLibsROCm != "" {
		s += ", device libraries ROCm " + c.DeviceLibsROCm
	}
	return s
}

// Argv implements Toolchain.
func (c *Clang) Argv(j Job) []string {
	argv := []string{c.Driver, "-x", "hip", "--offload-arch=" + j.Target.String(),
		"--cuda-device-only", "--no-gpu-bundle-output", "-O3"}
	if c.Layout != LayoutHIPCC { // hipcc adds --rocm-path and the device-lib path itself
		if c.RocmPath != "" {
			argv = append(argv, "--rocm-path="+c.RocmPath)
		} else {
			argv = append(argv, "-nogpuinc")
			if c.HIPInclude != "" {
				argv = append(argv, "-isystem", c.HIPInclude)
			}
		}
		if c.DeviceLibDir != "" {
			argv = append(argv, "--hip-device-lib-path="+c.DeviceLibDir)
		}
	}
	// clang names every object's __hip_cuid_ symbol by a hash of its
	// whole command line, temporary output and dependency paths included,
	// so no two compiles agreed; a cuid from the source's path keeps it one
	// per translation unit and makes objects reproducible, so a cache hit is
	// the object a fresh compile gives. Before the flags: a user's -cuid wins.
	argv = append(argv, "-cuid="+cuidOf(j.Src))
	argv = append(argv, j.Flags...)
	if j.DepFile != "" {
		// The dependency list through cc1's own options: clang 21 ignores
		// -MD -MF in a --cuda-device-only compile ("argument unused"), and
		// these write the same file from clang 15 on (-sys-header-deps is
		// what -MD adds: system headers listed too).
		argv = append(argv, "-Xclang", "-dependency-file", "-Xclang", j.DepFile, "-Xclang", "-MT", "-Xclang", "rocmk-object", "-Xclang", "-sys-header-deps")
	}
	return append(argv, "-c", j.Src, "-o", j.Out)
}

// Stamp implements Toolchain.
func (c *Clang) Stamp() string {
	var b strings.Builder
	fmt.Fprintf(&b, "layout %s rocm-path %q hip %q rocm %q\n", c.Layout, c.RocmPath, c.HIPVersion, c.ROCmVersion)
	for _, p := range uniq(c.Clang, c.Driver) {
		fmt.Fprintf(&b, "bin %s\n", FileStamp(p))
	}
	return b.String()
}

// ID implements Toolchain: the layout, the sha256 of clang and of the
// driver when it is a wrapper (hipcc, amdclang++), clang's `--version`
// text, and the HIP and ROCm versions. No path: the command line holds
// them, and a copy of the same toolchain elsewhere shares the cache.
func (c *Clang) ID(ctx context.Context, r runner.Runner) (string, error) {
	out, err := r.Run(ctx, runner.Cmd{Argv: []string{c.Clang, "--version"}})
	if err != nil {
		return "", fmt.Errorf("%s --version: %v", c.Clang, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "layout %s\n", c.Layout)
	for _, p := range uniq(c.Clang, c.Driver) {
		sum, err := FileDigest(p)
		if err != nil {
			return "", err
		}
		role := "clang"
		if p != c.Clang {
			role = "driver"
		}
		fmt.Fprintf(&b, "%s %s\n", role, sum)
	}
	fmt.Fprintf(&b, "version %q\n", strings.TrimSpace(string(out.Stdout)))
	fmt.Fprintf(&b, "hip %q rocm %q", c.HIPVersion, c.ROCmVersion)
	return b.String(), nil
}

func uniq(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" && (len(out) == 0 || out[len(out)-1] != x) {
			out = append(out, x)
		}
	}
	return out
}

// deviceLibName is the isa-version bitcode suffix of a processor:
// gfx90a -> "90a", gfx1030 -> "1030".
func deviceLibName(proc string) string { return strings.TrimPrefix(proc, "gfx") }

// DeviceLibs implements Toolchain: every target links from one directory.
func (c *Clang) DeviceLibs(inspect.Target) string { return c.DeviceLibDir }

// Check implements Toolchain: a target needs its oclc_isa_version bitcode.
func (c *Clang) Check(t inspect.Target) error {
	if c.DeviceLibTargets == nil {
		return nil
	}
	for _, p := range c.DeviceLibTargets {
		if p == t.Proc {
			return nil
		}
	}
	return &UnsupportedTargetError{Target: t, Toolchain: c.Name(), DeviceLibDir: c.DeviceLibDir, Supported: c.DeviceLibTargets}
}

// UnsupportedTargetError says a toolchain cannot build a target.
type UnsupportedTargetError struct {
	Target       inspect.Target
	Toolchain    string
	DeviceLibDir string
	Supported    []string
}

func (e *UnsupportedTargetError) Error() string {
	sup := append([]string(nil), e.Supported...)
	sort.Slice(sup, func(i, j int) bool { return inspect.ProcessorIndex(sup[i]) < inspect.ProcessorIndex(sup[j]) })
	return fmt.Sprintf("target %s is not supported by %s: no device library oclc_isa_version_%s.bc in %s\n"+
		"this toolchain's device libraries support: %s\n"+
		"%s, or drop it from --arch",
		e.Target, e.Toolchain, deviceLibName(e.Target.Proc), e.DeviceLibDir, strings.Join(sup, " "), supportHint(e.Target.Proc))
}

// firstROCm is the first ROCm release with device libraries for a
// processor (ecosystem.md's target table), for error messages.
var firstROCm = map[string]string{
	"gfx942": "ROCm 6.0", "gfx950": "ROCm 7.0", "gfx1100": "ROCm 5.5", "gfx1101": "ROCm 6.0", "gfx1102": "ROCm 6.0",
	"gfx1103": "ROCm 6.0", "gfx1150": "ROCm 6.4", "gfx1151": "ROCm 6.4", "gfx1152": "ROCm 6.4",
	"gfx1200": "ROCm 6.4.1", "gfx1201": "ROCm 6.4.1",
}

func supportHint(proc string) string {
	if v, ok := firstROCm[proc]; ok {
		return fmt.Sprintf("%s is supported by %s or later: install it and set ROCM_PATH", proc, v)
	}
	return fmt.Sprintf("install a ROCm whose device libraries include %s and set ROCM_PATH", proc)
}

// DeviceLibProcessors lists the processors that have an
// oclc_isa_version_*.bc file in dir.
func DeviceLibProcessors(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if v, ok := strings.CutPrefix(n, "oclc_isa_version_"); ok {
			out = append(out, "gfx"+strings.TrimSuffix(v, ".bc"))
		}
	}
	return out
}

// Deps implements Toolchain: it parses a Make-style dependency file (as
// written by -MD -MF) and returns the prerequisites, in order, without
// duplicates. Backslash-newline continues a line; "\ " is a space in a name.
func (c *Clang) Deps(depfile []byte) ([]string, error) { return ParseDepFile(depfile) }

// ParseDepFile parses a Make-style dependency file.
func ParseDepFile(data []byte) ([]string, error) {
	data = bytes.ReplaceAll(data, []byte("\\\r\n"), []byte(" "))
	data = bytes.ReplaceAll(data, []byte("\\\n"), []byte(" "))
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		// Find the rule's colon: the first ':' followed by space or end
		// (a Windows drive "C:\" is not a rule colon).
		i := -1
		for k := 0; k < len(line); k++ {
			if line[k] == '\\' {
				k++
				continue
			}
			if line[k] == ':' && (k+1 == len(line) || line[k+1] == ' ' || line[k+1] == '\t') {
				i = k
				break
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("dependency file: no rule in line %q", line)
		}
		for _, f := range splitDepWords(line[i+1:]) {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

func splitDepWords(s string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '#' || s[i+1] == '\\'):
			cur.WriteByte(s[i+1])
			i++
		case ch == '$' && i+1 < len(s) && s[i+1] == '$':
			cur.WriteByte('$')
			i++
		case ch == ' ' || ch == '\t':
			flush()
		default:
			cur.WriteByte(ch)
		}
	}
	flush()
	return out
}

// NewClang makes the clang toolchain of a discovered installation. layout
// is LayoutClang (call clang directly: the default and fastest),
// LayoutHIPCC (through the installation's hipcc) or LayoutAMDClang (ROCm's
// llvm/bin/amdclang++).
func NewClang(in *Installation, layout string) (*Clang, error) {
	c := &Clang{Layout: LayoutClang, Driver: in.Clang, Clang: in.Clang, ClangVersion: in.ClangVersion,
		DeviceLibDir: in.DeviceLibDir, DeviceLibTargets: in.DeviceLibTargets,
		HIPInclude: in.HIPInclude, HIPVersion: in.HIPVersion, ROCmVersion: in.ROCmVersion}
	if c.DeviceLibTargets == nil {
		c.DeviceLibTargets = []string{}
	}
	// --rocm-path lets clang find the HIP headers itself; without HIP
	// headers under the root, pass -nogpuinc and the include directory.
	if in.HIPInclude != "" && filepath.Clean(in.HIPInclude) == filepath.Join(in.Root, "include") {
		c.RocmPath = in.Root
	}
	switch layout {
	case "", LayoutClang:
	case LayoutHIPCC:
		if in.HIPCC == "" {
			return nil, fmt.Errorf("%w: --layout hipcc: no hipcc in %s", ErrToolchainNotFound, in.Root)
		}
		c.Layout, c.Driver = LayoutHIPCC, in.HIPCC
	case LayoutAMDClang:
		p := filepath.Join(in.LLVMBin, "amdclang++")
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%w: --layout amdclang++: no %s (ROCm installs have it; Debian's does not)", ErrToolchainNotFound, p)
		}
		c.Layout, c.Driver = LayoutAMDClang, p
	default:
		return nil, fmt.Errorf("--layout: %w %q (want clang, hipcc or amdclang++)", ErrBadLayout, layout)
	}
	return c, nil
}

// SearchPath is where the compiler looks for headers, as it reports it for
// one job's command line (`clang -E -v`): the real order, after its own
// rules (-iquote, -I, -isystem, the toolchain's directories, -idirafter;
// duplicates and missing directories dropped).
type SearchPath struct {
	Quote []string // searched for "name" after the includer's directory (-iquote)
	Angle []string // searched for <name>, and for "name" after Quote
	// Missing are directories the command line names that do not exist:
	// the compiler dropped them, so they must stay absent for the list to hold.
	Missing []string
	// Includes are the files the command line includes before the source
	// (-include, -imacros, and the driver's own), in order.
	Includes []string
	// Installs are directories whose entries decide which toolchain
	// directories the driver picks (the GCC installation's version
	// directory, for libstdc++): a new version there changes the list.
	Installs []string
	// Unmodelled is the first cc1 option that makes the compiler find or
	// read headers in a way the include scan does not follow (modules,
	// a VFS overlay, a precompiled header), or "".
	Unmodelled string
}

// unmodelledOptions are the cc1 option prefixes behind SearchPath.Unmodelled.
var unmodelledOptions = []string{"-fmodules", "-fmodule-", "-fimplicit-module-maps", "-fcxx-modules", "-fprebuilt-module-path",
	"-ivfsoverlay", "-include-pch", "-fembed-dir", "--embed-dir"}

// SearchPath implements Toolchain: it runs the job's command line with -E -v
// on an empty input and reads the search list and the cc1 command from stderr.
func (c *Clang) SearchPath(ctx context.Context, r runner.Runner, j Job) (*SearchPath, error) {
	argv := c.searchArgv(j)
	out, err := r.Run(ctx, runner.Cmd{Dir: j.Dir, Argv: argv})
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", runner.CmdString(runner.Cmd{Argv: argv}), err, out.Stderr)
	}
	return ParseSearchPath(out.Stderr)
}

// searchArgv is Argv(j) preprocessing /dev/null with -v instead of compiling j.
func (c *Clang) searchArgv(j Job) []string {
	j.DepFile = ""
	argv := c.Argv(j)
	argv = argv[:len(argv)-4] // drop -c SRC -o OUT
	return append(argv, "-E", "-v", "/dev/null", "-o", "/dev/null")
}

// ParseSearchPath reads the output of `clang -E -v`.
func ParseSearchPath(stderr []byte) (*SearchPath, error) {
	sp := &SearchPath{}
	var list *[]string
	done := false
	for _, line := range strings.Split(string(stderr), "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case done:
		case strings.HasPrefix(line, `ignoring nonexistent directory "`) && strings.HasSuffix(line, `"`):
			sp.Missing = append(sp.Missing, strings.TrimSuffix(strings.TrimPrefix(line, `ignoring nonexistent directory "`), `"`))
		case strings.HasPrefix(line, " ") && (strings.Contains(line, " -cc1 ") || strings.Contains(line, ` "-cc1" `)) && sp.Includes == nil:
			args := splitQuotedArgs(line)
			sp.Includes = []string{}
			for i := 0; i < len(args); i++ {
				for _, u := range unmodelledOptions {
					if strings.HasPrefix(args[i], u) && sp.Unmodelled == "" {
						sp.Unmodelled = args[i]
					}
				}
				if (args[i] == "-include" || args[i] == "-imacros") && i+1 < len(args) {
					sp.Includes = append(sp.Includes, args[i+1])
					i++
				}
			}
		case line == `#include "..." search starts here:`:
			list = &sp.Quote
		case line == `#include <...> search starts here:`:
			list = &sp.Angle
		case line == "End of search list.":
			done = true
		case list != nil && strings.HasPrefix(line, " "):
			d := strings.TrimPrefix(line, " ")
			if strings.HasSuffix(d, " (framework directory)") || strings.HasSuffix(d, " (headermap)") {
				return nil, fmt.Errorf("compiler search path: %q: framework directories and header maps are not supported", d)
			}
			*list = append(*list, d)
		}
	}
	if !done || sp.Includes == nil {
		return nil, errors.New("compiler search path: no search list or cc1 command in the output of -E -v")
	}
	seen := map[string]bool{}
	for _, d := range sp.Angle {
		if i := strings.Index(d, "/lib/gcc"); i >= 0 {
			// <prefix>/lib/gcc[-cross]/<triple>/<version>/...: the triple
			// directory lists the versions the driver chose from.
			parts := strings.SplitN(d[i+1:], "/", 4)
			if len(parts) == 4 {
				g := d[:i+1] + strings.Join(parts[:3], "/")
				if !seen[g] {
					seen[g] = true
					sp.Installs = append(sp.Installs, g)
				}
			}
		}
	}
	return sp, nil
}

// splitQuotedArgs splits a command line as clang -v prints it: arguments
// separated by spaces, quoted with "..." when needed, \ escaping " \ and $.
func splitQuotedArgs(line string) []string {
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"':
			in, quoted = !in, true
		case c == '\\' && in && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case c == ' ' && !in:
			if quoted || cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
			quoted = false
		default:
			cur.WriteByte(c)
		}
	}
	if quoted || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// cuidOf is the compilation-unit ID rocmk gives src: 16 hex digits of the
// sha256 of its path as the compile names it, relative to the base
// directory (so copies of a project agree), or of its base name when it lies
// outside it (so no machine's directory names get in).
func cuidOf(src string) string {
	if filepath.IsAbs(src) {
		src = filepath.Base(src)
	}
	sum := sha256.Sum256([]byte(src))
	return hex.EncodeToString(sum[:8])
}
