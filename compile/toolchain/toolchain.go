package toolchain

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/inspect"
)

// Installation is a discovered ROCm/HIP toolchain: the pieces rocmk needs to
// compile HIP for AMD GPUs and where they are.
type Installation struct {
	Root   string `json:"root"`   // "/usr", "/opt/rocm-6.2.0"
	Layout string `json:"layout"` // "debian" or "rocm"
	// LayoutDetail says which shape of install the root has and the file
	// that showed it ("AMD ROCm 7 tree (lib/llvm/bin/amdclang++)").
	LayoutDetail string `json:"layout_detail"`

	Clang        string `json:"clang"`         // clang++ driver used for HIP
	ClangVersion string `json:"clang_version"` // "15.0.6"
	ClangMajor   int    `json:"clang_major"`
	HIPCC        string `json:"hipcc"`   // "" when absent
	Bundler      string `json:"bundler"` // clang-offload-bundler, "" when absent
	LLVMBin      string `json:"llvm_bin"`

	DeviceLibDir     string   `json:"device_lib_dir"`
	DeviceLibFrom    string   `json:"device_lib_from"`    // which kind of place DeviceLibDir is, and who put it there
	DeviceLibTargets []string `json:"device_lib_targets"` // gfx names with oclc_isa_version_*.bc, processor order

	HIPInclude      string `json:"hip_include"` // directory holding hip/hip_runtime.h ("" when absent)
	HIPVersion      string `json:"hip_version"`
	ROCmVersion     string `json:"rocm_version"`
	ROCmVersionFrom string `json:"rocm_version_from"` // ".info/version", "dpkg hipcc", "ROCMK_ROCM_VERSION", ...

	Source   string   `json:"source"`             // how it was found: "--rocm-path", "ROCM_PATH", "/opt/rocm", "debian /usr"...
	Warnings []string `json:"warnings,omitempty"` // pieces missing that do not stop a build, each with its fix
}

// FindOptions says where and how to look. Tests fill Root, Getenv, LookPath
// and Run with fakes; the zero value looks at the real machine.
type FindOptions struct {
	ROCmPath string                       // --rocm-path
	Getenv   func(string) string          // nil = os.Getenv
	LookPath func(string) (string, error) // nil = exec.LookPath (no PATH search when Root is set)
	Root     string                       // filesystem root prefix for tests, "" = "/"
	Run      runner.Runner                // runs `clang --version`, amdgpu-arch, ...; nil = runner.ExecRunner
}

func (o FindOptions) getenv(k string) string {
	if o.Getenv == nil {
		return os.Getenv(k)
	}
	return o.Getenv(k)
}

func (o FindOptions) lookPath(name string) (string, error) {
	if o.LookPath != nil {
		return o.LookPath(name)
	}
	if o.Root != "" {
		return "", exec.ErrNotFound
	}
	return exec.LookPath(name)
}

func (o FindOptions) run(argv ...string) ([]byte, error) {
	r := o.Run
	if r == nil {
		r = runner.ExecRunner{}
	}
	out, err := r.Run(context.Background(), runner.Cmd{Argv: argv})
	return out.Stdout, err
}

// path maps an absolute machine path into Root.
func (o FindOptions) path(p string) string {
	if o.Root == "" {
		return p
	}
	return filepath.Join(o.Root, p)
}

// real maps a path under Root back to the machine path it stands for.
func (o FindOptions) real(p string) string {
	if o.Root == "" || p == "" {
		return p
	}
	r, err := filepath.Rel(o.Root, p)
	if err != nil || strings.HasPrefix(r, "..") {
		return p
	}
	return "/" + filepath.ToSlash(r)
}

func (o FindOptions) exists(p string) bool {
	_, err := os.Stat(o.path(p))
	return err == nil
}

