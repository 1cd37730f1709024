package hipify

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	incscan "github.com/rocmk/rocmk/compile/includes"
	"github.com/rocmk/rocmk/hipify/rocmlibs"
)

// Blocker classes: what will stop a translated unit from compiling on the
// target HIP, found before any compile (hipify --stats).
const (
	BlockLibrary     = "library-absent" // a ROCm library the target toolchain does not have
	BlockAPI         = "api-absent"     // an API (or header) the target HIP version lacks
	BlockPTX         = "ptx"            // inline PTX left untranslated
	BlockUnsupported = "unsupported"    // a CUDA API with no HIP equivalent at all
)

// BlockerClasses is the classes in report order.
var BlockerClasses = []string{BlockLibrary, BlockAPI, BlockPTX, BlockUnsupported}

// Blocker is one item that blocks a unit.
type Blocker struct {
	Class   string `json:"class"`
	Where   string `json:"pos"` // file:line[:col]
	Name    string `json:"name"`
	Msg     string `json:"message"`
	Package string `json:"package,omitempty"` // library-absent: the Debian package that provides it
}

// UnitBlockers are the blockers of one translation unit: its own and
// those of the files of the tree it includes.
type UnitBlockers struct {
	Unit     string    `json:"unit"`
	Blockers []Blocker `json:"blockers"`
}

// BlockerReport classifies what will not compile, per unit.
type BlockerReport struct {
	// IncludeDirs are where ROCm libraries were looked for (the target
	// toolchain's); empty: no toolchain, so installed libraries are not
	// checked (only those the target HIP version cannot have).
	IncludeDirs []string `json:"include_dirs"`
	Units       int      `json:"units"`   // translation units (.cu, .hip)
	Blocked     int      `json:"blocked"` // of them, with at least one blocker
	// Classes counts, per class, the units it blocks and its items.
	Classes map[string]ClassCount `json:"classes"`
	PerUnit []UnitBlockers        `json:"per_unit"`
}

// ClassCount is one class's line of the summary.
type ClassCount struct {
	Units int `json:"units"`
	Items int `json:"items"`
}

// TreeBlockers is Blockers for a translation of inputs (the directories
// among them are the roots) on the toolchain whose HIP include directory
// is hipInclude ("": none found, installed libraries are not checked).
func TreeBlockers(results []Result, inputs []string, hipInclude string) *BlockerReport {
	var roots, incs []string
	for _, in := range inputs {
		if st, err := os.Stat(in); err == nil && st.IsDir() {
			roots = append(roots, in)
		}
	}
	if hipInclude != "" {
		incs = []string{hipInclude}
	}
	rep := Blockers(results, roots, incs)
	return &rep
}

// Blockers classifies, per translation unit of results, what will keep
// its translation from compiling for the target: unsupported diagnostics,
// untranslated inline PTX, and library includes the include directories
// (the target toolchain's) lack. roots are the input directories, where
// includes are also looked up.
func Blockers(results []Result, roots, includeDirs []string) BlockerReport {
	rep := BlockerReport{IncludeDirs: includeDirs, Classes: map[string]ClassCount{}, PerUnit: []UnitBlockers{}}
	byName := map[string]int{}
	for i, r := range results {
		byName[filepath.Clean(r.Name)] = i
	}
	own := make([][]Blocker, len(results))
	for i, r := range results {
		own[i] = fileBlockers(r, includeDirs)
	}
	for i, r := range results {
		if !isUnit(r.Name) || r.Report == nil {
			continue
		}
		rep.Units++
		var bs []Blocker
		seen := map[string]bool{}
		for _, j := range reach(results, byName, i, roots) {
			for _, b := range own[j] {
				if k := b.Class + "\x00" + b.Where + "\x00" + b.Name; !seen[k] {
					seen[k] = true
					bs = append(bs, b)
				}
			}
		}
		if len(bs) == 0 {
			continue
		}
		rep.Blocked++
		classes := map[string]bool{}
		for _, b := range bs {
			c := rep.Classes[b.Class]
			c.Items++
			if !classes[b.Class] {
				classes[b.Class] = true
				c.Units++
			}
			rep.Classes[b.Class] = c
		}
		rep.PerUnit = append(rep.PerUnit, UnitBlockers{Unit: r.Name, Blockers: bs})
	}
	return rep
}

// isUnit reports whether name is a translation unit (not a header).
func isUnit(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".cu", ".hip":
		return true
	}
	return false
}

