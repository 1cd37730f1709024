package term

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocmk/rocmk/hipify"
)

// HipifyStats is the --stats table, then the kernels HIP would miss.
func HipifyStats(w io.Writer, s *Styles, doc hipify.TreeReport) error {
	t, missing := hipifyStatsTable(doc)
	if err := t.Render(w, s); err != nil {
		return err
	}
	for _, m := range missing {
		if _, err := fmt.Fprintln(w, "missing: "+Printable(m, "")); err != nil {
			return err
		}
	}
	if doc.Blockers != nil {
		return HipifyBlockers(w, s, *doc.Blockers)
	}
	return nil
}

// HipifyBlockers prints what will not compile on the target: a line per
// class with its counts, then each blocked unit's items.
func HipifyBlockers(w io.Writer, s *Styles, b hipify.BlockerReport) error {
	var out strings.Builder
	libs := "libraries looked for in " + strings.Join(b.IncludeDirs, ", ")
	if len(b.IncludeDirs) == 0 {
		libs = "no ROCm toolchain found: installed libraries not checked"
	}
	fmt.Fprintf(&out, "blocked: %d of %d units will not compile on the target (%s)\n", b.Blocked, b.Units, libs)
	for _, c := range hipify.BlockerClasses {
		n := b.Classes[c]
		fmt.Fprintf(&out, "  %-15s %d units, %d items\n", c, n.Units, n.Items)
	}
	for _, u := range b.PerUnit {
		out.WriteString(s.Header.Render(Printable(u.Unit, "")) + "\n")
		for _, x := range u.Blockers {
			fmt.Fprintf(&out, "  %s: %s: %s\n", Printable(x.Where, ""), x.Class, Printable(x.Msg, ""))
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// hipifyStatsTable is the --stats table, and the kernels HIP would miss.
func hipifyStatsTable(doc hipify.TreeReport) (Table, []string) {
	t := Table{Header: []string{"FILE", "LINES", "REPLACED", "UNSUPPORTED", "HAZARDS", "KERNELS", "TIME"}, Right: map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true}}
	var missing []string
	for _, f := range doc.Files {
		if f.Report == nil {
			continue
		}
		kernels := ""
		if p := f.Kernels; p != nil {
			// kernels of nvcc's device pass / of HIP's device pass
			kernels = strconv.Itoa(len(p.CUDADevice)) + "/" + strconv.Itoa(len(p.HIPDevice))
			for _, k := range p.Missing {
				missing = append(missing, f.File+": kernel "+k+" is defined for CUDA sm_"+strconv.Itoa(p.CUDAArch/10)+" but not under HIP")
			}
			for _, k := range p.MissingHost {
				missing = append(missing, f.File+": kernel "+k+" is visible to CUDA's host pass but not to HIP's")
			}
		}
		t.Rows = append(t.Rows, []string{f.File, strconv.Itoa(f.Lines), strconv.Itoa(f.Replacements()),
			strconv.Itoa(len(f.Unsupported)), strconv.Itoa(len(f.Hazards)), kernels, f.Duration.Round(time.Microsecond).String()})
	}
	fam := make([]string, 0, len(doc.Total.Replaced))
	for k, v := range doc.Total.Replaced {
		fam = append(fam, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(fam)
	t.Rows = append(t.Rows, []string{"TOTAL", strconv.Itoa(doc.Total.Lines), strconv.Itoa(doc.Total.Replacements),
		strconv.Itoa(doc.Total.Unsupported), strconv.Itoa(doc.Total.Hazards), "",
		time.Duration(doc.Total.Seconds * float64(time.Second)).Round(time.Microsecond).String()})

	if len(fam) > 0 {
		t.Rows = append(t.Rows, []string{"by family: " + strings.Join(fam, ", ")})
	}
	return t, missing
}

// HipifyDiagnostics prints a translation's unsupported APIs, hazards,
// conditionals and notable rewrites on stderr, at their file:line:col.
func HipifyDiagnostics(ui *UI, rep *hipify.Report) {
	for _, d := range rep.Unsupported {
		ui.Println(ui.Err, Printable(d.Where, "")+": "+ui.ErrS.Warn.Render("unsupported:")+" "+d.Msg)
	}
	for _, d := range rep.Hazards {
		ui.Println(ui.Err, Printable(d.Where, "")+": "+ui.ErrS.Warn.Render("hazard:")+" ["+d.Code+"] "+d.Msg)
	}
	for _, d := range rep.Conditionals {
		ui.Println(ui.Err, Printable(d.Where, "")+": conditional: ["+d.Code+"] "+d.Msg)
	}
	for _, d := range rep.Translated {
		ui.Println(ui.Err, Printable(d.Where, "")+": translated: ["+d.Code+"] "+d.Msg)
	}
}