func (o FindOptions) isExec(p string) bool {
	fi, err := os.Stat(o.path(p))
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

func (o FindOptions) glob(pattern string) []string {
	m, _ := filepath.Glob(o.path(pattern))
	out := make([]string, 0, len(m))
	for _, p := range m {
		out = append(out, o.real(p))
	}
	return out
}

// FindInstallation discovers the ROCm toolchain in the ecosystem's order:
// --rocm-path, ROCM_PATH, HIP_PATH, /opt/rocm, /opt/rocm-* (newest first),
// Debian's /usr layout (clang++-N newest first), then the directory above
// hipcc on PATH. An explicit --rocm-path or ROCM_PATH/HIP_PATH that holds
// no toolchain is an error (it is not silently skipped). Errors wrap
// ErrToolchainNotFound and say how to fix it.
func FindInstallation(o FindOptions) (*Installation, error) {
	var tried []string
	try := func(dir, source string) (*Installation, error) {
		in, err := probe(o, dir, source)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s (%s): %v", dir, source, err))
		}
		return in, err
	}
	explicit := func(dir, source string) (*Installation, error) {
		in, err := try(dir, source)
		if err != nil {
			return nil, fmt.Errorf("%w: %s=%s: %v\n  fix: point %s at a ROCm install (the directory holding bin/hipcc or llvm/bin/clang++), or unset it",
				ErrToolchainNotFound, source, dir, err, source)
		}
		return in, nil
	}
	if o.ROCmPath != "" {
		return explicit(o.ROCmPath, "--rocm-path")
	}
	for _, v := range []string{"ROCM_PATH", "HIP_PATH"} {
		if dir := o.getenv(v); dir != "" {
			return explicit(dir, v)
		}
	}
	if in, err := try("/opt/rocm", "/opt/rocm"); err == nil {
		return in, nil
	}
	for _, dir := range versionedROCm(o) {
		if in, err := try(dir, "/opt/rocm-*"); err == nil {
			return in, nil
		}
	}
	if in, err := try("/usr", "debian /usr"); err == nil {
		return in, nil
	}
	if hipcc, err := o.lookPath("hipcc"); err == nil {
		dir := filepath.Dir(filepath.Dir(hipcc))
		if in, err := try(dir, "hipcc on PATH"); err == nil {
			return in, nil
		}
	}
	return nil, &NotFoundError{Tried: tried}
}

// HIPVersion is the HIP version of the installation discovery finds,
// without running any program (it comes from hip_version.h, so this stays
// cheap): what hipify targets by default.
func HIPVersion(getenv func(string) string) (string, error) {
	v, _, err := HIPHeaders(getenv)
	return v, err
}

// HIPHeaders is HIPVersion with the installation's HIP include directory
// ("" when it has none), where its ROCm libraries' headers are too.
func HIPHeaders(getenv func(string) string) (version, include string, err error) {
	in, err := FindInstallation(FindOptions{Getenv: getenv, Run: noRun{}})
	if err != nil {
		return "", "", err
	}
	return in.HIPVersion, in.HIPInclude, nil
}

// noRun is a Runner that runs nothing.
type noRun struct{}

func (noRun) Run(context.Context, runner.Cmd) (runner.Output, error) {
	return runner.Output{}, errors.New("no program runs here")
}

// NotFoundError lists where FindInstallation looked. It wraps ErrToolchainNotFound.
type NotFoundError struct{ Tried []string }

func (e *NotFoundError) Error() string {
	var b strings.Builder
	b.WriteString("no ROCm/HIP toolchain found")
	for _, t := range e.Tried {
		b.WriteString("\n  looked in " + t)
	}
	b.WriteString("\n  fix: install Debian's/Ubuntu's ROCm compiler with `sudo apt-get install hipcc` (or run scripts/install-toolchain.sh),")
	b.WriteString("\n       or set ROCM_PATH (or pass --rocm-path) to a ROCm install such as /opt/rocm")
	return b.String()
}

func (e *NotFoundError) Unwrap() error { return ErrToolchainNotFound }

var reVersionDir = regexp.MustCompile(`^rocm-(\d+)\.(\d+)(?:\.(\d+))?`)

// versionedROCm lists /opt/rocm-X.Y.Z directories, newest first.
func versionedROCm(o FindOptions) []string {
	dirs := o.glob("/opt/rocm-*")
	key := func(d string) [3]int {
		m := reVersionDir.FindStringSubmatch(filepath.Base(d))
		var k [3]int
		for i := 1; i < len(m) && i <= 3; i++ {
			k[i-1], _ = strconv.Atoi(m[i])
		}
		return k
	}
	sort.SliceStable(dirs, func(i, j int) bool {
		a, b := key(dirs[i]), key(dirs[j])
		for n := range a {
			if a[n] != b[n] {
				return a[n] > b[n]
			}
		}
		return dirs[i] > dirs[j]
	})
	return dirs
}

