package commands

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/inspect"
)

func targetsCommand() *cli.Command {
	return &cli.Command{
		Name:      "targets",
		Usage:     "list AMD GPU targets: family, wave size, LDS, VGPRs, features, and which the toolchain can build",
		ArgsUsage: "[processor or target ID...]",
		Description: `Prints rocmk's table of AMDGPU processors (gfx600 ... gfx1310) and generic
targets, with the occupancy parameters LLVM uses, the xnack/sramecc
target-ID features each supports, example products and the first LLVM/ROCm
release. The BUILD column says whether the discovered toolchain has device
libraries for it (see 'rocmk doctor').

Arguments, if any, select processors by name or target ID (gfx90a:xnack+).

Examples:
   rocmk targets
   rocmk targets --buildable --family rdna
   rocmk targets gfx90a gfx1100 --json`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "family", Usage: "only these families (`FAMILY`: gcn, cdna, rdna, generic, or exact: CDNA3, RDNA2...)"},
			&cli.BoolFlag{Name: "buildable", Usage: "only targets the discovered toolchain can compile for"},
			&cli.StringFlag{Name: "rocm-path", Usage: "ROCm install to use (default: ROCM_PATH, /opt/rocm, Debian /usr)"},
		},
		Action: func(c *cli.Context) error {
			env := envOf(c)
			opts := targetsOptions{
				Names:     c.Args().Slice(),
				Families:  c.StringSlice("family"),
				Buildable: c.Bool("buildable"),
				ROCmPath:  c.String("rocm-path"),
			}
			return runTargets(opts, env, newUI(env, globals(c)))
		},
	}
}

type targetsOptions struct {
	Names     []string
	Families  []string
	Buildable bool
	ROCmPath  string
}

// targetDoc is one row of `rocmk targets --json`.
type targetDoc struct {
	Name            string   `json:"name"`
	Mach            string   `json:"mach,omitempty"`
	Family          string   `json:"family"`
	Generation      int      `json:"generation"`
	Generic         bool     `json:"generic"`
	GenericVersion  int      `json:"generic_version,omitempty"`
	Members         []string `json:"members,omitempty"`
	Waves           []int    `json:"waves"`
	XNACK           bool     `json:"xnack"`
	SRAMECC         bool     `json:"sramecc"`
	LDSPerCU        int      `json:"lds_per_cu"`
	MaxLDSPerGroup  int      `json:"max_lds_per_group"`
	SIMDs           int      `json:"simds_per_cu"`
	MaxWavesPerSIMD int      `json:"max_waves_per_simd"`
	MaxGroupsPerCU  int      `json:"max_groups_per_cu"`
	VGPRs32         int      `json:"vgprs_wave32"`
	VGPRs64         int      `json:"vgprs_wave64"`
	Granule32       int      `json:"vgpr_granule_wave32"`
	Granule64       int      `json:"vgpr_granule_wave64"`
	AGPRs           string   `json:"agprs,omitempty"`
	SGPRLimited     bool     `json:"sgpr_limited"`
	Products        []string `json:"products"`
	LLVM            string   `json:"llvm_first,omitempty"`
	ROCm            string   `json:"rocm_first,omitempty"`
	Retired         bool     `json:"retired"`
	Buildable       *bool    `json:"buildable"` // null when no toolchain was found
}

type targetsDoc struct {
	Toolchain *targetsToolchain `json:"toolchain"`
	Targets   []targetDoc       `json:"targets"`
}

type targetsToolchain struct {
	Clang        string `json:"clang"`
	ClangVersion string `json:"clang_version"`
	DeviceLibDir string `json:"device_lib_dir"`
	Source       string `json:"source"`
}

func runTargets(o targetsOptions, env Env, ui *UI) error {
	var only map[string]bool
	if len(o.Names) > 0 {
		only = map[string]bool{}
		for _, n := range compile.SplitList(strings.Join(o.Names, ",")) {
			t, err := inspect.ParseTarget(n)
			if err != nil {
				return usageError{err}
			}
			only[t.Proc] = true
		}
	}
	var fams []string
	for _, f := range o.Families {
		for _, x := range strings.Split(f, ",") {
			if x = strings.TrimSpace(x); x != "" {
				fams = append(fams, strings.ToLower(x))
			}
		}
	}
	s, err := compile.OpenSession(compile.SessionOptions{ROCmPath: o.ROCmPath, Getenv: env.Getenv, Root: env.Root,
		LookPath: env.LookPath, Runner: env.Runner, NoCache: true})
	if err != nil {
		return err
	}
	inst, err := s.Installation()
	if err != nil {
		if o.Buildable {
			return err
		}
		if !errors.Is(err, compile.ErrToolchainNotFound) {
			return err
		}
		ui.Warnf("no ROCm toolchain found, so BUILD shows ? (rocmk doctor says why)")
		inst = nil
	}
	doc := targetsDoc{Targets: []targetDoc{}}
	if inst != nil {
		doc.Toolchain = &targetsToolchain{Clang: inst.Clang, ClangVersion: inst.ClangVersion, DeviceLibDir: inst.DeviceLibDir, Source: inst.Source}
	}
	for _, p := range inspect.Processors() {
		if only != nil && !only[p.Name] {
			continue
		}
		if len(fams) > 0 && !familyMatch(p, fams) {
			continue
		}
		d := targetDocOf(p)
		if inst != nil {
			b := inst.CanCompile(inspect.Target{Proc: p.Name})
			d.Buildable = &b
		}
		if o.Buildable && (d.Buildable == nil || !*d.Buildable) {
			continue
		}
		doc.Targets = append(doc.Targets, d)
	}
	if len(doc.Targets) == 0 {
		return usagef("no target matches the filters")
	}
	if err := ui.Result("targets", doc, func(w io.Writer, s *Styles) error { return renderTargets(w, s, doc) }); err != nil {
		return err
	}
	if inst != nil {
		n := 0
		for _, t := range doc.Targets {
			if *t.Buildable {
				n++
			}
		}
		ui.Infof("%d of %d targets buildable with clang %s (%s)", n, len(doc.Targets), inst.ClangVersion, inst.DeviceLibDir)
	}
	return nil
}

