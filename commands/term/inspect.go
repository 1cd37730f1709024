package term

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/rocmk/rocmk/inspect"
)

// object's kernel table.
// Inspect is inspect's text: per file, its kind and each code object's
// kernel table (and its symbols).
func Inspect(w io.Writer, s *Styles, doc inspect.Report, symbols bool) error {
	first := true
	for _, fd := range doc.Files {
		if fd.Kind == "" {
			continue
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		fileHead(w, s, fd)
		for _, co := range fd.CodeObjects {
			if err := codeObject(w, s, fd, co, symbols); err != nil {
				return err
			}
		}
		for _, p := range fd.Extracted {
			fmt.Fprintln(w, "  extracted "+Printable(p, ""))
		}
	}
	return nil
}

// fileHead is a file's first lines: its kind, bundles, notes and images.
func fileHead(w io.Writer, s *Styles, fd inspect.FileReport) {
	var b strings.Builder
	b.WriteString(s.Header.Render(Printable(fd.File, "")) + ": " + fd.Kind)
	for _, bu := range fd.Bundles {
		if c := bu.Compressed; c != nil {
			fmt.Fprintf(&b, " (CCOB v%d, %s, %d bytes uncompressed)", c.Version, c.Method, c.UncompressedSize)
		}
	}
	if n := len(fd.CodeObjects); n != 1 || fd.Kind != "code-object" {
		fmt.Fprintf(&b, ", %d code object%s", n, Plural(n, "", "s"))
	}
	fmt.Fprintln(w, b.String())
	for _, n := range fd.Notes {
		fmt.Fprintln(w, s.Dim.Render("  note: "+Printable(n, "")))
	}
	for _, im := range fd.Images {
		arch := im.Arch
		if arch == "" {
			arch = "?"
		}
		fmt.Fprintf(w, "  %s: %s for %s (%d bytes)\n", Printable(im.Where, ""), im.Kind, Printable(arch, ""), im.Size)
	}
}

// codeObject is one code object: its target and kernel table.
func codeObject(w io.Writer, s *Styles, fd inspect.FileReport, co inspect.ObjectReport, symbols bool) error {
	fmt.Fprintln(w)
	head := co.Target
	if co.Entry != "" || co.Container != "" {
		head += "  " + s.Dim.Render(Printable(strings.TrimPrefix(co.Location, fd.File), ""))
	}
	fmt.Fprintf(w, "%s  %s\n", s.Target.Render(head), s.Dim.Render(fmt.Sprintf("code object v%d, e_flags %s", co.Version, co.Flags)))
	if co.Version == 2 {
		fmt.Fprintln(w, s.Dim.Render("  legacy code object v2: no kernel descriptors"))
	}
	if len(co.Kernels) == 0 {
		fmt.Fprintln(w, s.Dim.Render("  (no kernels)"))
	} else if err := kernelTable(co.Kernels).Render(w, s); err != nil {
		return err
	}
	if symbols {
		fmt.Fprintln(w, s.Dim.Render("  symbols:"))
		for _, sym := range co.Symbols {
			fmt.Fprintf(w, "  %016x %s %s\n", sym.Value, sym.Kind, Printable(sym.Name, ""))
		}
	}
	return nil
}

func kernelTable(ks []inspect.KernelReport) Table {
	t := Table{
		Header: []string{"KERNEL", "VGPR", "SGPR", "AGPR", "SPILL s/v", "LDS", "SCRATCH", "WAVE", "BLOCK", "OCC", "LIMIT"},
		Right:  map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true},
	}
	for _, k := range ks {
		o := k.Occupancy
		occ := strconv.Itoa(o.WavesPerSIMD)
		if o.MaxWaves > 0 {
			occ += "/" + strconv.Itoa(o.MaxWaves)
		}
		scratch := strconv.Itoa(int(k.Scratch))
		if k.DynamicStack {
			scratch += "+dyn"
		}
		agpr := "-"
		if k.HasAGPRCount() {
			agpr = strconv.Itoa(k.AGPRs)
		}
		t.Rows = append(t.Rows, []string{
			k.DisplayName(), strconv.Itoa(k.VGPRs), strconv.Itoa(k.SGPRs), agpr,
			fmt.Sprintf("%d/%d", k.SGPRSpills, k.VGPRSpills), strconv.Itoa(int(k.LDS)), scratch,
			strconv.Itoa(k.Wavefront), strconv.Itoa(o.Block), occ, o.Limiter,
		})
	}
	return t
}

// InspectDiff is inspect --diff's text: the kernels that changed and a count.
func InspectDiff(w io.Writer, s *Styles, doc inspect.DiffReport) error {
	t := Table{Header: []string{"TARGET", "KERNEL", "STATUS", "CHANGES"}}
	same := 0
	for _, d := range doc.Kernels {
		if d.Status == "same" {
			same++
			continue
		}
		var parts []string
		for _, c := range d.Changes {
			p := fmt.Sprintf("%s %d -> %d", c.Field, c.Old, c.New)
			if c.Regression {
				p += " (worse)"
			}
			parts = append(parts, p)
		}
		t.Rows = append(t.Rows, []string{d.Target, d.DisplayName(), d.Status, strings.Join(parts, ", ")})
	}
	t.Style = func(col int, row []string) *lipgloss.Style {
		if col == 3 && strings.Contains(row[3], "(worse)") || col == 2 && row[2] == "removed" {
			return &s.Warn
		}
		return nil
	}
	fmt.Fprintf(w, "%s -> %s\n", Printable(doc.Old, ""), Printable(doc.New, ""))
	if len(t.Rows) > 0 {
		if err := t.Render(w, s); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d kernel%s compared: %d unchanged, %d changed or added/removed, %d regression%s\n",
		len(doc.Kernels), Plural(len(doc.Kernels), "", "s"), same, len(doc.Kernels)-same, len(doc.Regressions), Plural(len(doc.Regressions), "", "s"))
	return nil
}