// probe looks for a toolchain under dir, in the ROCm layout
// (dir/llvm/bin/clang++) or Debian's (dir/bin/clang++-N).
func probe(o FindOptions, dir, source string) (*Installation, error) {
	dir = filepath.Clean(dir)
	if !o.exists(dir) {
		return nil, errors.New("directory does not exist")
	}
	in := &Installation{Root: dir, Source: source}
	// ROCm layout: llvm/bin (ROCm ≤6) or lib/llvm/bin (ROCm 7 / TheRock).
	for _, bin := range []string{dir + "/llvm/bin", dir + "/lib/llvm/bin"} {
		for _, name := range []string{"clang++", "amdclang++"} {
			if o.isExec(bin + "/" + name) {
				in.Layout, in.Clang, in.LLVMBin = "rocm", bin+"/"+name, bin
				in.LayoutDetail = "AMD ROCm 6 tree (llvm/bin/" + name + ")"
				if strings.HasSuffix(bin, "/lib/llvm/bin") {
					in.LayoutDetail = "AMD ROCm 7 tree (lib/llvm/bin/" + name + ")"
				}
				break
			}
		}
		if in.Clang != "" {
			break
		}
	}
	if in.Clang == "" {
		// Debian layout: /usr/bin/clang++-N with /usr/lib/llvm-N/bin; the
		// clang hipcc is built for first (a newer clang installed for
		// another reason must not take its place).
		for _, n := range clangMajors(o, dir) {
			c := fmt.Sprintf("%s/bin/clang++-%d", dir, n)
			if o.isExec(c) {
				in.Layout, in.Clang, in.LLVMBin, in.ClangMajor = "debian", c, fmt.Sprintf("%s/lib/llvm-%d/bin", dir, n), n
				in.LayoutDetail = fmt.Sprintf("Debian/Ubuntu packages (bin/clang++-%d, lib/llvm-%d)", n, n)
				break
			}
		}
	}
	if in.Clang == "" && o.isExec(dir+"/bin/clang++") {
		in.Layout, in.Clang, in.LLVMBin = "rocm", dir+"/bin/clang++", dir+"/bin"
		in.LayoutDetail = "an LLVM tree (bin/clang++)"
	}
	if c := o.getenv("HIP_CLANG_PATH"); c != "" && o.isExec(c+"/clang++") {
		in.Clang, in.LLVMBin = filepath.Clean(c)+"/clang++", filepath.Clean(c)
		in.ClangMajor = 0
		in.LayoutDetail += "; clang from HIP_CLANG_PATH"
	}
	if in.Clang == "" {
		return nil, errors.New("no clang++ (looked for llvm/bin/clang++, lib/llvm/bin/clang++, bin/clang++-N)")
	}
	clangVersion(o, in)

	for _, p := range []string{dir + "/bin/hipcc", dir + "/bin/hipcc.bin"} {
		if o.isExec(p) {
			in.HIPCC = p
			break
		}
	}
	for _, p := range []string{in.LLVMBin + "/clang-offload-bundler", fmt.Sprintf("%s/bin/clang-offload-bundler-%d", dir, in.ClangMajor)} {
		if o.isExec(p) {
			in.Bundler = p
			break
		}
	}
	if in.Bundler == "" {
		in.Warnings = append(in.Warnings, "clang-offload-bundler not found beside clang (bundles are then read by rocmk itself); Debian: apt-get install clang-tools-"+strconv.Itoa(in.ClangMajor))
	}

	for _, c := range deviceLibCandidates(o, dir, filepath.Dir(in.LLVMBin)) {
		if ts := deviceLibTargets(o, c.dir); len(ts) > 0 {
			in.DeviceLibDir, in.DeviceLibTargets, in.DeviceLibFrom = filepath.Clean(c.dir), ts, c.from
			break
		}
	}
	if in.DeviceLibDir == "" {
		fix := "install the ROCm device libraries (Debian/Ubuntu: apt-get install rocm-device-libs, pulled in by hipcc) or set HIP_DEVICE_LIB_PATH"
		return nil, fmt.Errorf("found %s but no device libraries (amdgcn/bitcode/oclc_isa_version_*.bc); %s", in.Clang, fix)
	}

	// HIP headers and versions.
	for _, inc := range []string{dir + "/include", dir + "/hip/include"} {
		if o.exists(inc + "/hip/hip_runtime.h") {
			in.HIPInclude = inc
			break
		}
	}
	if in.HIPInclude == "" {
		in.Warnings = append(in.Warnings, "HIP headers (include/hip/hip_runtime.h) not found; Debian/Ubuntu: apt-get install libamdhip64-dev")
	}
	in.HIPVersion = hipVersion(o, dir)
	in.ROCmVersion, in.ROCmVersionFrom = rocmVersion(o, in)
	return in, nil
}

