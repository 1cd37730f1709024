package term

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/rocmk/rocmk/kernels"
	"github.com/rocmk/rocmk/verify"
)

// Verify is verify's text: a row per kernel, notes on failures, a summary.
func Verify(w io.Writer, st *Styles, doc *kernels.Report) error {
	t := Table{Header: []string{"KERNEL", "DTYPE", "RESULT", "MAX ABS", "MAX REL", "GPU µs", "GB/s", "% PEAK"},
		Right: map[int]bool{3: true, 4: true, 5: true, 6: true, 7: true}}
	t.Style = func(col int, row []string) *lipgloss.Style {
		if col != 2 {
			return nil
		}
		switch row[2] {
		case verify.StatusPass:
			return &st.OK
		case verify.StatusMismatch, verify.StatusSkipped:
			return &st.Warn
		}
		return &st.Err
	}
	var notes, goals []string
	for _, c := range doc.Cases {
		if c.Goal != nil {
			goals = append(goals, c.Name+": "+c.Goal.String())
		}
		abs, rel := "-", "-"
		if len(c.Outputs) > 0 {
			var a, r float64
			for _, o := range c.Outputs {
				a, r = max(a, o.Comparison.MaxAbs), max(r, o.Comparison.MaxRel)
			}
			abs, rel = fmt.Sprintf("%.2g", a), fmt.Sprintf("%.2g", r)
		}
		us, gbs, pct := "-", "-", "-"
		if c.Time != nil {
			us = fmt.Sprintf("%.1f", float64(c.Time.Median.Nanoseconds())/1e3)
			gbs = fmt.Sprintf("%.0f", c.GBps)
			if c.PeakPct > 0 {
				pct = fmt.Sprintf("%.0f%%", c.PeakPct)
			}
		}
		t.Rows = append(t.Rows, []string{c.Name, c.DType, c.Status, abs, rel, us, gbs, pct})
		if c.Status != verify.StatusPass {
			notes = append(notes, c.Name+": "+c.Summary())
		}
	}
	if err := t.Render(w, st); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, "  "+n)
	}
	verifyGoals(w, st, doc, goals)
	fmt.Fprintf(w, "%d passed, %d mismatched, %d errors", doc.Passed, doc.Mismatch, doc.Errors)
	if doc.Skipped > 0 {
		fmt.Fprintf(w, ", %d skipped", doc.Skipped)
	}
	fmt.Fprintf(w, " on %s (%s) in %.1fs", doc.Device.Name, doc.Device.Arch, doc.WallSeconds)
	if doc.CopyGBps > 0 {
		fmt.Fprintf(w, "; copy %.0f GB/s, peak %.0f GB/s", doc.CopyGBps, doc.PeakGBps)
	}
	if doc.BelowGoal > 0 {
		fmt.Fprintf(w, "; %s", st.Warn.Render(fmt.Sprintf("%d below goal", doc.BelowGoal)))
	}
	fmt.Fprintln(w)
	return nil
}

// verifyGoals prints each timed case's figure against its goal, and the
// copy bandwidth they are measured against.
func verifyGoals(w io.Writer, st *Styles, doc *kernels.Report, goals []string) {
	if len(goals) == 0 {
		return
	}
	head := "goals"
	switch {
	case doc.CopyBandwidthGBps > 0:
		head += fmt.Sprintf(" (measured copy bandwidth %.2f TB/s)", doc.CopyBandwidthGBps/1e3)
	case doc.CopyBandwidthErr != "":
		head += " (" + doc.CopyBandwidthErr + ")"
	}
	if doc.BLAS != "" {
		head += "; blas: " + doc.BLAS
	}
	if doc.BLASLt != "" {
		head += "; blaslt: " + doc.BLASLt
	}
	fmt.Fprintln(w, head)
	for _, g := range goals {
		if strings.Contains(g, "BELOW GOAL") {
			g = st.Warn.Render(g)
		}
		fmt.Fprintln(w, "  "+g)
	}
}
