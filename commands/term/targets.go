package term

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/rocmk/rocmk/inspect"
)

// Targets is the table of `rocmk targets`.
func Targets(w io.Writer, s *Styles, targets []inspect.ProcessorDoc) error {
	t := Table{Header: []string{"TARGET", "FAMILY", "WAVE", "LDS", "VGPRS", "MAXW", "FEATURES", "LLVM", "ROCM", "BUILD", "PRODUCTS"}}
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
		products = OrDash(strings.TrimSpace(products))
		t.Rows = append(t.Rows, []string{
			d.Name, d.Family, strings.Join(waves, ","), kiB(d.LDSPerCU), vgprText(d), dashIfZero(d.MaxWavesPerSIMD),
			OrDash(strings.Join(feats, ",")), OrDash(d.LLVM), OrDash(d.ROCm), build, products,
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