// libCandidate is a place device libraries may be, and what kind of place.
type libCandidate struct{ dir, from string }

// deviceLibCandidates lists where the device libraries of the install at
// dir (its LLVM tree at llvm) may be, in the order they are tried.
func deviceLibCandidates(o FindOptions, dir, llvm string) []libCandidate {
	var cs []libCandidate
	add := func(from string, dirs ...string) {
		for _, d := range dirs {
			cs = append(cs, libCandidate{d, from})
		}
	}
	if v := o.getenv("HIP_DEVICE_LIB_PATH"); v != "" {
		add("HIP_DEVICE_LIB_PATH", v)
	}
	add("the older amdgcn/bitcode directory (ROCm 6.1 and before)", dir+"/amdgcn/bitcode")
	add("Debian 12's rocm-device-libs", dir+"/lib/x86_64-linux-gnu/amdgcn/bitcode")
	add("lib/amdgcn/bitcode", dir+"/lib/amdgcn/bitcode")
	add("AMD ROCm 6.2+/7: clang's resource directory", o.glob(dir+"/lib/llvm/lib/clang/*/lib/amdgcn/bitcode")...)
	add("AMD ROCm 6: clang's resource directory", o.glob(dir+"/llvm/lib/clang/*/lib/amdgcn/bitcode")...)
	// clang's own resource directory, where it finds them unaided: Debian
	// and Ubuntu's ROCm 6.x+ (/usr/lib/llvm-N/lib/clang/N/amdgcn/bitcode).
	add("clang's resource directory, as Debian/Ubuntu's ROCm 6+ installs them", o.glob(llvm+"/lib/clang/*/amdgcn/bitcode")...)
	add("clang's resource directory", o.glob(llvm+"/lib/clang/*/lib/amdgcn/bitcode")...)
	return cs
}

var reClangMajor = regexp.MustCompile(`clang\+\+-(\d+)$`)

// clangMajors lists N for dir/bin/clang++-N: hipcc's first, then the
// others newest first.
func clangMajors(o FindOptions, dir string) []int {
	var ns []int
	for _, p := range o.glob(dir + "/bin/clang++-*") {
		if m := reClangMajor.FindStringSubmatch(p); m != nil {
			n, _ := strconv.Atoi(m[1])
			ns = append(ns, n)
		}
	}
	h := hipccClangMajor(o, dir)
	sort.SliceStable(ns, func(i, j int) bool {
		if (ns[i] == h) != (ns[j] == h) {
			return ns[i] == h
		}
		return ns[i] > ns[j]
	})
	return ns
}

var (
	reDependsClang = regexp.MustCompile(`(?:^|[ ,])clang-(\d+)(?:[ ,(]|$)`)
	reHIPCCClang   = regexp.MustCompile(`clang\+\+-(\d+)`)
)

// hipccClangMajor is the clang major Debian's hipcc is built for (0 when
// unknown): the clang-N its package depends on, else the clang++-N its
// script calls.
func hipccClangMajor(o FindOptions, dir string) int {
	if dir == "/usr" {
		if deps := dpkgStatus(o)["hipcc"].Depends; deps != "" {
			if m := reDependsClang.FindStringSubmatch(deps); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n
			}
		}
	}
	for _, s := range []string{dir + "/bin/hipcc.pl", dir + "/bin/hipcc"} {
		f, err := os.Open(o.path(s))
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
		f.Close()
		if m := reHIPCCClang.FindSubmatch(b); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			return n
		}
	}
	return 0
}