// reach returns the results unit i reaches through its includes (i
// first): a header name is looked up beside its includer, then under each
// root; headers outside the results are not followed.
func reach(results []Result, byName map[string]int, i int, roots []string) []int {
	order := []int{i}
	seen := map[int]bool{i: true}
	for k := 0; k < len(order); k++ {
		r := results[order[k]]
		for _, ref := range incscan.Scan(r.In).Refs {
			if ref.Name == "" || ref.Has {
				continue
			}
			cands := []string{filepath.Join(filepath.Dir(r.Name), ref.Name)}
			for _, root := range roots {
				cands = append(cands, filepath.Join(root, ref.Name))
			}
			for _, c := range cands {
				if j, ok := byName[filepath.Clean(c)]; ok && !seen[j] {
					seen[j] = true
					order = append(order, j)
					break
				}
			}
		}
	}
	return order
}

// fileBlockers are one file's own blockers, in the order of its report.
func fileBlockers(r Result, includeDirs []string) []Blocker {
	if r.Report == nil || r.Err != nil {
		return nil
	}
	var bs []Blocker
	kept := map[string]bool{} // libraries already reported by a kept CUDA include
	for _, d := range r.Report.Unsupported {
		b := classifyUnsupported(d)
		if lib, ok := rocmlibs.ForHeader(b.Name); ok && b.Class == BlockLibrary {
			kept[lib.Name] = true
		}
		bs = append(bs, b)
	}
	for _, d := range r.Report.Hazards {
		if d.Code == "inline-asm" {
			bs = append(bs, Blocker{Class: BlockPTX, Where: d.Where, Name: d.Name, Msg: d.Msg})
		}
	}
	if len(includeDirs) > 0 && !IsCompatHeader(r.Out) {
		bs = append(bs, absentLibraries(r.Name, r.In, r.Out, includeDirs, kept)...)
	}
	return bs
}

// classifyUnsupported sorts an unsupported diagnostic: a library header
// the target HIP version cannot have (hipBLASLt before 5.5),
// something the target HIP version lacks, or no HIP equivalent at all.
func classifyUnsupported(d Diagnostic) Blocker {
	b := Blocker{Class: BlockUnsupported, Where: d.Where, Name: d.Name, Msg: d.Msg}
	if lib, ok := rocmlibs.ForHeader(d.Name); ok && d.Code == "unsupported-header" && strings.Contains(d.Msg, "needs HIP ") {
		b.Class, b.Package = BlockLibrary, lib.Package
		b.Msg += "; " + lib.Name + " is in " + lib.Package
		return b
	}
	if strings.Contains(d.Msg, "needs HIP ") || strings.Contains(d.Msg, "was removed in HIP ") {
		b.Class = BlockAPI
	}
	return b
}

// absentLibraries finds the library includes of a translation that no
// include directory holds. A library included under several spellings
// (the __has_include pair of a moved header) is absent only when none is
// there. The line is the source's include of the library (its CUDA
// spelling), else the translation's.
func absentLibraries(name string, in, out []byte, includeDirs []string, kept map[string]bool) []Blocker {
	type use struct {
		lib   rocmlibs.Library
		line  int
		names []string
		found bool
	}
	var uses []*use
	byLib := map[string]*use{}
	for _, ref := range incscan.Scan(out).Refs {
		lib, ok := rocmlibs.ForHeader(ref.Name)
		if !ok || !ref.Angled || ref.Has || ref.InMacro || kept[lib.Name] {
			continue
		}
		u := byLib[lib.Name]
		if u == nil {
			u = &use{lib: lib, line: ref.Line}
			byLib[lib.Name] = u
			uses = append(uses, u)
		}
		u.names = append(u.names, ref.Name)
		u.found = u.found || rocmlibs.Find(includeDirs, ref.Name)
	}
	srcLine := map[string]int{}
	for _, ref := range incscan.Scan(in).Refs {
		if lib, ok := rocmlibs.ForHeader(ref.Name); ok && !ref.Has && srcLine[lib.Name] == 0 {
			srcLine[lib.Name] = ref.Line
		}
	}
	var bs []Blocker
	for _, u := range uses {
		if u.found {
			continue
		}
		if l := srcLine[u.lib.Name]; l > 0 {
			u.line = l
		}
		bs = append(bs, Blocker{Class: BlockLibrary, Where: name + ":" + strconv.Itoa(u.line), Name: u.names[0], Package: u.lib.Package,
			Msg: "<" + u.names[0] + "> is not installed for the target toolchain: " + u.lib.Hint()})
	}
	return bs
}
