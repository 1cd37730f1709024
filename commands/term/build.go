package term

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/compile/firsterr"
)

// ResourceUsage is build --resource-usage's table: per kernel its registers,
// spills, LDS and scratch.
func ResourceUsage(w io.Writer, s *Styles, rep *compile.Report) error {
	t := Table{Header: []string{"SOURCE", "TARGET", "KERNEL", "VGPR", "SGPR", "AGPR", "SPILLS", "LDS", "SCRATCH"},
		Right: map[int]bool{3: true, 4: true, 5: true, 6: true, 7: true, 8: true}}
	rs := append([]*compile.Result(nil), rep.Results...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Src < rs[j].Src })
	for _, r := range rs {
		for _, k := range r.Kernels {
			t.Rows = append(t.Rows, []string{filepath.Base(r.Src), r.Target.String(), k.Name,
				fmt.Sprint(k.VGPRs), fmt.Sprint(k.SGPRs), fmt.Sprint(k.AGPRs), fmt.Sprint(k.VGPRSpills + k.SGPRSpills), fmt.Sprint(k.LDS), fmt.Sprint(k.Scratch)})
		}
	}
	return t.Render(w, s)
}

// SourceName names a source for people: the bundled kernels as
// kernels/<name>, others relative to the current directory when inside it.
func SourceName(src string) string {
	if strings.Contains(src, string(filepath.Separator)+"rocmk-kernels-") {
		return "kernels/" + filepath.Base(src)
	}
	if wd, err := os.Getwd(); err == nil && filepath.IsAbs(src) {
		if rel, err := filepath.Rel(wd, src); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return src
}

// Duration is a compile time for people: µs, ms or seconds.
func Duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// WarnSpills warns about kernels that spill registers to scratch.
func WarnSpills(ui *UI, rep *compile.Report) {
	for _, r := range rep.Results {
		for _, k := range r.Kernels {
			if k.VGPRSpills > 0 || k.SGPRSpills > 0 {
				ui.Warnf("%s [%s]: kernel %s spills registers (%d VGPRs, %d SGPRs) to scratch", filepath.Base(r.Src), r.Target, k.Name, k.VGPRSpills, k.SGPRSpills)
			}
		}
	}
}

// Diagnostics prints compiler diagnostics on stderr under "# src [target]" headers.
func Diagnostics(ui *UI, list compile.ErrorList) {
	for _, ce := range list {
		head, rest, found := strings.Cut(ce.Error(), "\n")
		ui.Println(ui.Err, ui.ErrS.Header.Render(Printable(head, "")))
		if found {
			ui.Println(ui.Err, Printable(rest, "\n\t"))
		}
	}
}

// UnitError is a failing unit's first compiler error, classified.
type UnitError struct {
	Unit   string `json:"unit"`
	Target string `json:"target"`
	firsterr.Error
}

// FirstErrors prints, on stderr, a line per failing unit with its first
// error and class, then the count of units per class; it returns errs.
func FirstErrors(ui *UI, errs []UnitError) []UnitError {
	if len(errs) == 0 || ui.JSON {
		return errs
	}
	n := map[string]int{}
	for _, e := range errs {
		n[e.Class]++
		ui.Println(ui.Err, ui.ErrS.Err.Render("first error:")+" "+Printable(SourceName(e.Unit)+" ["+e.Target+"]: "+e.Error.String(), ""))
	}
	var parts []string
	for _, c := range firsterr.Classes {
		if n[c] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n[c]))
		}
	}
	ui.Println(ui.Err, fmt.Sprintf("failing units by class: %s", strings.Join(parts, ", ")))
	return errs
}

// where counts the compiles by where they ran, with an executor:
// " (3 on slurm, 1 local)"; "" without one.
func where(rep *compile.Report) string {
	w := rep.Where()
	if w == nil {
		return ""
	}
	return fmt.Sprintf(" (%d on slurm, %d local)", w["slurm"], w["local"])
}

// BuildSummary is build's last line: jobs, hits (and how many came from a
// remote cache, when there is one), compiles, failures, times.
func BuildSummary(w io.Writer, rep *compile.Report, outDir string, withRemote bool) error {
	remote := ""
	if withRemote {
		remote = fmt.Sprintf(" (%d remote)", rep.RemoteHits())
	}
	_, err := fmt.Fprintf(w, "%d jobs: %d cached%s, %d compiled%s, %d failed; wall %s, compiler CPU %s; output in %s\n",
		len(rep.Results), rep.Count(compile.StatusHit), remote, rep.Count(compile.StatusCompiled), where(rep), rep.Count(compile.StatusFailed),
		Duration(rep.Wall), Duration(rep.CPU), outDir)
	return err
}

// ClassifyFirstErrors classifies each failing unit's first error (its first
// failing target's): an error in a file under the compiler's directory,
// the unit's or the translated tree is the project's.
func ClassifyFirstErrors(list compile.ErrorList, req compile.Request) []UnitError {
	var out []UnitError
	seen := map[string]bool{}
	base, _ := filepath.Abs(req.BaseDir)
	for _, ce := range list {
		if seen[ce.Src] {
			continue
		}
		seen[ce.Src] = true
		roots := []string{base, filepath.Dir(ce.Src)}
		unit := ce.Src
		if req.Tree != nil {
			roots = append(roots, req.Tree.Dir)
			if o := req.Tree.Original(ce.Src); o != "" {
				unit = o
			}
		}
		e, ok := firsterr.First(ce.Stderr, firsterr.InRoots(roots...))
		if !ok {
			msg := "no compiler error in its output"
			if ce.Err != nil {
				msg = ce.Err.Error()
			}
			e = firsterr.Error{Message: msg, Class: firsterr.Other}
		}
		out = append(out, UnitError{Unit: unit, Target: ce.Target.String(), Error: e})
	}
	return out
}