var reClangVersion = regexp.MustCompile(`clang version (\d+)\.(\d+)\.(\d+)`)

// parseClangVersion reads "19.1.7" and 19 from `clang++ --version` output
// ("", 0 when it has no version line).
func parseClangVersion(out []byte) (string, int) {
	m := reClangVersion.FindSubmatch(out)
	if m == nil {
		return "", 0
	}
	major, _ := strconv.Atoi(string(m[1]))
	return fmt.Sprintf("%s.%s.%s", m[1], m[2], m[3]), major
}

// clangVersion runs `clang++ --version`; when that fails it falls back on
// the lib/clang/N directory name.
func clangVersion(o FindOptions, in *Installation) {
	if out, err := o.run(o.path(in.Clang), "--version"); err == nil {
		if v, major := parseClangVersion(out); major != 0 {
			in.ClangVersion, in.ClangMajor = v, major
			return
		}
	}
	if in.ClangMajor == 0 {
		for _, p := range o.glob(filepath.Dir(in.LLVMBin) + "/lib/clang/*") {
			if n, err := strconv.Atoi(strings.SplitN(filepath.Base(p), ".", 2)[0]); err == nil && n > in.ClangMajor {
				in.ClangMajor = n
			}
		}
	}
	in.Warnings = append(in.Warnings, fmt.Sprintf("could not run `%s --version`", in.Clang))
}

var reISA = regexp.MustCompile(`^oclc_isa_version_([0-9a-z-]+)\.bc$`)

// deviceLibTargets lists the gfx names that dir has oclc_isa_version_*.bc
// for, in processor order (names the table does not know go last).
func deviceLibTargets(o FindOptions, dir string) []string {
	ents, err := os.ReadDir(o.path(dir))
	if err != nil {
		return nil
	}
	var ts []string
	for _, e := range ents {
		if m := reISA.FindStringSubmatch(e.Name()); m != nil {
			ts = append(ts, "gfx"+m[1])
		}
	}
	sortProcNames(ts)
	return ts
}

func sortProcNames(ts []string) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := inspect.ProcessorIndex(ts[i]), inspect.ProcessorIndex(ts[j])
		if (a < 0) != (b < 0) {
			return b < 0
		}
		if a != b {
			return a < b
		}
		return ts[i] < ts[j]
	})
}

var reHIPDefine = regexp.MustCompile(`(?m)^#define\s+HIP_VERSION_(MAJOR|MINOR|PATCH)\s+(\d+)`)

// hipVersion reads include/hip/hip_version.h ("5.2.21153"), else
// share/hip/version, else runs hipconfig --version.
func hipVersion(o FindOptions, dir string) string {
	parse := func(b []byte, re *regexp.Regexp) string {
		v := map[string]string{}
		for _, m := range re.FindAllSubmatch(b, -1) {
			v[string(m[1])] = string(m[2])
		}
		if v["MAJOR"] == "" {
			return ""
		}
		return v["MAJOR"] + "." + v["MINOR"] + "." + v["PATCH"]
	}
	if b, err := os.ReadFile(o.path(dir + "/include/hip/hip_version.h")); err == nil {
		if s := parse(b, reHIPDefine); s != "" {
			return s
		}
	}
	if b, err := os.ReadFile(o.path(dir + "/share/hip/version")); err == nil {
		if s := parse(b, regexp.MustCompile(`(?m)^HIP_VERSION_(MAJOR|MINOR|PATCH)=(\d+)`)); s != "" {
			return s
		}
	}
	if o.isExec(dir + "/bin/hipconfig") {
		if out, err := o.run(o.path(dir+"/bin/hipconfig"), "--version"); err == nil {
			s := strings.TrimSpace(string(out))
			if i := strings.IndexByte(s, '-'); i > 0 {
				s = s[:i]
			}
			return s
		}
	}
	return ""
}

var reSemver = regexp.MustCompile(`^\d+\.\d+(\.\d+)?`)

