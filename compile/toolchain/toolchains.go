package toolchain

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/inspect"
)

// A toolchain per target. The clang a ROCm install is built for (hipcc's
// on Debian, $ROCM_PATH/llvm on ROCm 6/7) builds the targets its device
// libraries cover. A newer clang (Debian's clang-19 and lld-19) with newer
// device libraries (ROCm 6.0's, which scripts/install-toolchain.sh unpacks
// under /usr/local/lib/rocmk/device-libs) builds the ones it lacks: gfx942,
// RDNA3, RDNA3.5, and RDNA4 with an ISA library rocmk generates. Each
// pairing of a clang and a device-library directory is a Candidate; a
// target goes to the first candidate, in order of preference, that claims
// it and passes the probe (probe.go): a one-kernel program compiled and
// linked for that target. docs/targets-and-doctor.md has the measurements
// behind this order.

// DefaultDeviceLibsDir is where scripts/install-toolchain.sh unpacks device
// libraries for the targets the installed ROCm lacks (ROCMK_DEVICE_LIBS_DIR
// moves it): one <package>/amdgcn/bitcode directory per release.
const DefaultDeviceLibsDir = "/usr/local/lib/rocmk/device-libs"

// InstallHint is how to get the toolchain for the targets the installed
// ROCm lacks.
const InstallHint = "install Debian's clang-19 and lld-19 and ROCm 6.0's device libraries (rocmk's scripts/install-toolchain.sh does)"

// Candidate is one coherent toolchain a target may be built with: a clang
// (and the linker beside it), the installation's HIP headers, and one
// device-library directory.
type Candidate struct {
	Name         string `json:"name"` // "clang-15"
	Clang        string `json:"clang"`
	ClangVersion string `json:"clang_version"`
	ClangMajor   int    `json:"clang_major"`
	// From says why it is a candidate: "the installation's clang",
	// "--clang", "ROCMK_CLANG", "newer clang".
	From         string `json:"from"`
	DeviceLibDir string `json:"device_lib_dir"` // "" when it has none it can use
	// DeviceLibs says where they come from ("ROCm 5.2.3, installed with the
	// toolchain"); DeviceLibsROCm is their release ("6.0", "" unknown).
	DeviceLibs     string `json:"device_libs"`
	DeviceLibsROCm string `json:"device_libs_rocm,omitempty"`
	// Generates: rocmk writes the ISA library of a processor newer than
	// the device libraries' release (never for the installation's own
	// clang and libraries, nor for HIP_DEVICE_LIB_PATH's).
	Generates bool `json:"generates_isa"`
	// Targets are the processors it is chosen for (those no candidate before
	// it builds) and Generated those of them with a generated ISA library;
	// filled by Resolver.Candidates when probed.
	Targets   []string `json:"targets"`
	Generated []string `json:"generated,omitempty"`
	// Probe is its check on one of its targets, Skipped why it builds
	// nothing (with the fix).
	Probe   *Probe `json:"probe,omitempty"`
	Skipped string `json:"skipped,omitempty"`

	primary bool
	procs   map[string]bool // processors with an ISA library in DeviceLibDir
	tc      *Clang          // its toolchain with DeviceLibDir as it is
}