func familyMatch(p inspect.Processor, fams []string) bool {
	f := strings.ToLower(p.Family)
	for _, want := range fams {
		if f == want || strings.TrimRight(f, "0123456789") == want {
			return true
		}
	}
	return false
}

func targetDocOf(p inspect.Processor) targetDoc {
	d := targetDoc{
		Name: p.Name, Family: p.Family, Generation: p.Generation, Generic: p.Generic, GenericVersion: p.GenericVersion,
		Members: p.Members, Waves: p.Waves, XNACK: p.XNACK, SRAMECC: p.SRAMECC,
		LDSPerCU: p.LDSPerCU, MaxLDSPerGroup: p.MaxLDSPerGroup, SIMDs: p.SIMDs, MaxWavesPerSIMD: p.MaxWavesPerSIMD,
		MaxGroupsPerCU: p.MaxGroupsPerCU, VGPRs32: p.VGPRs32, VGPRs64: p.VGPRs64, Granule32: p.Granule32, Granule64: p.Granule64,
		AGPRs: p.AGPRs, SGPRLimited: p.SGPRLimited, Products: p.Products, LLVM: p.LLVM, ROCm: p.ROCm, Retired: p.Retired,
	}
	if d.Products == nil {
		d.Products = []string{}
	}
	if p.Mach != 0 {
		d.Mach = fmt.Sprintf("0x%02X", p.Mach)
	}
	return d
}

func renderTargets(w io.Writer, s *Styles, doc targetsDoc) error {
	t := Table{Header: []string{"TARGET", "FAMILY", "WAVE", "LDS", "VGPRS", "MAXW", "FEATURES", "LLVM", "ROCM", "BUILD", "PRODUCTS"}}
	t.Right = map[int]bool{3: true, 5: true}
	for _, d := range doc.Targets {
		waves := make([]string, len(d.Waves))
		for i, x := range d.Waves {
			waves[i] = strconv.Itoa(x)
		}
		var feats []string
		if d.SRAMECC {
			feats = append(feats, "sramecc")
		}
		if d.XNACK {
			feats = append(feats, "xnack")
		}
		build := "?"
		if d.Buildable != nil {
			build = "no"
			if *d.Buildable {
				build = "yes"
			}
		}
		products := strings.Join(d.Products, ", ")
		if d.Generic {
			products = "generic v" + strconv.Itoa(d.GenericVersion) + ": " + strings.Join(d.Members, " ")
		}
		if d.Retired {
			products = "(retired from LLVM) " + products
		}
		products = tgtOrDash(strings.TrimSpace(products))
		t.Rows = append(t.Rows, []string{
			d.Name, d.Family, strings.Join(waves, ","), tgtKiB(d.LDSPerCU), vgprText(d), tgtDash(d.MaxWavesPerSIMD),
			tgtOrDash(strings.Join(feats, ",")), tgtOrDash(d.LLVM), tgtOrDash(d.ROCm), build, products,
		})
	}
	t.Style = func(col int, row []string) *lipgloss.Style {
		switch {
		case col == 0:
			return &s.Target
		case col == 9 && row[9] == "yes":
			return &s.OK
		case col == 9 || col == 10 || row[4] == "-":
			return &s.Dim
		}
		return nil
	}
	return t.Render(w, s)
}

func vgprText(d targetDoc) string {
	switch {
	case d.VGPRs32 > 0:
		return fmt.Sprintf("%d/%d", d.VGPRs32, d.VGPRs64)
	case d.VGPRs64 == 0:
		return "-"
	case d.AGPRs == "separate":
		return fmt.Sprintf("%d+%da", d.VGPRs64, d.VGPRs64)
	case d.AGPRs == "unified":
		return fmt.Sprintf("%du", d.VGPRs64)
	}
	return strconv.Itoa(d.VGPRs64)
}

func tgtKiB(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n>>10) + "K"
}

func tgtDash(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func tgtOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