// rocmVersion: ROCMK_ROCM_VERSION / CANDLE_ROCM_VERSION override, then
// .info/version, the directory name (rocm-6.2.0), Debian's package version
// (dpkg status of hipcc / libamdhip64), and last the HIP major.minor.
func rocmVersion(o FindOptions, in *Installation) (string, string) {
	for _, v := range []string{"ROCMK_ROCM_VERSION", "CANDLE_ROCM_VERSION"} {
		if s := strings.TrimSpace(o.getenv(v)); s != "" {
			return s, v
		}
	}
	for _, f := range []string{"/.info/version", "/.info/version-dev"} {
		if b, err := os.ReadFile(o.path(in.Root + f)); err == nil {
			if s := reSemver.FindString(strings.TrimSpace(string(b))); s != "" {
				return s, ".info/version"
			}
		}
	}
	if m := reVersionDir.FindStringSubmatch(filepath.Base(in.Root)); m != nil {
		return reSemver.FindString(strings.TrimPrefix(filepath.Base(in.Root), "rocm-")), "directory name"
	}
	if in.Layout == "debian" {
		if v, pkg := dpkgVersion(o, "hipcc", "libamdhip64-dev", "libamdhip64-5", "libamdhip64-6"); v != "" {
			return v, "dpkg " + pkg
		}
	}
	if in.HIPVersion != "" {
		parts := strings.SplitN(in.HIPVersion, ".", 3)
		if len(parts) >= 2 {
			return parts[0] + "." + parts[1], "HIP version"
		}
	}
	return "", ""
}

// dpkgVersion returns the upstream version ("5.2.3" of "5.2.3-8") of the
// first installed package of pkgs in the dpkg status file.
func dpkgVersion(o FindOptions, pkgs ...string) (string, string) {
	found := dpkgStatus(o)
	for _, p := range pkgs {
		if v := found[p].Version; v != "" {
			if i := strings.IndexByte(v, ':'); i >= 0 { // epoch
				v = v[i+1:]
			}
			if i := strings.LastIndexByte(v, '-'); i > 0 {
				v = v[:i]
			}
			return v, p
		}
	}
	return "", ""
}

// dpkgPkg is what rocmk reads of an installed package.
type dpkgPkg struct{ Version, Depends string }

// dpkgParsed remembers the status file's parse per stat stamp: discovery
// asks for several packages.
var dpkgParsed sync.Map // stamp -> map[string]dpkgPkg

// dpkgStatus reads the installed packages of the dpkg status file.
func dpkgStatus(o FindOptions) map[string]dpkgPkg {
	name := o.path("/var/lib/dpkg/status")
	fi, err := os.Stat(name)
	if err != nil {
		return nil
	}
	stamp := fmt.Sprintf("%s %d %d", name, fi.Size(), fi.ModTime().UnixNano())
	if v, ok := dpkgParsed.Load(stamp); ok {
		return v.(map[string]dpkgPkg)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	found := map[string]dpkgPkg{}
	var name1 string
	var cur dpkgPkg
	installed := false
	flush := func() {
		if name1 != "" && installed && cur.Version != "" {
			found[name1] = cur
		}
		name1, cur, installed = "", dpkgPkg{}, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "Package: "):
			name1 = strings.TrimPrefix(line, "Package: ")
		case strings.HasPrefix(line, "Status: "):
			installed = strings.HasSuffix(line, " installed")
		case strings.HasPrefix(line, "Version: "):
			cur.Version = strings.TrimPrefix(line, "Version: ")
		case strings.HasPrefix(line, "Depends: "):
			cur.Depends = strings.TrimPrefix(line, "Depends: ")
		}
	}
	flush()
	dpkgParsed.Store(stamp, found)
	return found
}

// CanCompile reports whether the installation has device libraries for t's
// processor (clang fails with "cannot find ROCm device library" otherwise).
// Generic targets need clang 19 or later.
func (in *Installation) CanCompile(t inspect.Target) bool {
	if in == nil {
		return false
	}
	p := t.Processor()
	if !p.Known() {
		return false
	}
	if p.Generic && in.ClangMajor > 0 && in.ClangMajor < 19 {
		return false
	}
	for _, d := range in.DeviceLibTargets {
		if d == p.Name {
			return true
		}
	}
	return false
}

// Targets returns the device-library targets as parsed targets.
func (in *Installation) Targets() []inspect.Target {
	var out []inspect.Target
	for _, n := range in.DeviceLibTargets {
		if t, err := inspect.ParseTarget(n); err == nil {
			out = append(out, t)
		}
	}
	return out
}
