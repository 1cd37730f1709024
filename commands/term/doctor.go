package term

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/remote"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/verify"
)

// Doctor is doctor's text: one section per part of the machine, then
// the problems.
func Doctor(w io.Writer, s *Styles, d DoctorReport) error {
	p := &doctorText{s: s}
	fmt.Fprintf(&p.b, "%s %s (%s %s, cgo %s)\n\n", s.Header.Render("rocmk"), d.Rocmk.Version, d.Rocmk.Go, d.Rocmk.OSArch, d.Rocmk.Cgo)
	p.toolchain(d)
	p.compilers(d)
	p.gpusAndTargets(d)
	p.cache(d)
	p.executor(d)
	p.libraries(d)
	p.summary(d)
	_, err := io.WriteString(w, p.b.String())
	return err
}

// doctorText builds doctor's text.
type doctorText struct {
	b strings.Builder
	s *Styles
}

func (p *doctorText) kv(k, v string)      { fmt.Fprintf(&p.b, "  %-14s %s\n", k, v) }
func (p *doctorText) dim(v string) string { return p.s.Dim.Render(v) }
func (p *doctorText) ok(v string) string  { return p.s.OK.Render(v) }
func (p *doctorText) bad(v string) string { return p.s.Err.Render(v) }
func (p *doctorText) header(h string)     { fmt.Fprintf(&p.b, "\n%s\n", p.s.Header.Render(h)) }
func (p *doctorText) orNone(v string) string {
	if v == "" {
		return p.dim("not found")
	}
	return v
}

func (p *doctorText) toolchain(d DoctorReport) {
	t := d.Toolchain
	if t == nil {
		fmt.Fprintf(&p.b, "%s  %s\n", p.s.Header.Render("Toolchain"), p.bad("not found"))
		for _, line := range strings.Split(d.ToolchainErr, "\n") {
			fmt.Fprintf(&p.b, "  %s\n", strings.TrimSpace(line))
		}
		return
	}
	fmt.Fprintf(&p.b, "%s  %s\n", p.s.Header.Render("Toolchain"), p.ok("found")+p.dim(" via "+t.Source))
	layout := t.Layout + " layout"
	if t.LayoutDetail != "" {
		layout = t.LayoutDetail
	}
	p.kv("root", t.Root+": "+layout)
	p.kv("clang", t.Clang+" ("+p.orNone(t.ClangVersion)+")")
	p.kv("hipcc", p.orNone(t.HIPCC))
	p.kv("bundler", p.orNone(t.Bundler))
	p.kv("device libs", t.DeviceLibDir+p.dim(": "+t.DeviceLibFrom))
	p.kv("", wrapList(fmt.Sprintf("%d targets: ", len(t.DeviceLibTargets)), t.DeviceLibTargets, 17, 78))
	hip := p.orNone(t.HIPVersion)
	if t.HIPInclude != "" {
		hip += " (" + t.HIPInclude + ")"
	}
	p.kv("HIP", hip)
	rocm := p.orNone(t.ROCmVersion)
	if t.ROCmVersionFrom != "" {
		rocm += p.dim(" (from " + t.ROCmVersionFrom + ")")
	}
	p.kv("ROCm", rocm)
}

