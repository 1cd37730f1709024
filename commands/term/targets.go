package term

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// TargetRow is a target as `rocmk targets` lists it: the processor's facts
// and the toolchain that builds it.
type TargetRow struct {
	inspect.ProcessorDoc
	Toolchain      string `json:"toolchain,omitempty"` // the candidate's name: "clang-19"
	DeviceLibDir   string `json:"device_lib_dir,omitempty"`
	DeviceLibs     string `json:"device_libs,omitempty"` // where they come from
	DeviceLibsROCm string `json:"device_libs_rocm,omitempty"`
	GeneratedISA   bool   `json:"generated_isa,omitempty"`
}

// TargetRowOf is p's row: its facts and the candidate that builds it (the
// first that lists it; Buildable nil without a toolchain).
func TargetRowOf(p inspect.Processor, found bool, cands []*toolchain.Candidate) TargetRow {
	row := TargetRow{ProcessorDoc: p.Doc()}
	if !found {
		return row
	}
	b := false
	row.Buildable = &b
	for _, c := range cands {
		if !slices.Contains(c.Targets, p.Name) {
			continue
		}
		b = true
		row.Toolchain, row.DeviceLibDir, row.DeviceLibs, row.DeviceLibsROCm = c.Name, c.DeviceLibDir, c.DeviceLibs, c.DeviceLibsROCm
		row.GeneratedISA = slices.Contains(c.Generated, p.Name)
		break
	}
	return row
}

// Targets is the table of `rocmk targets`.
func Targets(w io.Writer, s *Styles, targets []TargetRow) error {
	t := Table{Header: []string{"TARGET", "FAMILY", "WAVE", "LDS", "VGPRS", "MAXW", "FEATURES", "LLVM", "ROCM", "BUILD", "LIBS", "PRODUCTS"}}
	t.Right = map[int]bool{3: true, 5: true}
	for _, d := range targets {
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
		build, libs := "?", "-"
		if d.Buildable != nil {
			build = "no"
			if *d.Buildable {
				build, libs = d.Toolchain, OrDash(d.DeviceLibsROCm)
			}
			if d.GeneratedISA {
				libs += "+isa"
			}
		}
		products := strings.Join(d.Products, ", ")
		if d.Generic {
			products = "generic v" + strconv.Itoa(d.GenericVersion) + ": " + strings.Join(d.Members, " ")
		}
		if d.Retired {
			products = "(retired from LLVM) " + products
		}
		products = OrDash(strings.TrimSpace(products))
		t.Rows = append(t.Rows, []string{
			d.Name, d.Family, strings.Join(waves, ","), kiB(d.LDSPerCU), vgprText(d.ProcessorDoc), dashIfZero(d.MaxWavesPerSIMD),
			OrDash(strings.Join(feats, ",")), OrDash(d.LLVM), OrDash(d.ROCm), build, libs, products,
		})
	}
	t.Style = func(col int, row []string) *lipgloss.Style {
		switch {
		case col == 0:
			return &s.Target
		case col == 9 && row[9] != "no" && row[9] != "?":
			return &s.OK
		case col >= 9 || row[4] == "-":
			return &s.Dim
		}
		return nil
	}
	return t.Render(w, s)
}

// TargetsFooter says on stderr how many of the rows each toolchain builds
// (and with what), and why a toolchain was skipped.
func TargetsFooter(ui *UI, rows []TargetRow, cands []*toolchain.Candidate) {
	if cands == nil {
		return
	}
	count := map[[2]string]int{} // by toolchain and device libraries
	n := 0
	for _, r := range rows {
		if r.Buildable != nil && *r.Buildable {
			count[[2]string{r.Toolchain, r.DeviceLibDir}]++
			n++
		}
	}
	var by []string
	for _, c := range cands {
		k := [2]string{c.Name, c.DeviceLibDir}
		switch {
		case c.Skipped != "":
			ui.Infof("skipped %s (%s): %s", c.Name, c.Clang, c.Skipped)
		case count[k] > 0:
			by = append(by, fmt.Sprintf("%d with %s (%s %s, device libraries %s: %s)", count[k], c.Name, c.Clang, c.ClangVersion, c.DeviceLibs, c.DeviceLibDir))
		}
	}
	ui.Infof("%d of %d targets buildable%s", n, len(rows), prefixed(": ", strings.Join(by, "; ")))
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// vgprText is a processor's VGPRs: wave32/wave64, +AGPRs or unified.
func vgprText(d inspect.ProcessorDoc) string {
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

// kiB is n bytes in KiB, "-" for none.
func kiB(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n>>10) + "K"
}

// dashIfZero is n, "-" for none.
func dashIfZero(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}
