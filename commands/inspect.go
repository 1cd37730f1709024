package commands

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/inspect"
)

type inspectOptions struct {
	Files   []string
	Kernels []string // --kernel patterns (glob or substring)
	Symbols bool
	Block   int
	LDS     int
	Diff    bool
	FailOn  map[string]bool
	Extract string
	// MaxDecompress bounds the bytes all compressed bundles decompress to.
	MaxDecompress int64
	// MaxExtractRatio bounds what --extract writes per file, relative to its input.
	MaxExtractRatio float64
	G               globalOptions
}

// maxBlock is the largest workgroup HIP launches (1024 work-items on every AMD GPU).
const maxBlock = 1024

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show targets, kernels, registers, spills, LDS and occupancy in AMDGPU code objects and HIP binaries",
		ArgsUsage: "FILE... | --diff OLD NEW",
		Description: `Reads plain code objects (v2 legacy, v3-v6), clang offload bundles, compressed bundles
(CCOB v1-v3, zlib or zstd; the MD5 hash is checked), host executables and objects with
.hip_fatbin (any number of bundles), -fgpu-rdc objects and .llvm.offloading sections,
in-process: no LLVM tools, no GPU. A directory argument (rocmk build's output) stands for
the device-code files under it.

For each code object it prints a table of kernels: VGPRs, SGPRs, AGPRs, spills (s/v), static
LDS, scratch per work-item, wavefront size and the occupancy (waves per SIMD) with the
resource that limits it (vgpr, sgpr, lds, workgroup, or waves = the hardware maximum).
Occupancy uses --block (default: the kernel's max workgroup size) and --lds bytes of dynamic
shared memory on top of the static LDS.

--diff OLD NEW compares two builds kernel by kernel (matched by target and name); with
--fail-on CATEGORIES (spills, occupancy, vgpr, sgpr, lds, scratch, removed, all) it exits 1
when a kernel got worse in one of them.

Compressed bundles of all the files together may decompress to at most --max-decompress
bytes (default 1GiB, env ROCMK_MAX_DECOMPRESS); --extract writes at most --max-extract-ratio
times each file's input (its size plus its decompressed bytes).

Unreadable files are reported (file, offset, field) and skipped; the exit status is then 1.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "kernel", Aliases: []string{"k"}, Usage: "only kernels matching `PATTERN` (glob or substring of the mangled or demangled name; repeatable)"},
			&cli.BoolFlag{Name: "symbols", Usage: "also list the ELF symbols of each code object, nm style"},
			&cli.IntFlag{Name: "block", Usage: "workgroup size `N` (1-1024) for occupancy", DefaultText: "each kernel's max workgroup size"},
			&cli.IntFlag{Name: "lds", Usage: "dynamic LDS `BYTES` per workgroup added to the static LDS for occupancy"},
			&cli.BoolFlag{Name: "diff", Usage: "compare two builds: rocmk inspect --diff OLD NEW"},
			&cli.StringFlag{Name: "fail-on", Usage: "with --diff, exit 1 on a regression in `CATEGORIES` (spills,occupancy,vgpr,sgpr,lds,scratch,removed,all)"},
			&cli.StringFlag{Name: "extract", Usage: "write each code object and device image into `DIR`, one file each"},
			&cli.StringFlag{Name: "max-decompress", Usage: "decompress at most `SIZE` from all compressed bundles together (env ROCMK_MAX_DECOMPRESS)", DefaultText: "1GiB"},
			&cli.Float64Flag{Name: "max-extract-ratio", Value: inspect.DefaultMaxExtractRatio, Usage: "with --extract, write at most `R` times each file's size plus its decompressed bytes"},
		},
		Action: func(c *cli.Context) error {
			opts := inspectOptions{
				Files: c.Args().Slice(), Kernels: c.StringSlice("kernel"), Symbols: c.Bool("symbols"),
				Block: c.Int("block"), LDS: c.Int("lds"), Diff: c.Bool("diff"), Extract: c.String("extract"),
				MaxExtractRatio: c.Float64("max-extract-ratio"), G: globals(c),
			}
			var err error
			if opts.FailOn, err = inspect.ParseFailOn(c.String("fail-on")); err != nil {
				return usagef("%v", err)
			}
			if opts.MaxDecompress, err = maxDecompress(c.String("max-decompress"), envOf(c)); err != nil {
				return err
			}
			return runInspect(opts, envOf(c))
		},
	}
}

// maxDecompress reads --max-decompress, else $ROCMK_MAX_DECOMPRESS, else the default.
func maxDecompress(flag string, env Env) (int64, error) {
	s, from := flag, "--max-decompress"
	if s == "" {
		s, from = env.Getenv("ROCMK_MAX_DECOMPRESS"), "ROCMK_MAX_DECOMPRESS"
	}
	if s == "" {
		return inspect.DefaultMaxDecompress, nil
	}
	n, err := cache.ParseSize(s)
	if err != nil {
		return 0, usagef("%s: %v", from, err)
	}
	if n <= 0 {
		return 0, usagef("%s: must be more than 0", from)
	}
	return n, nil
}

func runInspect(opts inspectOptions, env Env) error {
	ui := newUI(env, opts.G)
	switch {
	case len(opts.Files) == 0:
		return usagef("inspect: no input files (rocmk inspect FILE...)")
	case opts.Block < 0 || opts.Block > maxBlock:
		return usagef("inspect: --block %d: a workgroup has 1 to %d work-items", opts.Block, maxBlock)
	case opts.LDS < 0 || opts.LDS > maxLDSPerGroup():
		return usagef("inspect: --lds %d: want 0 to %d bytes (the most LDS a workgroup gets on any target)", opts.LDS, maxLDSPerGroup())
	case !(opts.MaxExtractRatio > 0) || math.IsInf(opts.MaxExtractRatio, 1):
		return usagef("inspect: --max-extract-ratio %v: want a number above 0", opts.MaxExtractRatio)
	case opts.Diff && len(opts.Files) != 2:
		return usagef("inspect: --diff takes exactly two files, OLD and NEW (got %d)", len(opts.Files))
	case len(opts.FailOn) > 0 && !opts.Diff:
		return usagef("inspect: --fail-on needs --diff")
	}
	budget := inspect.NewBudget(opts.MaxDecompress)
	limit, err := inputLimit(env, inspect.MaxFileSize)
	if err != nil {
		return err
	}
	if opts.Diff {
		return runInspectDiff(opts, ui, limit, budget)
	}
	// A short-lived batch: trade memory for fewer GC cycles while parsing.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	doc := inspectDoc{Files: []inspectFileDoc{}}
	failed := 0
	var fromDir map[string]bool
	opts.Files, fromDir = expandInspectArgs(opts.Files)
	var x *inspect.Extractor
	if opts.Extract != "" {
		x = &inspect.Extractor{Dir: opts.Extract, MaxRatio: opts.MaxExtractRatio}
	}
	inspectEach(opts.Files, opts.G.Jobs, limit, budget, func(name string, f *inspect.File, err error) {
		if fromDir[name] && errors.Is(err, inspect.ErrNoDeviceCode) {
			return // a host program without device code found in a directory
		}
		fd := inspectFileDoc{File: name, CodeObjects: []inspectCODoc{}}
		bad := err != nil
		if err != nil {
			err = withLimitHint(err)
			fd.Error = err.Error()
			reportFileError(env, ui, err)
		}
		if f != nil {
			fd.fill(f, opts)
			for _, w := range fd.warnings() {
				ui.Warnf("%s", printable(w, ""))
			}
			if x != nil {
				ex, err := x.Extract(f)
				fd.Extracted = ex.Paths
				for _, r := range ex.Renamed {
					ui.Warnf("extract: %s (the name was taken)", printable(r, ""))
				}
				if err != nil {
					bad = true
					err = fmt.Errorf("%s: %w", name, withRatioHint(err))
					fd.Error = strings.TrimPrefix(fd.Error+"; "+err.Error(), "; ")
					reportFileError(env, ui, err)
				}
			}
		}
		if bad {
			failed++
		}
		doc.Files = append(doc.Files, fd)
	})
	doc.Errors = failed
	if err := ui.Result("inspect", doc, func(w io.Writer, s *Styles) error { return doc.text(w, s, opts) }); err != nil {
		return err
	}
	if failed > 0 {
		return exitError{ExitFailure, fmt.Errorf("inspect: %d of %d files could not be read", failed, len(doc.Files))}
	}
	return nil
}

// expandInspectArgs replaces each directory argument (e.g. rocmk build's
// output directory) by the files under it that start like a code object,
// bundle or compressed bundle, in lexical order; other files are skipped.
func expandInspectArgs(args []string) ([]string, map[string]bool) {
	var out []string
	fromDir := map[string]bool{}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a)
			continue
		}
		n := len(out)
		_ = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if looksLikeDeviceCode(p) {
				out = append(out, p)
				fromDir[p] = true
			}
			return nil
		})
		if len(out) == n {
			out = append(out, a) // reported: "is a directory" with nothing to read
		}
	}
	return out, fromDir
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

// inspectEach parses the files (each at most limit bytes) on up to jobs
// goroutines and calls each with every result, in order, on the calling
// goroutine. At most jobs files are held at once, so memory follows the
// largest files, not their sum.
func inspectEach(names []string, jobs int, limit int64, b *inspect.Budget, each func(name string, f *inspect.File, err error)) {
	type result struct {
		f   *inspect.File
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
				f, err := openInspect(name, limit, b)
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

// withLimitHint says how to raise the decompression limit an error ran into.
func withLimitHint(err error) error {
	var le *inspect.DecompressLimitError
	if errors.As(err, &le) {
		return fmt.Errorf("%w; raise it with --max-decompress or ROCMK_MAX_DECOMPRESS", err)
	}
	return err
}

// withRatioHint says how to raise the extraction limit an error ran into.
func withRatioHint(err error) error {
	var le *inspect.ExtractLimitError
	if errors.As(err, &le) {
		return fmt.Errorf("%w; raise it with --max-extract-ratio", err)
	}
	return err
}

// maxLDSPerGroup is the most LDS a workgroup gets on any known target.
func maxLDSPerGroup() int {
	n := 0
	for _, p := range inspect.Processors() {
		n = max(n, p.MaxLDSPerGroup)
	}
	return n
}

// openInspect reads name, a regular file of at most limit bytes, and parses
// it drawing on b.
func openInspect(name string, limit int64, b *inspect.Budget) (*inspect.File, error) {
	data, err := readInput(name, limit)
	if err != nil {
		return nil, err
	}
	return inspect.ParseWith(name, data, b)
}

// reportFileError prints one file's error and lets the command go on (nm's policy).
func reportFileError(env Env, ui *UI, err error) {
	if ui.JSON {
		return // the error is in the document
	}
	fmt.Fprintln(env.Stderr, ui.ErrS.Err.Render("rocmk:")+" inspect: "+printable(err.Error(), "\n\t"))
}

// JSON document: rocmk.inspect/v1.
type inspectDoc struct {
	Files  []inspectFileDoc `json:"files"`
	Errors int              `json:"errors"`
}

type inspectFileDoc struct {
	File        string           `json:"file"`
	Kind        string           `json:"kind,omitempty"`
	Error       string           `json:"error,omitempty"`
	Notes       []string         `json:"notes,omitempty"`
	Bundles     []inspect.Bundle `json:"bundles,omitempty"`
	Images      []inspect.Image  `json:"images,omitempty"`
	CodeObjects []inspectCODoc   `json:"code_objects"`
	Extracted   []string         `json:"extracted,omitempty"`
}

type inspectCODoc struct {
	Location        string             `json:"location"`
	Container       string             `json:"container,omitempty"`
	Entry           string             `json:"entry,omitempty"`
	Offset          int64              `json:"offset"`
	Size            int64              `json:"size"`
	Target          string             `json:"target"`
	Processor       string             `json:"processor"`
	Mach            string             `json:"mach"`
	Flags           string             `json:"e_flags"`
	Version         int                `json:"code_object_version"`
	GenericVersion  int                `json:"generic_version,omitempty"`
	MetaTarget      string             `json:"metadata_target,omitempty"`
	MetadataVersion []int              `json:"metadata_version,omitempty"`
	ELFType         string             `json:"elf_type"`
	Kernels         []inspectKernelDoc `json:"kernels"`
	Symbols         []inspect.Symbol   `json:"symbols,omitempty"`
	Warnings        []string           `json:"warnings,omitempty"`
}

type inspectKernelDoc struct {
	inspect.Kernel
	Occupancy inspect.Occupancy `json:"occupancy"`
}

func (fd *inspectFileDoc) fill(f *inspect.File, opts inspectOptions) {
	fd.Kind, fd.Notes, fd.Bundles, fd.Images = f.Kind, f.Notes, f.Bundles, f.Images
	fd.CodeObjects = []inspectCODoc{}
	for _, co := range f.Objects {
		p := co.Target.Processor()
		cd := inspectCODoc{
			Location: co.Location(f.Name), Container: co.Container, Entry: co.Entry, Offset: co.Offset, Size: co.Size,
			Target: co.Target.String(), Processor: co.ProcessorName(), Mach: fmt.Sprintf("0x%02x", co.Mach),
			Flags: fmt.Sprintf("0x%x", co.Flags), Version: co.Version, GenericVersion: co.GenericVersion(),
			MetaTarget: co.MetaTarget, MetadataVersion: co.MetadataVersion, ELFType: co.Type,
			Kernels: []inspectKernelDoc{}, Warnings: co.Warnings,
		}
		if co.Target.Proc == "" {
			cd.Target = cd.Processor // unknown machine value: "mach 0x27"
		}
		for _, k := range co.Kernels {
			if !kernelMatches(k, opts.Kernels) {
				continue
			}
			cd.Kernels = append(cd.Kernels, inspectKernelDoc{Kernel: k, Occupancy: k.Occupancy(p, opts.Block, opts.LDS)})
		}
		if opts.Symbols {
			cd.Symbols = co.Symbols
		}
		fd.CodeObjects = append(fd.CodeObjects, cd)
	}
}

func (fd *inspectFileDoc) warnings() []string {
	var out []string
	for _, co := range fd.CodeObjects {
		for _, w := range co.Warnings {
			out = append(out, co.Location+": "+w)
		}
	}
	return out
}

// kernelMatches applies --kernel: a glob (path.Match) or a substring of the
// mangled or demangled name.
func kernelMatches(k inspect.Kernel, pats []string) bool {
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

func (doc inspectDoc) text(w io.Writer, s *Styles, opts inspectOptions) error {
	first := true
	for _, fd := range doc.Files {
		if fd.Kind == "" {
			continue
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		var b strings.Builder
		b.WriteString(s.Header.Render(printable(fd.File, "")) + ": " + fd.Kind)
		for _, bu := range fd.Bundles {
			if bu.Compressed != nil {
				c := bu.Compressed
				fmt.Fprintf(&b, " (CCOB v%d, %s, %d bytes uncompressed)", c.Version, c.Method, c.UncompressedSize)
			}
		}
		if n := len(fd.CodeObjects); n != 1 || fd.Kind != "code-object" {
			fmt.Fprintf(&b, ", %d code object%s", n, pluralS(n))
		}
		fmt.Fprintln(w, b.String())
		for _, n := range fd.Notes {
			fmt.Fprintln(w, s.Dim.Render("  note: "+printable(n, "")))
		}
		for _, im := range fd.Images {
			arch := im.Arch
			if arch == "" {
				arch = "?"
			}
			fmt.Fprintf(w, "  %s: %s for %s (%d bytes)\n", printable(im.Where, ""), im.Kind, printable(arch, ""), im.Size)
		}
		for _, co := range fd.CodeObjects {
			fmt.Fprintln(w)
			head := co.Target
			if co.Entry != "" || co.Container != "" {
				head += "  " + s.Dim.Render(printable(strings.TrimPrefix(co.Location, fd.File), ""))
			}
			fmt.Fprintf(w, "%s  %s\n", s.Target.Render(head), s.Dim.Render(fmt.Sprintf("code object v%d, e_flags %s", co.Version, co.Flags)))
			if co.Version == 2 {
				fmt.Fprintln(w, s.Dim.Render("  legacy code object v2: no kernel descriptors"))
			}
			if len(co.Kernels) == 0 {
				fmt.Fprintln(w, s.Dim.Render("  (no kernels)"))
			} else {
				if err := kernelTable(co.Kernels).Render(w, s); err != nil {
					return err
				}
			}
			if opts.Symbols {
				fmt.Fprintln(w, s.Dim.Render("  symbols:"))
				for _, sym := range co.Symbols {
					fmt.Fprintf(w, "  %016x %s %s\n", sym.Value, sym.Kind, printable(sym.Name, ""))
				}
			}
		}
		for _, p := range fd.Extracted {
			fmt.Fprintln(w, "  extracted "+printable(p, ""))
		}
	}
	return nil
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func kernelTable(ks []inspectKernelDoc) Table {
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

// --diff.

type inspectDiffDoc struct {
	Old         string               `json:"old"`
	New         string               `json:"new"`
	Kernels     []inspect.KernelDiff `json:"kernels"`
	Regressions []string             `json:"regressions"` // "target kernel: category"
	FailOn      []string             `json:"fail_on,omitempty"`
}

func runInspectDiff(opts inspectOptions, ui *UI, limit int64, b *inspect.Budget) error {
	var files [2]*inspect.File
	for i, name := range opts.Files {
		f, err := openInspect(name, limit, b)
		if err != nil {
			return withLimitHint(err)
		}
		files[i] = f
	}
	doc := inspectDiffDoc{Old: opts.Files[0], New: opts.Files[1], Kernels: []inspect.KernelDiff{}, Regressions: []string{}}
	for _, c := range inspect.FailOnCategories {
		if opts.FailOn[c] {
			doc.FailOn = append(doc.FailOn, c)
		}
	}
	var failing []string
	for _, d := range inspect.Diff(files[0], files[1], opts.Block, opts.LDS) {
		if len(opts.Kernels) > 0 && !kernelMatches(inspect.Kernel{Name: d.Kernel, Demangled: d.Display}, opts.Kernels) {
			continue
		}
		doc.Kernels = append(doc.Kernels, d)
		for _, r := range d.Regressions() {
			item := fmt.Sprintf("%s %s: %s", d.Target, displayOf(d), r)
			doc.Regressions = append(doc.Regressions, item)
			if opts.FailOn[r] {
				failing = append(failing, item)
			}
		}
	}
	if err := ui.Result("inspect.diff", doc, doc.text); err != nil {
		return err
	}
	if len(failing) > 0 {
		return exitError{ExitFailure, fmt.Errorf("inspect: %d regression%s (--fail-on %s): %s", len(failing), pluralS(len(failing)), strings.Join(doc.FailOn, ","), strings.Join(failing, "; "))}
	}
	return nil
}

func displayOf(d inspect.KernelDiff) string {
	if d.Display != "" {
		return d.Display
	}
	return d.Kernel
}

func (doc inspectDiffDoc) text(w io.Writer, s *Styles) error {
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
		t.Rows = append(t.Rows, []string{d.Target, displayOf(d), d.Status, strings.Join(parts, ", ")})
	}
	t.Style = func(col int, row []string) *lipgloss.Style {
		if col == 3 && strings.Contains(row[3], "(worse)") || col == 2 && row[2] == "removed" {
			return &s.Warn
		}
		return nil
	}
	fmt.Fprintf(w, "%s -> %s\n", printable(doc.Old, ""), printable(doc.New, ""))
	if len(t.Rows) > 0 {
		if err := t.Render(w, s); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d kernel%s compared: %d unchanged, %d changed or added/removed, %d regression%s\n",
		len(doc.Kernels), pluralS(len(doc.Kernels)), same, len(doc.Kernels)-same, len(doc.Regressions), pluralS(len(doc.Regressions)))
	return nil
}
