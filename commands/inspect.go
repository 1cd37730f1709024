package commands

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"strings"

	"github.com/rocmk/rocmk/commands/term"

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
times each file's input (its size plus its decompressed bytes). --extract only creates new files:
a file, link or pipe already in DIR under an entry's name is kept (never replaced or followed)
and the entry is written as NAME.1.co, NAME.2.co..., with a warning.

Unreadable files are reported (file, offset, field) and skipped; the exit status is then 1.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "kernel", Aliases: []string{"k"}, Usage: "only kernels matching `PATTERN` (glob or substring of the mangled or demangled name; repeatable)"},
			&cli.BoolFlag{Name: "symbols", Usage: "also list the ELF symbols of each code object, nm style"},
			&cli.IntFlag{Name: "block", Usage: "workgroup size `N` (1-1024) for occupancy", DefaultText: "each kernel's max workgroup size"},
			&cli.IntFlag{Name: "lds", Usage: "dynamic LDS `BYTES` per workgroup added to the static LDS for occupancy"},
			&cli.BoolFlag{Name: "diff", Usage: "compare two builds: rocmk inspect --diff OLD NEW"},
			&cli.StringFlag{Name: "fail-on", Usage: "with --diff, exit 1 on a regression in `CATEGORIES` (spills,occupancy,vgpr,sgpr,lds,scratch,removed,all)"},
			&cli.StringFlag{Name: "extract", Usage: "write each code object and device image into `DIR`, one new file each (what is there is kept)"},
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
	if err := checkInspectOptions(opts); err != nil {
		return err
	}
	budget := inspect.NewBudget(opts.MaxDecompress)
	limit, err := inputLimit(env, inspect.MaxFileSize)
	if err != nil {
		return err
	}
	read := func(name string) ([]byte, error) { return readInput(name, limit) }
	ro := inspect.ReportOptions{Kernels: opts.Kernels, Symbols: opts.Symbols, Block: opts.Block, LDS: opts.LDS}
	if opts.Diff {
		return runInspectDiff(opts, ui, ro, read, budget)
	}
	// A short-lived batch: trade memory for fewer GC cycles while parsing.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	doc := inspect.Report{Files: []inspect.FileReport{}}
	files, fromDir := inspect.ExpandArgs(opts.Files)
	var x *inspect.Extractor
	if opts.Extract != "" {
		x = &inspect.Extractor{Dir: opts.Extract, MaxRatio: opts.MaxExtractRatio}
	}
	inspect.Each(files, opts.G.Jobs, read, budget, func(name string, f *inspect.File, err error) {
		if fromDir[name] && errors.Is(err, inspect.ErrNoDeviceCode) {
			return // a host program without device code found in a directory
		}
		fr := inspect.FileReport{File: name, CodeObjects: []inspect.ObjectReport{}}
		if f != nil {
			fr = inspect.NewFileReport(name, f, ro)
		}
		if err != nil {
			fr.Error = withLimitHint(err).Error()
			reportFileError(ui, withLimitHint(err))
		}
		for _, w := range fr.Warnings() {
			ui.Warnf("%s", term.Printable(w, ""))
		}
		if f != nil && x != nil {
			ex, xerr := x.Extract(f)
			fr.Extracted = ex.Paths
			for _, r := range ex.Renamed {
				ui.Warnf("extract: %s (the name was taken)", term.Printable(r, ""))
			}
			if xerr != nil {
				xerr = fmt.Errorf("%s: %w", name, withLimitHint(xerr))
				fr.Error = strings.TrimPrefix(fr.Error+"; "+xerr.Error(), "; ")
				reportFileError(ui, xerr)
			}
		}
		if fr.Error != "" {
			doc.Errors++
		}
		doc.Files = append(doc.Files, fr)
	})
	if err := ui.Result("inspect", doc, func(w io.Writer, s *term.Styles) error { return term.Inspect(w, s, doc, opts.Symbols) }); err != nil {
		return err
	}
	if doc.Errors > 0 {
		return exitError{ExitFailure, fmt.Errorf("inspect: %d of %d files could not be read", doc.Errors, len(doc.Files))}
	}
	return nil
}

// checkInspectOptions refuses flags out of range (exit 2).
func checkInspectOptions(opts inspectOptions) error {
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
	return nil
}

// withLimitHint says how to raise the limit an error ran into.
func withLimitHint(err error) error {
	var de *inspect.DecompressLimitError
	var xe *inspect.ExtractLimitError
	switch {
	case errors.As(err, &de):
		return fmt.Errorf("%w; raise it with --max-decompress or ROCMK_MAX_DECOMPRESS", err)
	case errors.As(err, &xe):
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

// reportFileError prints one file's error and lets the command go on (nm's policy).
func reportFileError(ui *term.UI, err error) {
	if !ui.JSON { // otherwise the error is in the document
		ui.Println(ui.Err, ui.ErrS.Err.Render("rocmk:")+" inspect: "+term.Printable(err.Error(), "\n\t"))
	}
}

// --diff.

func runInspectDiff(opts inspectOptions, ui *term.UI, ro inspect.ReportOptions, read func(string) ([]byte, error), b *inspect.Budget) error {
	var files [2]*inspect.File
	for i, name := range opts.Files {
		data, err := read(name)
		if err == nil {
			files[i], err = inspect.ParseWith(name, data, b)
		}
		if err != nil {
			return withLimitHint(err)
		}
	}
	doc, failing := inspect.NewDiffReport(opts.Files[0], opts.Files[1], files[0], files[1], ro, opts.FailOn)
	if err := ui.Result("inspect.diff", doc, func(w io.Writer, s *term.Styles) error { return term.InspectDiff(w, s, doc) }); err != nil {
		return err
	}
	if len(failing) > 0 {
		return exitError{ExitFailure, fmt.Errorf("inspect: %d regression%s (--fail-on %s): %s", len(failing), term.Plural(len(failing), "", "s"), strings.Join(doc.FailOn, ","), strings.Join(failing, "; "))}
	}
	return nil
}