// claim says whether c can build processor p, and whether its ISA library
// must be generated; why says why not.
func (c *Candidate) claim(p inspect.Processor) (generated bool, why string) {
	switch {
	case c.Skipped != "":
		return false, c.Skipped
	case p.Generic && c.ClangMajor > 0 && c.ClangMajor < 19:
		return false, fmt.Sprintf("clang %d predates generic targets (clang 19)", c.ClangMajor)
	case !c.primary && !knows(c.ClangMajor, p):
		return false, fmt.Sprintf("clang %d predates %s (LLVM %s)", c.ClangMajor, p.Name, strings.TrimPrefix(p.LLVM, "≤"))
	case c.procs[p.Name]:
		return false, ""
	case !c.Generates || !versionLess(c.DeviceLibsROCm, strings.TrimPrefix(firstROCm[p.Name], "ROCm ")):
		// rocmk writes ISA libraries only for processors newer than the
		// device libraries (they lack them because they predate them).
		return false, fmt.Sprintf("no device library %s in %s", isaFile(p.Name), c.DeviceLibDir)
	}
	if _, err := ISAVersion(p.Name); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// knows reports whether an upstream clang of major version major accepts
// processor p (the processor table's first LLVM release). An unknown major
// is given the benefit of the doubt; an unknown first release is not.
func knows(major int, p inspect.Processor) bool {
	first, err := strconv.Atoi(strings.TrimPrefix(p.LLVM, "≤"))
	if err != nil {
		return false
	}
	return major == 0 || major >= first
}

// Probe is a candidate's check on one target: a one-kernel program (ocml,
// a barrier) compiled and linked into a code object for it.
type Probe struct {
	Target string `json:"target"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"` // what failed (clang's first error)
	Fix    string `json:"fix,omitempty"`
	Cached bool   `json:"cached"` // the verdict came from the cache
}

func (p *Probe) why() string {
	if p.Fix == "" {
		return fmt.Sprintf("probe %s failed: %s", p.Target, p.Error)
	}
	return fmt.Sprintf("probe %s failed: %s; fix: %s", p.Target, p.Error, p.Fix)
}

// TargetChoice is the toolchain chosen for one target, and the candidates
// that claimed it but failed before it.
type TargetChoice struct {
	Target       string `json:"target"`
	Toolchain    string `json:"toolchain,omitempty"` // the candidate's name
	Clang        string `json:"clang,omitempty"`
	DeviceLibDir string `json:"device_lib_dir,omitempty"` // --hip-device-lib-path
	DeviceLibs   string `json:"device_libs,omitempty"`    // where they come from
	GeneratedISA bool   `json:"generated_isa,omitempty"`
	// Older says the device libraries predate the target ("ROCm 6.0,
	// gfx1201 from ROCm 6.4.1"): not what AMD ships for it.
	Older   string   `json:"older_device_libs,omitempty"`
	Probe   *Probe   `json:"probe,omitempty"` // the chosen one's, or the last failed
	Skipped []string `json:"skipped,omitempty"`
	Error   string   `json:"error,omitempty"`

	tc      *Clang
	err     error
	lastErr error // the last candidate's failure (prepare or probe)
}

// NoToolchainError says no candidate builds a target, and why each did not.
type NoToolchainError struct {
	Target inspect.Target
	Why    []string // one line per candidate
	Hint   string
}

func (e *NoToolchainError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "target %s: no toolchain here builds it", e.Target)
	for _, w := range e.Why {
		b.WriteString("\n  " + w)
	}
	if e.Hint != "" {
		b.WriteString("\n" + e.Hint)
	}
	return b.String()
}

// findCandidates lists the candidates in order of preference: a clang
// pinned with --clang or ROCMK_CLANG (with the installation's device
// libraries, then rocmk's), else the installation's clang, the other
// clangs of a Debian installation with its device libraries, then Debian's
// clangs (/usr/lib/llvm-N) with rocmk's device libraries, oldest clang
// first (none of the last when the installation was named with
// --rocm-path, ROCM_PATH or HIP_PATH: that install only).
func (r *Resolver) findCandidates(ctx context.Context) ([]*Candidate, error) {
	in, err := r.Installation()
	if err != nil {
		return nil, err
	}
	base, err := NewClang(in, LayoutClang)
	if err != nil {
		return nil, err
	}
	o := r.FindOptions()
	libs := libsOf(in, r.o.Getenv("HIP_DEVICE_LIB_PATH") != "")
	newer := r.newerDeviceLibs()
	if pin, from := r.pinnedClang(); pin != "" {
		path, err := o.lookPath(pin)
		if err != nil && !o.isExec(pin) {
			return nil, fmt.Errorf("%w: %s=%s: no such clang", ErrToolchainNotFound, from, pin)
		}
		if err != nil {
			path = pin
		}
		first := r.candidate(ctx, base, path, from, in.DeviceLibDir, libs, false)
		cs := []*Candidate{first}
		for _, d := range newer {
			if first.ClangMajor == 0 || first.ClangMajor >= d.llvm {
				cs = append(cs, r.candidate(ctx, base, path, from, d.dir, d.desc, true))
			}
		}
		return cs, nil
	}
	primary := r.candidate(ctx, r.tc, in.Clang, "the installation's clang", in.DeviceLibDir, libs, false)
	primary.primary, primary.tc = true, r.tc
	cs := []*Candidate{primary}
	if in.Layout == "debian" {
		for _, n := range clangMajors(o, in.Root) {
			if p := fmt.Sprintf("%s/bin/clang++-%d", in.Root, n); p != in.Clang {
				cs = append(cs, r.candidate(ctx, base, p, "another clang of the installation", in.DeviceLibDir, libs, false))
			}
		}
	}
	switch in.Source {
	case "--rocm-path", "ROCM_PATH", "HIP_PATH":
		return cs, nil
	}
	for _, cl := range debianClangs(o) {
		if len(newer) == 0 && cl.major > in.ClangMajor {
			c := r.candidate(ctx, base, cl.path, "newer clang", "", libsDesc{}, true)
			c.Skipped = "no device libraries for it in " + r.deviceLibsRoot() + "; fix: " + InstallHint
			cs = append(cs, c)
		}
		for _, d := range newer {
			// LLVM reads bitcode of its own release or older.
			if cl.major >= d.llvm {
				cs = append(cs, r.candidate(ctx, base, cl.path, "Debian clang with rocmk's device libraries", d.dir, d.desc, true))
			}
		}
	}
	return cs, nil
}

