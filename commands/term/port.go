package term

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/rocmk/rocmk/verify/port"
)

// Port is port's text: per source what happened, the case table of each
// kernel that ran, and the verdicts.
func Port(w io.Writer, s *Styles, doc *port.Report, quiet bool) error {
	for _, src := range doc.Sources {
		if quiet {
			break
		}
		line := src.File
		if src.Hipified {
			line += fmt.Sprintf(": hipified, %d replacements, %d hazards", src.Replaced, len(src.Hazards))
		}
		for _, b := range src.Builds {
			line += fmt.Sprintf("; %s %s", b.Target, b.Status)
		}
		if src.Image != "" {
			line += "; device image by " + src.Image
		}
		fmt.Fprintln(w, s.Dim.Render(line))
	}
	for _, v := range doc.Kernels {
		if v.Result == nil || quiet {
			continue
		}
		t := Table{Header: []string{"CASE", "GRID", "BLOCK", "RESULT", "MAX ABS", "MAX REL", "WORST", "GPU"}, Right: map[int]bool{4: true, 5: true}}
		for _, c := range v.Result.Cases {
			res, worst := "ok", ""
			var maxAbs, maxRel float64
			for _, o := range c.Outputs {
				maxAbs = max(maxAbs, o.Comparison.MaxAbs)
				maxRel = max(maxRel, o.Comparison.MaxRel)
				if !o.Comparison.OK() {
					res = fmt.Sprintf("FAIL %d/%d", o.Comparison.Mismatches, o.Comparison.N)
					worst = o.Describe()
				}
			}
			if c.Error != "" {
				res, worst = "ERROR", c.Error
			}
			gpu := ""
			if c.GPUTime > 0 {
				gpu = portDuration(c.GPUTime)
			}
			t.Rows = append(t.Rows, []string{c.Case, dim3(c.Grid), dim3(c.Block), res,
				fmt.Sprintf("%.2g", maxAbs), fmt.Sprintf("%.2g", maxRel), worst, gpu})
		}
		t.Style = func(col int, row []string) *lipgloss.Style {
			if col == 3 {
				if row[3] == "ok" {
					return &s.OK
				}
				return &s.Err
			}
			return nil
		}
		if err := t.Render(w, s); err != nil {
			return err
		}
	}
	for _, v := range doc.Kernels {
		fmt.Fprintln(w, verdictLine(s, doc, v))
	}
	return nil
}

// verdictLine is "NAME: translated with N hazards; built for T; verified on
// DEVICE: pass (worst ...)".
func verdictLine(s *Styles, doc *port.Report, v *port.Verdict) string {
	var parts []string
	if strings.HasSuffix(strings.ToLower(v.Source), ".cu") || strings.HasSuffix(strings.ToLower(v.Source), ".cuh") {
		parts = append(parts, fmt.Sprintf("translated with %d hazard%s", v.Hazards, Plural(v.Hazards, "", "s")))
	}
	if len(v.Built) > 0 {
		parts = append(parts, "built for "+strings.Join(v.Built, ","))
	}
	if len(v.Failed) > 0 {
		parts = append(parts, s.Err.Render("build failed for "+strings.Join(v.Failed, ",")))
	}
	if v.Checked {
		parts = append(parts, "metadata ok")
	}
	switch {
	case v.Result != nil && doc.Device != nil:
		st := s.OK.Render("pass")
		if !v.Result.OK {
			st = s.Err.Render("FAIL") + fmt.Sprintf(" (%d of %d cases)", v.Result.Failed(), len(v.Result.Cases))
		}
		worst := ""
		if w := v.Result.Worst; w != nil {
			if w.Comparison.OK() {
				worst = fmt.Sprintf(", worst abs err %.2g rel %.2g over %d cases", w.Comparison.MaxAbs, w.Comparison.MaxRel, len(v.Result.Cases))
			} else {
				worst = fmt.Sprintf(", worst %s in case %q", w.Describe(), w.Case)
			}
		}
		parts = append(parts, fmt.Sprintf("verified on %s (%s): %s%s", doc.Device.Name, doc.Device.Arch, st, worst))
	case v.Status == port.StatusError:
		parts = append(parts, s.Err.Render("error: ")+v.Error)
	case doc.NoVerify:
		parts = append(parts, "not run (--no-verify)")
	case doc.Device == nil:
		parts = append(parts, "not run (no GPU)")
	}
	return s.Kernel.Render(v.Spec) + ": " + strings.Join(parts, "; ")
}

// dim3 writes a launch dimension: 256, 16x16, 8x8x8.
func dim3(d [3]int) string {
	switch {
	case d[2] != 1:
		return fmt.Sprintf("%dx%dx%d", d[0], d[1], d[2])
	case d[1] != 1:
		return fmt.Sprintf("%dx%d", d[0], d[1])
	}
	return fmt.Sprint(d[0])
}

// portDuration is a GPU time with a decimal.
func portDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d.Nanoseconds())/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1e3)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
