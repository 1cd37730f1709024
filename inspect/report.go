package inspect

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Report is what `rocmk inspect` finds in its files (rocmk.inspect/v1).
type Report struct {
	Files  []FileReport `json:"files"`
	Errors int          `json:"errors"` // files that could not be read (or extracted)
}

// FileReport is one file: what it is and its code objects.
type FileReport struct {
	File        string         `json:"file"`
	Kind        string         `json:"kind,omitempty"`
	Error       string         `json:"error,omitempty"`
	Notes       []string       `json:"notes,omitempty"`
	Bundles     []Bundle       `json:"bundles,omitempty"`
	Images      []Image        `json:"images,omitempty"`
	CodeObjects []ObjectReport `json:"code_objects"`
	Extracted   []string       `json:"extracted,omitempty"`
}

// ObjectReport is one code object, its kernels with their occupancy.
type ObjectReport struct {
	Location        string         `json:"location"`
	Container       string         `json:"container,omitempty"`
	Entry           string         `json:"entry,omitempty"`
	Offset          int64          `json:"offset"`
	Size            int64          `json:"size"`
	Target          string         `json:"target"`
	Processor       string         `json:"processor"`
	Mach            string         `json:"mach"`
	Flags           string         `json:"e_flags"`
	Version         int            `json:"code_object_version"`
	GenericVersion  int            `json:"generic_version,omitempty"`
	MetaTarget      string         `json:"metadata_target,omitempty"`
	MetadataVersion []int          `json:"metadata_version,omitempty"`
	ELFType         string         `json:"elf_type"`
	Kernels         []KernelReport `json:"kernels"`
	Symbols         []Symbol       `json:"symbols,omitempty"`
	Warnings        []string       `json:"warnings,omitempty"`
}

// KernelReport is a kernel and its occupancy at the report's geometry.
type KernelReport struct {
	Kernel
	Occupancy Occupancy `json:"occupancy"`
}

// ReportOptions select what a report holds.
type ReportOptions struct {
	Kernels    []string // only kernels matching one (KernelMatches); none: all
	Symbols    bool     // list each code object's symbols
	Block, LDS int      // occupancy geometry: workgroup size (0: the kernel's maximum) and dynamic LDS
}

// NewFileReport describes f, read from name.
func NewFileReport(name string, f *File, o ReportOptions) FileReport {
	fr := FileReport{File: name, Kind: f.Kind, Notes: f.Notes, Bundles: f.Bundles, Images: f.Images, CodeObjects: []ObjectReport{}}
	for _, co := range f.Objects {
		cd := ObjectReport{
			Location: co.Location(f.Name), Container: co.Container, Entry: co.Entry, Offset: co.Offset, Size: co.Size,
			Target: co.Target.String(), Processor: co.ProcessorName(), Mach: fmt.Sprintf("0x%02x", co.Mach),
			Flags: fmt.Sprintf("0x%x", co.Flags), Version: co.Version, GenericVersion: co.GenericVersion(),
			MetaTarget: co.MetaTarget, MetadataVersion: co.MetadataVersion, ELFType: co.Type,
			Kernels: []KernelReport{}, Warnings: co.Warnings,
		}
		if co.Target.Proc == "" {
			cd.Target = cd.Processor // unknown machine value: "mach 0x27"
		}
		p := co.Target.Processor()
		for _, k := range co.Kernels {
			if KernelMatches(k, o.Kernels) {
				cd.Kernels = append(cd.Kernels, KernelReport{Kernel: k, Occupancy: k.Occupancy(p, o.Block, o.LDS)})
			}
		}
		if o.Symbols {
			cd.Symbols = co.Symbols
		}
		fr.CodeObjects = append(fr.CodeObjects, cd)
	}
	return fr
}

// Warnings are the code objects' warnings, each with its location.
func (fr FileReport) Warnings() []string {
	var out []string
	for _, co := range fr.CodeObjects {
		for _, w := range co.Warnings {
			out = append(out, co.Location+": "+w)
		}
	}
	return out
}