// libsDesc describes a device-library directory: where it comes from and
// its ROCm release.
type libsDesc struct{ text, rocm string }

func libsOf(in *Installation, pinned bool) libsDesc {
	switch {
	case pinned:
		return libsDesc{text: "HIP_DEVICE_LIB_PATH"}
	case in.ROCmVersion == "":
		return libsDesc{text: "installed with the toolchain"}
	}
	return libsDesc{text: "ROCm " + in.ROCmVersion + ", installed with the toolchain", rocm: in.ROCmVersion}
}

// pinnedClang is the clang --clang or ROCMK_CLANG names, and which.
func (r *Resolver) pinnedClang() (string, string) {
	if r.o.Clang != "" {
		return r.o.Clang, "--clang"
	}
	if c := r.o.Getenv("ROCMK_CLANG"); c != "" {
		return c, "ROCMK_CLANG"
	}
	return "", ""
}

// candidate makes the candidate of clang (a path on the machine) with the
// device libraries in dir, from the toolchain base (the installation's
// HIP headers and versions).
func (r *Resolver) candidate(ctx context.Context, base *Clang, clang, from, dir string, libs libsDesc, generates bool) *Candidate {
	o := r.FindOptions()
	c := &Candidate{Clang: clang, From: from, DeviceLibDir: dir, DeviceLibs: libs.text, DeviceLibsROCm: libs.rocm, Generates: generates,
		Targets: []string{}, procs: map[string]bool{}}
	if base == r.tc && clang == r.in.Clang {
		c.ClangVersion, c.ClangMajor = r.in.ClangVersion, r.in.ClangMajor
	} else {
		c.ClangVersion, c.ClangMajor = r.clangVersion(ctx, clang)
	}
	c.Name = "clang"
	if c.ClangMajor > 0 {
		c.Name = "clang-" + strconv.Itoa(c.ClangMajor)
	}
	for _, p := range deviceLibTargets(o, dir) {
		c.procs[p] = true
	}
	tc := *base
	tc.Driver, tc.Clang, tc.ClangVersion = clang, clang, c.ClangVersion
	tc.DeviceLibDir, tc.DeviceLibTargets = dir, deviceLibTargets(o, dir)
	if tc.DeviceLibTargets == nil {
		tc.DeviceLibTargets = []string{}
	}
	if libs.rocm != tc.ROCmVersion {
		tc.DeviceLibsROCm = libs.rocm
	}
	c.tc = &tc
	return c
}

// clangVersion is clang's version ("19.1.7") and major, from its --version,
// remembered per binary (see remember).
func (r *Resolver) clangVersion(ctx context.Context, clang string) (string, int) {
	host := r.FindOptions().path(clang)
	out, err := Remember(r.Store(), "clang-version", FileStamp(host), func() (string, error) {
		out, err := r.Run.Run(ctx, runner.Cmd{Argv: []string{host, "--version"}})
		return string(out.Stdout), err
	})
	if err != nil {
		return "", 0
	}
	return parseClangVersion([]byte(out))
}

var reLLVMDir = regexp.MustCompile(`/lib/llvm-(\d+)/bin/clang\+\+$`)

// debianClang is one of Debian's clang packages.
type debianClang struct {
	major int
	path  string
}

// debianClangs lists Debian's /usr/lib/llvm-N/bin/clang++, oldest first
// (the closest to the installation's HIP headers), named as on PATH
// (/usr/bin/clang++-N) where that exists.
func debianClangs(o FindOptions) []debianClang {
	var cs []debianClang
	for _, p := range o.glob("/usr/lib/llvm-*/bin/clang++") {
		m := reLLVMDir.FindStringSubmatch(p)
		if m == nil || !o.isExec(p) {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if onPath := fmt.Sprintf("/usr/bin/clang++-%d", n); o.isExec(onPath) {
			p = onPath
		}
		cs = append(cs, debianClang{n, p})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].major < cs[j].major })
	return cs
}

// newerLibs is one directory of device libraries that rocmk pairs with
// newer clangs.
type newerLibs struct {
	dir  string
	desc libsDesc
	llvm int // the LLVM major that wrote the bitcode (rocm-device-libs-17: 17), 0 unknown
}