// compilers lists the candidate toolchains: what each builds, or why it
// was skipped.
func (p *doctorText) compilers(d DoctorReport) {
	if d.Toolchain == nil || len(d.Toolchains) == 0 {
		return
	}
	fmt.Fprintf(&p.b, "\n%s %s\n", p.s.Header.Render("Compilers"), p.dim("(in order of preference: a target goes to the first that builds it)"))
	more := false
	for _, c := range d.Toolchains {
		name := c.Name
		if c.Skipped != "" {
			name = "skipped"
		}
		p.kv(name, c.Clang+" ("+p.orNone(c.ClangVersion)+")"+p.dim(", "+c.From))
		if c.DeviceLibDir != "" {
			p.kv("", "device libs "+c.DeviceLibDir+p.dim(" ("+c.DeviceLibs+")"))
		}
		if c.Probe != nil && c.Probe.OK {
			p.kv("", "probe "+c.Probe.Target+": "+p.ok("ok")+p.dim(map[bool]string{true: " (cached)", false: ""}[c.Probe.Cached]))
		}
		switch {
		case c.Skipped != "":
			p.kv("", p.bad("not used: ")+c.Skipped)
		case len(c.Targets) > 0:
			var ts []string
			gen := map[string]bool{}
			for _, g := range c.Generated {
				gen[g] = true
			}
			for _, t := range c.Targets {
				if gen[t] {
					t += "*"
				}
				ts = append(ts, t)
			}
			prefix := fmt.Sprintf("builds %d targets: ", len(ts))
			if more {
				prefix = fmt.Sprintf("builds %d more: ", len(ts))
			}
			more = true
			p.kv("", wrapList(prefix, ts, 17, 78))
			if len(c.Generated) > 0 {
				p.kv("", p.dim("* with an ISA library rocmk generates"))
			}
		default:
			p.kv("", p.dim("builds nothing the ones before it do not"))
		}
	}
}

func (p *doctorText) gpusAndTargets(d DoctorReport) {
	p.header("GPUs")
	if len(d.GPUs) == 0 {
		fmt.Fprintf(&p.b, "  %s\n", p.dim("none found (no KFD GPU node, amdgpu-arch, rocminfo or nvidia-smi GPU)"))
	}
	for _, g := range d.GPUs {
		fmt.Fprintf(&p.b, "  [%d] %-6s %-8s %s %s\n", g.Index, g.Vendor, p.s.Target.Render(PadRight(g.Arch, 8)), g.Name, p.dim("("+g.Source+")"))
	}
	if d.GPUErr != "" {
		fmt.Fprintf(&p.b, "  %s %s\n", p.s.Warn.Render("warning:"), d.GPUErr)
	}
	p.header("Build targets")
	if d.Arch.Error != "" {
		fmt.Fprintf(&p.b, "  %s\n", p.dim(strings.SplitN(d.Arch.Error, "\n", 2)[0]))
		return
	}
	var ts []string
	for _, t := range d.Arch.Targets {
		ts = append(ts, p.s.Target.Render(t))
	}
	fmt.Fprintf(&p.b, "  %s %s\n", strings.Join(ts, " "), p.dim("(from "+d.Arch.Source+")"))
	for _, c := range d.Arch.Choices {
		t := p.s.Target.Render(PadRight(c.Target, 9))
		switch {
		case c.Error != "":
			lines := strings.Split(c.Error, "\n")
			fmt.Fprintf(&p.b, "  %s %s\n", t, p.bad(lines[0]))
			for _, l := range lines[1:] {
				fmt.Fprintf(&p.b, "  %9s %s\n", "", strings.TrimSpace(l))
			}
			continue
		case c.GeneratedISA:
			fmt.Fprintf(&p.b, "  %s %s, device libs %s %s\n", t, c.Toolchain, c.DeviceLibs, p.dim("+ generated ISA library ("+c.DeviceLibDir+")"))
		default:
			fmt.Fprintf(&p.b, "  %s %s, device libs %s\n", t, c.Toolchain, c.DeviceLibs)
		}
		for _, sk := range c.Skipped {
			fmt.Fprintf(&p.b, "  %9s %s\n", "", p.dim("skipped "+sk))
		}
	}
}

func (p *doctorText) cache(d DoctorReport) {
	p.header("Cache")
	state := "absent (created on first build)"
	if d.Cache.Exists {
		state = fmt.Sprintf("%d files, %s", d.Cache.Files, cache.FormatSize(d.Cache.Bytes))
	}
	p.kv("dir", d.Cache.Dir+p.dim(" ("+d.Cache.Source+")"))
	if d.Cache.Dir != "off" {
		p.kv("size", state)
	}
	r := d.RemoteCache
	if r == nil {
		return
	}
	state = p.ok("reachable, authorised") + p.dim(fmt.Sprintf(" (round trip %.1f ms)", r.RTTms))
	switch {
	case !r.Reachable:
		state = p.bad("unreachable")
	case !r.Authorized:
		state = p.bad("not authorised")
	}
	p.kv("remote", r.URL+p.dim(" ("+string(r.Mode)+")"))
	p.kv("", state)
	if r.Writable != nil {
		p.kv("", map[bool]string{true: p.ok("uploads accepted"), false: p.bad("uploads refused")}[*r.Writable])
	}
}