// KernelMatches applies --kernel: a glob (path.Match) or a substring of
// the mangled or demangled name; no pattern matches every kernel.
func KernelMatches(k Kernel, pats []string) bool {
	if len(pats) == 0 {
		return true
	}
	for _, p := range pats {
		for _, n := range []string{k.Name, k.Demangled} {
			if n == "" {
				continue
			}
			if ok, _ := path.Match(p, n); ok || strings.Contains(n, p) {
				return true
			}
		}
	}
	return false
}

// ExpandArgs replaces each directory argument (rocmk build's output
// directory) by the files under it that start like a code object, bundle
// or compressed bundle, in lexical order; other files are skipped. fromDir
// marks the files a directory stood for.
func ExpandArgs(args []string) (files []string, fromDir map[string]bool) {
	fromDir = map[string]bool{}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			files = append(files, a)
			continue
		}
		n := len(files)
		_ = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && looksLikeDeviceCode(p) {
				files = append(files, p)
				fromDir[p] = true
			}
			return nil
		})
		if len(files) == n {
			files = append(files, a) // reported: "is a directory" with nothing to read
		}
	}
	return files, fromDir
}

func looksLikeDeviceCode(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [24]byte
	n, _ := io.ReadFull(f, b[:])
	h := string(b[:n])
	return strings.HasPrefix(h, "\x7fELF") || strings.HasPrefix(h, "CCOB") || strings.HasPrefix(h, "__CLANG_OFFLOAD_BUNDLE__")
}

// Each reads (with read) and parses the files on up to jobs goroutines,
// drawing on b, and calls each with every result, in order, on the calling
// goroutine. At most jobs files are held at once, so memory follows the
// largest files, not their sum.
func Each(names []string, jobs int, read func(string) ([]byte, error), b *Budget, each func(name string, f *File, err error)) {
	type result struct {
		f   *File
		err error
	}
	results := make([]chan result, len(names))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	slots := make(chan struct{}, max(1, jobs))
	go func() {
		for i, name := range names {
			slots <- struct{}{}
			go func() {
				data, err := read(name)
				if err != nil {
					results[i] <- result{nil, err}
					return
				}
				f, err := ParseWith(name, data, b)
				results[i] <- result{f, err}
			}()
		}
	}()
	for i, name := range names {
		r := <-results[i]
		each(name, r.f, r.err)
		<-slots
	}
}

// DiffReport compares two builds kernel by kernel (rocmk.inspect.diff/v1).
type DiffReport struct {
	Old         string       `json:"old"`
	New         string       `json:"new"`
	Kernels     []KernelDiff `json:"kernels"`
	Regressions []string     `json:"regressions"` // "target kernel: category"
	FailOn      []string     `json:"fail_on,omitempty"`
}

// NewDiffReport compares old with new (the kernels o selects) and returns
// the regressions in the categories of failOn.
func NewDiffReport(oldName, newName string, old, new *File, o ReportOptions, failOn map[string]bool) (DiffReport, []string) {
	d := DiffReport{Old: oldName, New: newName, Kernels: []KernelDiff{}, Regressions: []string{}}
	for _, c := range FailOnCategories {
		if failOn[c] {
			d.FailOn = append(d.FailOn, c)
		}
	}
	var failing []string
	for _, k := range Diff(old, new, o.Block, o.LDS) {
		if !KernelMatches(Kernel{Name: k.Kernel, Demangled: k.Display}, o.Kernels) {
			continue
		}
		d.Kernels = append(d.Kernels, k)
		for _, r := range k.Regressions() {
			item := fmt.Sprintf("%s %s: %s", k.Target, k.DisplayName(), r)
			d.Regressions = append(d.Regressions, item)
			if failOn[r] {
				failing = append(failing, item)
			}
		}
	}
	return d, failing
}

// DisplayName is the demangled name if there is one.
func (d KernelDiff) DisplayName() string {
	if d.Display != "" {
		return d.Display
	}
	return d.Kernel
}