var (
	reLibsRelease = regexp.MustCompile(`_(\d+\.\d+(?:\.\d+)?)`)
	reLibsLLVM    = regexp.MustCompile(`^rocm-device-libs-(\d+)_`)
)

// deviceLibsRoot is where rocmk looks for device libraries for newer
// clangs: ROCMK_DEVICE_LIBS_DIR, else DefaultDeviceLibsDir.
func (r *Resolver) deviceLibsRoot() string {
	if d := r.o.Getenv("ROCMK_DEVICE_LIBS_DIR"); d != "" {
		return d
	}
	return DefaultDeviceLibsDir
}

// newerDeviceLibs lists the device-library directories for newer clangs,
// newest release first: HIP_DEVICE_LIB_PATH when set (it pins the
// bitcode), else <root>/<package>/amdgcn/bitcode.
func (r *Resolver) newerDeviceLibs() []newerLibs {
	if d := r.o.Getenv("HIP_DEVICE_LIB_PATH"); d != "" {
		// Its release is not known: nothing is generated for it.
		return []newerLibs{{dir: filepath.Clean(d), desc: libsDesc{text: "HIP_DEVICE_LIB_PATH"}}}
	}
	o := r.FindOptions()
	var out []newerLibs
	for _, d := range o.glob(filepath.Join(r.deviceLibsRoot(), "*", "amdgcn", "bitcode")) {
		pkg := filepath.Base(filepath.Dir(filepath.Dir(d)))
		l := newerLibs{dir: d, desc: libsDesc{text: pkg}}
		if m := reLibsRelease.FindStringSubmatch(pkg); m != nil {
			l.desc = libsDesc{text: "ROCm " + m[1] + ", " + pkg, rocm: m[1]}
		}
		if m := reLibsLLVM.FindStringSubmatch(pkg); m != nil {
			l.llvm, _ = strconv.Atoi(m[1])
		}
		out = append(out, l)
	}
	sort.SliceStable(out, func(i, j int) bool { return versionLess(out[j].desc.rocm, out[i].desc.rocm) })
	return out
}