// executor is the Slurm executor: srun, partitions, the nodes' toolchain.
func (p *doctorText) executor(d DoctorReport) {
	e := d.Executor
	if e == nil {
		return
	}
	p.header("Executor")
	p.kv("executor", map[bool]string{true: e.Executor, false: "local"}[e.Executor != ""]+p.dim(" (--executor, rocmk.toml)"))
	p.kv("srun", p.orNone(e.Srun))
	if len(e.Partitions) > 0 {
		p.kv("partitions", strings.Join(e.Partitions, "; ")+p.dim(" (name, state, nodes, CPUs A/I/O/T)"))
	}
	if e.ToolchainMatch != nil {
		p.kv("node "+e.Node, map[bool]string{true: p.ok("toolchain matches this machine's"), false: p.bad("another toolchain")}[*e.ToolchainMatch])
	}
	if e.Error != "" {
		p.kv("", p.bad(e.Error))
	}
}

func (p *doctorText) libraries(d DoctorReport) {
	fmt.Fprintf(&p.b, "\n%s %s\n", p.s.Header.Render("Runtime libraries"), p.dim("(what rocmk verify would load)"))
	for _, l := range d.Libraries {
		where := p.dim("not found (tried " + strings.Join(l.Tried, ", ") + ")")
		if l.Found {
			where = p.ok(l.Path) + p.dim(" ("+l.Via+")")
			if l.Version != "" {
				where += p.dim(", version " + l.Version)
			}
		}
		fmt.Fprintf(&p.b, "  %-9s %s\n", l.Backend, where)
	}
	if len(d.Environment) == 0 {
		return
	}
	p.header("Environment")
	keys := make([]string, 0, len(d.Environment))
	for k := range d.Environment {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&p.b, "  %s=%s\n", k, d.Environment[k])
	}
}

func (p *doctorText) summary(d DoctorReport) {
	p.header("Summary")
	if d.OK {
		fmt.Fprintf(&p.b, "  %s\n", p.ok("rocmk build can run"))
	} else {
		fmt.Fprintf(&p.b, "  %s\n", p.bad("rocmk build cannot run"))
	}
	for _, pr := range d.Problems {
		fmt.Fprintf(&p.b, "  - %s\n", pr)
	}
}

// doctorWrap joins items after prefix, wrapping at width with indent spaces.
func wrapList(prefix string, items []string, indent, width int) string {
	var b strings.Builder
	b.WriteString(prefix)
	col := indent + len(prefix)
	for i, it := range items {
		if i > 0 {
			if col+1+len(it) > width {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(it)
		col += len(it)
	}
	return b.String()
}

// DoctorReport is `rocmk doctor`'s document (rocmk.doctor/v1).
type DoctorReport struct {
	OK    bool        `json:"ok"` // rocmk build can run
	Rocmk DoctorRocmk `json:"rocmk"`
	toolchain.Checkup
	Cache       DoctorCache            `json:"cache"`
	RemoteCache *remote.CheckResult    `json:"remote_cache,omitempty"`
	Executor    *compile.ExecutorCheck `json:"executor,omitempty"` // Slurm, when srun or rocmk.toml asks
	Libraries   []verify.LibraryStatus `json:"runtime_libraries"`
	Environment map[string]string      `json:"environment"`
	Problems    []string               `json:"problems"`
}

// DoctorRocmk is rocmk's own build.
type DoctorRocmk struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OSArch  string `json:"os_arch"`
	Cgo     string `json:"cgo"`
}

// DoctorCache is the local cache directory and its size.
type DoctorCache struct {
	Dir    string `json:"dir"`
	Source string `json:"source"` // "--cache-dir", "ROCMK_CACHE=off", "ROCMK_CACHE_DIR", "default"
	Exists bool   `json:"exists"`
	Files  int    `json:"files"`
	Bytes  int64  `json:"bytes"`
}