// versionLess compares dotted release numbers ("6.0" < "6.4.1"); an empty
// one is neither less nor more than any.
func versionLess(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// olderThan says whether device libraries of release rocm predate
// processor proc's first ROCm ("" when not, or not known).
func olderThan(rocm, proc string, generated bool) string {
	first := strings.TrimPrefix(firstROCm[proc], "ROCm ")
	switch {
	case rocm == "":
		return ""
	case generated:
		return fmt.Sprintf("ROCm %s with a generated ISA library; %s from ROCm %s", rocm, proc, orUnknown(first))
	case first != "" && versionLess(rocm, first):
		return fmt.Sprintf("ROCm %s; %s from ROCm %s", rocm, proc, first)
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown release"
	}
	return s
}

// Candidates are the session's candidate toolchains in order of
// preference, each probed on a target it would build (for doctor and
// targets), with the targets it is chosen for.
func (r *Resolver) Candidates(ctx context.Context) ([]*Candidate, error) {
	cs, err := r.candidates(ctx)
	if err != nil {
		return nil, err
	}
	r.candOnce.Do(func() {
		taken := map[string]bool{}
		for _, c := range cs {
			var own, gen []string
			for _, p := range inspect.Processors() {
				if taken[p.Name] {
					continue
				}
				if g, why := c.claim(p); why == "" {
					own = append(own, p.Name)
					if g {
						gen = append(gen, p.Name)
					}
				}
			}
			if len(own) == 0 {
				continue
			}
			ch := r.chooseFrom(ctx, inspect.Target{Proc: representative(own, gen)}, []*Candidate{c})
			c.Probe = ch.Probe
			if ch.err != nil {
				c.Skipped = ch.lastErr.Error()
				continue
			}
			c.Targets, c.Generated = own, gen
			for _, p := range own {
				taken[p] = true
			}
		}
	})
	return cs, nil
}

// representative is the target a candidate is probed on: a common one it
// has its own ISA library for, else its first.
func representative(own, gen []string) string {
	generated := map[string]bool{}
	for _, g := range gen {
		generated[g] = true
	}
	for _, p := range []string{"gfx90a", "gfx942", "gfx1100", "gfx1030", "gfx908"} {
		for _, o := range own {
			if o == p && !generated[p] {
				return p
			}
		}
	}
	for _, o := range own {
		if !generated[o] {
			return o
		}
	}
	return own[0]
}

// candidates are found once per session.
func (r *Resolver) candidates(ctx context.Context) ([]*Candidate, error) {
	r.find()
	r.candFind.Do(func() { r.cands, r.candErr = r.findCandidates(ctx) })
	return r.cands, r.candErr
}

// Choose is the toolchain for target t (once per processor and session):
// the first candidate that claims it, can prepare its device libraries
// and passes the probe.
func (r *Resolver) Choose(ctx context.Context, t inspect.Target) *TargetChoice {
	cs, err := r.candidates(ctx)
	if err != nil {
		return &TargetChoice{Target: t.Proc, Error: err.Error(), err: err}
	}
	return r.choices.Do(t.Proc, func() *TargetChoice { return r.chooseFrom(ctx, inspect.Target{Proc: t.Proc}, cs) })
}

// chooseFrom picks t's toolchain among cs.
func (r *Resolver) chooseFrom(ctx context.Context, t inspect.Target, cs []*Candidate) *TargetChoice {
	ch := &TargetChoice{Target: t.Proc}
	p := t.Processor()
	var why []string
	for _, c := range cs {
		gen, no := c.claim(p)
		if line := fmt.Sprintf("%s (%s): %s", c.Name, c.Clang, no); no != "" && !slices.Contains(why, line) {
			// (one line for a clang that two candidates refuse alike)
			why = append(why, line)
			if c.Skipped != "" { // broken for every target (Candidates' probe)
				ch.Skipped = append(ch.Skipped, line)
			}
		}
		if no != "" {
			continue
		}
		tc, err := r.prepare(ctx, c, t.Proc, gen)
		if err == nil {
			ch.Probe = r.probe(ctx, tc, t)
			if !ch.Probe.OK {
				err = fmt.Errorf("%s", ch.Probe.why())
			}
		}
		if err != nil {
			skip := fmt.Sprintf("%s (%s): %v", c.Name, c.Clang, err)
			ch.Skipped = append(ch.Skipped, skip)
			why = append(why, skip)
			ch.lastErr = err
			continue
		}
		ch.Toolchain, ch.Clang, ch.DeviceLibDir, ch.DeviceLibs, ch.GeneratedISA = c.Name, c.Clang, tc.DeviceLibDir, c.DeviceLibs, gen
		ch.Older = olderThan(c.DeviceLibsROCm, t.Proc, gen)
		ch.tc = tc
		return ch
	}
	ch.err = &NoToolchainError{Target: t, Why: why, Hint: noToolchainHint(p)}
	ch.Error = ch.err.Error()
	return ch
}

// noToolchainHint is the fix for a processor no candidate builds.
func noToolchainHint(p inspect.Processor) string {
	rocm := "a ROCm that supports " + p.Name
	if v, ok := firstROCm[p.Name]; ok {
		rocm = v + " or later"
	}
	if !knows(19, p) && !p.Generic {
		return fmt.Sprintf("fix: install %s and set ROCM_PATH (no clang Debian 12 ships knows %s)", rocm, p.Name)
	}
	return fmt.Sprintf("fix: %s, or install %s and set ROCM_PATH", InstallHint, rocm)
}

// prepare is c's toolchain for proc: c's own, or one whose device-library
// directory rocmk made with a generated ISA library.
func (r *Resolver) prepare(ctx context.Context, c *Candidate, proc string, generate bool) (*Clang, error) {
	if !generate {
		return c.tc, nil
	}
	o := r.FindOptions()
	base := o.path(c.DeviceLibDir)
	baseID, err := TreeIdentity(r.Store(), "devicelibs", base)
	if err != nil {
		return nil, fmt.Errorf("device libraries: %w", err)
	}
	root, err := r.generatedRoot()
	if err != nil {
		return nil, err
	}
	clang := o.path(c.Clang)
	libs, err := PrepareDeviceLibs(ctx, DeviceLibRequest{Base: base, BaseID: baseID, Clang: clang, ClangID: FileStamp(clang),
		CacheDir: root, Run: r.Run}, proc)
	if err != nil {
		return nil, err
	}
	tc := *c.tc
	tc.DeviceLibDir, tc.DeviceLibTargets, tc.GeneratedLibs = libs.Dir, []string{proc}, true
	return &tc, nil
}

// generatedRoot is where generated device libraries go: the cache
// directory, else (no cache) a directory of the session's, removed at
// Close.
func (r *Resolver) generatedRoot() (string, error) {
	if d := r.CacheDir(); d != "" {
		return d, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tmpLibs == "" {
		dir, remove, err := safefile.MkdirTemp("rocmk-devlibs-")
		if err != nil {
			return "", err
		}
		r.tmpLibs, r.removeTmpLibs = dir, remove
	}
	return r.tmpLibs, nil
}
