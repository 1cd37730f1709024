package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/kernels/cuda"
)

// defaultHIPVersion is the HIP version assumed when --hip-version is not
// given and no ROCm toolchain is found: the version HIPIFY's tables describe.
var defaultHIPVersion = hipify.Version{Major: 6, Minor: 3}

type hipifyOptions struct {
	Inputs         []string
	Output         string // -o FILE or DIR
	InPlace        bool
	Backup         string // backup suffix for --in-place ("" = none)
	Diff           bool
	Check          bool
	NoOutput       bool
	Stats          bool
	Sample         bool
	QuietWarnings  bool
	Rename         map[string]string // extension renames in tree mode: ".cu" -> ".hip"
	HIPVersion     string
	Translate      hipify.Options
	G              globalOptions
	FindToolchain  func() (string, error) // HIP version of the discovered toolchain
	hipVersionFrom string
	maxInput       int64 // size limit of each input (see inputLimit)
}

func hipifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "hipify",
		Usage:     "translate CUDA sources to HIP (token-aware; no CUDA or LLVM needed)",
		ArgsUsage: "[FILE|DIR|-]...",
		Description: `Translates CUDA C++ to HIP using HIPIFY's CUDA-to-HIP tables: runtime, driver,
device functions, RTC, cuComplex, cuBLAS, cuRAND, cuFFT, cuSPARSE, cuSOLVER, cuDNN, CUB.
Comments are never changed; string literals only have whole CUDA API names renamed.
Unsupported APIs and porting hazards (warp size 32, dropped *_sync masks, fp16/bf16 types,
inline PTX, texture references) are reported as file:line:col diagnostics on stderr.

One FILE prints to stdout (or -o FILE). A DIR (or several inputs) needs -o DIR (the tree
is mirrored, files processed in parallel with -j) or --in-place. --diff prints a unified
diff; --check exits 1 when anything would change or an unsupported API remains.
hipify-clang's and hipify-perl's option names are accepted (-roc, -inplace, -o=FILE ...).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Aliases: []string{"o-dir"}, Usage: "output file, or directory for several inputs / a tree"},
			&cli.BoolFlag{Name: "in-place", Usage: "rewrite the inputs atomically (temp file + rename)"},
			&cli.BoolFlag{Name: "inplace", Usage: "hipify-clang/perl spelling of --in-place; keeps a .prehip backup"},
			&cli.StringFlag{Name: "backup", Usage: "with --in-place, keep the original as FILE`SUFFIX` (e.g. .orig)"},
			&cli.BoolFlag{Name: "diff", Usage: "print a unified diff instead of the translation"},
			&cli.BoolFlag{Name: "check", Usage: "write nothing; exit 1 if a file would change or has unsupported APIs (for CI)"},
			&cli.BoolFlag{Name: "stats", Aliases: []string{"print-stats"}, Usage: "print per-file and total statistics"},
			&cli.BoolFlag{Name: "no-output", Usage: "translate and report, write nothing (hipify-perl -no-output)"},
			&cli.BoolFlag{Name: "examine", Usage: "hipify-perl: --no-output --stats"},
			&cli.BoolFlag{Name: "quiet-warnings", Usage: "do not print hazards and unsupported-API warnings"},
			&cli.BoolFlag{Name: "sample", Usage: "translate rocmk's bundled CUDA sample instead of files"},
			&cli.StringSliceFlag{Name: "rename", Usage: "in tree mode, rename extensions: `.cu=.hip` (repeatable)"},
			&cli.StringFlag{Name: "hip-version", Usage: "HIP version `X.Y` the output must build with (default: the discovered toolchain's)"},
			&cli.BoolFlag{Name: "hip-kernel-execution-syntax", Usage: "rewrite k<<<...>>>(...) to hipLaunchKernelGGL(...)"},
			&cli.BoolFlag{Name: "cuda-kernel-execution-syntax", Usage: "keep <<<...>>> launches (the default)"},
			&cli.BoolFlag{Name: "roc", Usage: "translate to roc* libraries (rocBLAS, rocSPARSE, rocRAND, rocSOLVER) where possible"},
			&cli.BoolFlag{Name: "miopen", Usage: "translate cuDNN to MIOpen"},
			&cli.BoolFlag{Name: "experimental", Usage: "also translate APIs HIP marks experimental"},
			&cli.BoolFlag{Name: "amap", Usage: "hipify as much as possible (every preprocessor branch)"},
			&cli.BoolFlag{Name: "skip-excluded-preprocessor-conditional-blocks", Usage: "leave #if branches that are inactive under -D alone"},
			&cli.BoolFlag{Name: "default-preprocessor", Usage: "hipify-clang: same as --skip-excluded-preprocessor-conditional-blocks"},
			&cli.BoolFlag{Name: "use-hip-data-types", Usage: "keep cudaDataType/CUDA_R_* as hipDataType/HIP_R_* under --roc"},
			&cli.StringSliceFlag{Name: "D", Usage: "define `NAME[=VALUE]` for #if evaluation (repeatable)"},
			&cli.BoolFlag{Name: "no-hazards", Usage: "skip the porting-hazard analysis"},
			&cli.StringFlag{Name: "cuda-macros", Value: "map", Usage: "CUDA's guard, version and __CUDA_ARCH__ macros in #if: `map` them to what holds under HIP, or keep them (reported either way)"},
			&cli.StringFlag{Name: "cuda-arch", Value: "sm_80", Usage: "the CUDA `arch` HIP device code is taken to have when mapping __CUDA_ARCH__ tests"},
			&cli.StringFlag{Name: "cuda-version", Value: "12.0", Usage: "the CUDA `X.Y` that CUDART_VERSION, __CUDACC_VER_MAJOR__... tests are evaluated as"},
			&cli.BoolFlag{Name: "no-compat", Usage: "never use rocmk_hip_compat.h: report what the target HIP lacks as unsupported"},
		},
		Action: func(c *cli.Context) error {
			opts, err := hipifyOptionsFrom(c)
			if err != nil {
				return err
			}
			return runHipify(c.Context, opts, envOf(c))
		},
	}
}

func hipifyOptionsFrom(c *cli.Context) (hipifyOptions, error) {
	o := hipifyOptions{
		Inputs: c.Args().Slice(), Output: c.String("o"), InPlace: c.Bool("in-place") || c.Bool("inplace"),
		Backup: c.String("backup"), Diff: c.Bool("diff"), Check: c.Bool("check"),
		Stats: c.Bool("stats") || c.Bool("examine"), NoOutput: c.Bool("no-output") || c.Bool("examine"),
		Sample: c.Bool("sample"), QuietWarnings: c.Bool("quiet-warnings"), HIPVersion: c.String("hip-version"),
		G: globals(c), Rename: map[string]string{},
	}
	if c.Bool("inplace") && o.Backup == "" {
		o.Backup = ".prehip"
	}
	o.Translate = hipify.Options{
		KernelExecutionSyntax: c.Bool("hip-kernel-execution-syntax"), Roc: c.Bool("roc"), MIOpen: c.Bool("miopen"),
		Experimental: c.Bool("experimental"), Amap: c.Bool("amap"),
		SkipExcluded:    c.Bool("skip-excluded-preprocessor-conditional-blocks"),
		UseHIPDataTypes: c.Bool("use-hip-data-types"), DefaultPreprocessor: c.Bool("default-preprocessor"),
		NoHazards: c.Bool("no-hazards"), Defines: map[string]string{},
	}
	var ok bool
	if o.Translate.CUDAMacros, ok = hipify.ParseMacroPolicy(c.String("cuda-macros")); !ok {
		return o, usagef("--cuda-macros %q: want map or keep", c.String("cuda-macros"))
	}
	if o.Translate.CUDAArch, ok = hipify.ParseCUDAArch(c.String("cuda-arch")); !ok {
		return o, usagef("--cuda-arch %q: want sm_XY (e.g. sm_80) or the __CUDA_ARCH__ value (800)", c.String("cuda-arch"))
	}
	if o.Translate.CUDAVersion, ok = hipify.ParseVersion(c.String("cuda-version")); !ok {
		return o, usagef("--cuda-version %q: want X.Y (e.g. 12.0)", c.String("cuda-version"))
	}
	o.Translate.NoCompat = c.Bool("no-compat")
	for _, d := range c.StringSlice("D") {
		k, v, ok := strings.Cut(d, "=")
		if !ok {
			v = "1"
		}
		if k == "" {
			return o, usagef("-D %q: want NAME or NAME=VALUE", d)
		}
		o.Translate.Defines[k] = v
	}
	for _, r := range c.StringSlice("rename") {
		from, to, ok := strings.Cut(r, "=")
		if !ok || !strings.HasPrefix(from, ".") || !strings.HasPrefix(to, ".") {
			return o, usagef("--rename %q: want .FROM=.TO, e.g. .cu=.hip", r)
		}
		o.Rename[from] = to
	}
	return o, nil
}

// hipifyJob is one file to translate.
type hipifyJob struct {
	name string // as shown in diagnostics
	src  string // path to read ("" for an embedded sample or stdin)
	data []byte // content, when src is ""
	dst  string // path to write ("" = stdout, unless --check/--diff/--no-output)
	rel  string // path relative to the input root, for the tree
	// compatDir is where rocmk_hip_compat.h goes when the translation needs
	// it: the root of the output tree ("": beside the output file)
	compatDir string
}

type hipifyResult struct {
	job    hipifyJob
	out    []byte
	in     []byte
	parity *hipify.Parity // --stats: the kernels of the CUDA source and of its translation
	rep    *hipify.Report
	err    error
	wrote  bool
	backup string
}

// hipifyDoc is the --json document.
type hipifyDoc struct {
	HIPVersion string         `json:"hip_version"`
	Files      []hipifyFile   `json:"files"`
	Total      hipifyTotal    `json:"total"`
	Options    hipify.Options `json:"-"`
}

type hipifyFile struct {
	*hipify.Report
	Output  string         `json:"output_path,omitempty"`
	Error   string         `json:"error,omitempty"`
	Content string         `json:"content,omitempty"`
	Kernels *hipify.Parity `json:"kernels,omitempty"`
}

type hipifyTotal struct {
	Files        int            `json:"files"`
	Changed      int            `json:"changed"`
	Failed       int            `json:"failed"`
	Lines        int            `json:"lines"`
	Replacements int            `json:"replacements"`
	Replaced     map[string]int `json:"replaced"`
	Unsupported  int            `json:"unsupported"`
	Hazards      int            `json:"hazards"`
	Seconds      float64        `json:"seconds"`
	LinesPerSec  float64        `json:"lines_per_second"`
}

func runHipify(ctx context.Context, o hipifyOptions, env Env) error {
	ui := newUI(env, o.G)
	hipify.Entries() // load the tables outside the per-file timings
	if err := resolveHIPVersion(&o, env); err != nil {
		return err
	}
	ui.Verbosef(1, "hipify: target HIP %s (%s)", o.Translate.HIPVersion, o.hipVersionFrom)
	var err error
	if o.maxInput, err = inputLimit(env, maxSourceSize); err != nil {
		return err
	}
	jobs, err := planHipify(o, env)
	if err != nil {
		return err
	}
	if err := checkOutputs(jobs, o.InPlace, o.Backup); err != nil {
		return err
	}
	start := time.Now()
	results := make([]hipifyResult, len(jobs))
	workers := max(1, o.G.Jobs)
	if len(jobs) < workers {
		workers = len(jobs)
	}
	var bar Progress = nopProgress{}
	if len(jobs) > 1 {
		bar = ui.NewProgress(len(jobs), "hipify")
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = hipifyOne(o, jobs[i], env)
				bar.Add(1)
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	bar.Finish()
	if err := ctx.Err(); err != nil {
		return err
	}
	writeCompatHeaders(results)
	elapsed := time.Since(start)
	return reportHipify(ui, o, results, elapsed, env)
}

// resolveHIPVersion fills Translate.HIPVersion from --hip-version, the
// discovered toolchain, or the default.
func resolveHIPVersion(o *hipifyOptions, env Env) error {
	if o.HIPVersion != "" {
		v, ok := hipify.ParseVersion(o.HIPVersion)
		if !ok {
			return usagef("--hip-version %q: want X.Y (e.g. 6.2)", o.HIPVersion)
		}
		o.Translate.HIPVersion = v
		o.hipVersionFrom = "--hip-version"
		return nil
	}
	find := o.FindToolchain
	if find == nil {
		find = func() (string, error) {
			// no programs run: the version comes from hip_version.h, so this stays cheap
			in, err := compile.FindInstallation(compile.FindOptions{Getenv: env.Getenv, Run: noExec{}})
			if err != nil {
				return "", err
			}
			return in.HIPVersion, nil
		}
	}
	if s, err := find(); err == nil && s != "" {
		parts := strings.SplitN(s, ".", 3)
		if len(parts) >= 2 {
			if v, ok := hipify.ParseVersion(parts[0] + "." + parts[1]); ok {
				o.Translate.HIPVersion = v
				o.hipVersionFrom = "discovered toolchain"
				return nil
			}
		}
	}
	o.Translate.HIPVersion = defaultHIPVersion
	o.hipVersionFrom = "default: no ROCm toolchain found"
	return nil
}

// noExec is the Runner of hipify's toolchain discovery: it runs nothing.
type noExec struct{}

func (noExec) Run(context.Context, compile.Cmd) (compile.Output, error) {
	return compile.Output{}, errors.New("hipify does not run programs")
}

var cudaExts = map[string]bool{".cu": true, ".cuh": true, ".c": true, ".cc": true, ".cpp": true, ".cxx": true,
	".h": true, ".hh": true, ".hpp": true, ".hxx": true, ".inl": true, ".inc": true}

func planHipify(o hipifyOptions, env Env) ([]hipifyJob, error) {
	writes := !o.Check && !o.Diff && !o.NoOutput && !o.G.JSON || o.G.JSON && (o.Output != "" || o.InPlace)
	if o.InPlace && o.Output != "" {
		return nil, usagef("--in-place and -o are exclusive")
	}
	if o.Sample {
		if len(o.Inputs) > 0 {
			return nil, usagef("--sample takes no file arguments")
		}
		if o.InPlace {
			return nil, usagef("--sample cannot be translated --in-place")
		}
		samples := cuda.Samples()
		names := make([]string, 0, len(samples))
		for n := range samples {
			names = append(names, n)
		}
		sort.Strings(names)
		var jobs []hipifyJob
		for _, n := range names {
			j := hipifyJob{name: n, data: samples[n], rel: n}
			if o.Output != "" && writes {
				j.dst = filepath.Join(o.Output, renameExt(n, o.Rename, ".hip"))
			}
			jobs = append(jobs, j)
		}
		return jobs, nil
	}
	if len(o.Inputs) == 0 {
		return nil, usagef("no input: give CUDA files, a directory, - for stdin, or --sample")
	}
	type in struct {
		path string
		dir  bool
	}
	var ins []in
	for _, p := range o.Inputs {
		if p == "-" {
			ins = append(ins, in{path: p})
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		ins = append(ins, in{p, fi.IsDir()})
	}
	tree := len(ins) > 1 || ins[0].dir
	if tree && writes && !o.InPlace && o.Output == "" {
		return nil, usagef("several inputs or a directory need -o DIR, --in-place, --diff or --check")
	}
	var jobs []hipifyJob
	for _, x := range ins {
		switch {
		case x.path == "-":
			data, err := safefile.ReadAll("<stdin>", env.Stdin, o.maxInput)
			if err != nil {
				return nil, inputHint(err)
			}
			j := hipifyJob{name: "<stdin>", data: data, rel: "stdin.hip"}
			if writes && o.Output != "" {
				j.dst = o.Output
			}
			jobs = append(jobs, j)
		case x.dir:
			err := filepath.WalkDir(x.path, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() {
					if p != x.path && strings.HasPrefix(d.Name(), ".") {
						return filepath.SkipDir
					}
					return nil
				}
				if !d.Type().IsRegular() || !cudaExts[strings.ToLower(filepath.Ext(p))] {
					return nil
				}
				rel, _ := filepath.Rel(x.path, p)
				j := hipifyJob{name: p, src: p, rel: rel}
				if writes {
					if o.InPlace {
						j.dst, j.compatDir = p, x.path
					} else {
						j.dst, j.compatDir = filepath.Join(o.Output, renameExt(rel, o.Rename, "")), o.Output
					}
				}
				jobs = append(jobs, j)
				return nil
			})
			if err != nil {
				return nil, err
			}
		default:
			j := hipifyJob{name: x.path, src: x.path, rel: filepath.Base(x.path)}
			if writes {
				switch {
				case o.InPlace:
					j.dst = x.path
				case o.Output != "" && tree:
					j.dst = filepath.Join(o.Output, renameExt(filepath.Base(x.path), o.Rename, ""))
				case o.Output != "":
					j.dst = o.Output
					if fi, err := os.Stat(o.Output); err == nil && fi.IsDir() {
						j.dst = filepath.Join(o.Output, renameExt(filepath.Base(x.path), o.Rename, ""))
					}
				}
			}
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// renameExt applies the --rename map to a path's extension; def is used for
// ".cu" when the map does not say (sample mode writes .hip).
func renameExt(p string, m map[string]string, def string) string {
	ext := filepath.Ext(p)
	if to, ok := m[ext]; ok {
		return strings.TrimSuffix(p, ext) + to
	}
	if def != "" && ext == ".cu" {
		return strings.TrimSuffix(p, ext) + def
	}
	return p
}

func hipifyOne(o hipifyOptions, j hipifyJob, env Env) hipifyResult {
	r := hipifyResult{job: j}
	src := j.data
	var mode fs.FileMode = 0o644
	if j.src != "" {
		fi, err := os.Stat(j.src)
		if err != nil {
			r.err = err
			return r
		}
		mode = fi.Mode().Perm()
		if src, err = readInput(j.src, o.maxInput); err != nil {
			r.err = err
			return r
		}
	}
	r.in = src
	out, rep, err := hipify.Translate(j.name, src, compatOptions(o, j))
	r.out, r.rep, r.err = out, rep, err
	if err == nil && o.Stats {
		p := hipify.CheckParity(j.name, src, out, o.Translate, nil)
		r.parity = &p
	}
	if err != nil || j.dst == "" {
		return r
	}
	if r.err = checkCompatPath(j, rep); r.err != nil {
		return r
	}
	if o.InPlace {
		if !rep.Changed {
			return r
		}
		if err := safefile.CheckWritable(j.src); err != nil {
			r.err = err
			return r
		}
		if o.Backup != "" {
			r.backup = j.src + o.Backup
			if err := safefile.Write(r.backup, src, safefile.Options{Perm: mode, Sync: true}); err != nil {
				r.err = err
				return r
			}
		}
	}
	// In place, the old content must survive a crash: sync before the rename.
	if err := safefile.Write(j.dst, out, safefile.Options{Perm: mode, Sync: o.InPlace}); err != nil {
		r.err = err
		return r
	}
	r.wrote = true
	return r
}

// checkOutputs refuses, before any file is translated or written, a plan that
// would lose a file: two jobs writing one file (a/k.cu and b/k.cu into one
// -o DIR, k.cuh renamed onto k.cu), or a job writing over an input (-o naming
// an input, a hard or symbolic link to one, a backup name that is an input)
// other than its own source with --in-place. Files are compared by device
// and inode when they exist, else by their path with symbolic links
// resolved. (Names differing only in case are different files on Linux.)
func checkOutputs(jobs []hipifyJob, inPlace bool, backup string) error {
	ids := fileKeys{}
	inputs := map[string]bool{}
	for _, j := range jobs {
		if j.src != "" {
			inputs[ids.key(j.src)] = true
		}
	}
	written := map[string]string{} // file key -> the input written there
	var conflicts []string
	hint := ""
	claim := func(j hipifyJob, dst, what string) {
		k := ids.key(dst)
		if prev, ok := written[k]; ok {
			conflicts = append(conflicts, fmt.Sprintf("%s and %s%s would both be written to %s", prev, what, j.name, dst))
			return
		}
		written[k] = what + j.name
		ownSource := inPlace && what == "" && j.src != "" && ids.key(j.src) == k
		if inputs[k] && !ownSource {
			conflicts = append(conflicts, fmt.Sprintf("%s%s would be written to %s, which is also an input", what, j.name, dst))
			if !inPlace {
				hint = " (--in-place rewrites sources)"
			}
		}
	}
	for _, j := range jobs {
		if j.dst == "" {
			continue
		}
		claim(j, j.dst, "")
		if inPlace && backup != "" {
			claim(j, j.src+backup, "the backup of ")
		}
	}
	if len(conflicts) == 0 {
		return nil
	}
	if len(conflicts) == 1 {
		return usagef("hipify: %s; nothing written%s", conflicts[0], hint)
	}
	const show = 10
	more := ""
	if len(conflicts) > show {
		more = fmt.Sprintf("\n  and %d more", len(conflicts)-show)
		conflicts = conflicts[:show]
	}
	return usagef("hipify: nothing written%s:\n  %s%s", hint, strings.Join(conflicts, "\n  "), more)
}

// fileKeys names files for checkOutputs: "id DEV INO" for a file that
// exists, else "path P" with the symbolic links of P's directories resolved
// (remembered per directory: a tree has many files per directory).
type fileKeys map[string]string

func (m fileKeys) key(p string) string {
	if fi, err := os.Stat(p); err == nil {
		if id, ok := safefile.IDOf(fi); ok {
			return fmt.Sprintf("id %d %d", id.Dev, id.Ino)
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "path " + p
	}
	return "path " + filepath.Join(m.dir(filepath.Dir(abs)), filepath.Base(abs))
}

// dir resolves the symbolic links of an absolute directory name, as far as
// it exists.
func (m fileKeys) dir(d string) string {
	if r, ok := m[d]; ok {
		return r
	}
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		parent := filepath.Dir(d)
		r = d
		if parent != d {
			r = filepath.Join(m.dir(parent), filepath.Base(d))
		}
	}
	m[d] = r
	return r
}

func reportHipify(ui *UI, o hipifyOptions, results []hipifyResult, elapsed time.Duration, env Env) error {
	doc := hipifyDoc{HIPVersion: o.Translate.HIPVersion.String(), Total: hipifyTotal{Replaced: map[string]int{}}}
	var failed []error
	var changed []string
	var stdout bytes.Buffer
	for _, r := range results {
		f := hipifyFile{Report: r.rep, Kernels: r.parity}
		doc.Total.Files++
		if r.err != nil {
			doc.Total.Failed++
			f.Error = r.err.Error()
			failed = append(failed, r.err)
			ui.println(ui.Err, ui.ErrS.Err.Render("error:")+" "+r.err.Error())
			doc.Files = append(doc.Files, f)
			continue
		}
		rep := r.rep
		if r.wrote {
			f.Output = r.job.dst
		}
		doc.Total.Lines += rep.Lines
		doc.Total.Replacements += rep.Replacements()
		for k, v := range rep.Replaced {
			doc.Total.Replaced[k] += v
		}
		doc.Total.Unsupported += len(rep.Unsupported)
		doc.Total.Hazards += len(rep.Hazards)
		if rep.Changed {
			doc.Total.Changed++
		}
		if rep.Changed || len(rep.Unsupported) > 0 {
			changed = append(changed, r.job.name)
		}
		if !o.QuietWarnings && !ui.Quiet {
			for _, d := range rep.Unsupported {
				ui.println(ui.Err, d.Where+": "+ui.ErrS.Warn.Render("unsupported:")+" "+d.Msg)
			}
			for _, d := range rep.Hazards {
				ui.println(ui.Err, d.Where+": "+ui.ErrS.Warn.Render("hazard:")+" ["+d.Code+"] "+d.Msg)
			}
			for _, d := range rep.Conditionals {
				ui.println(ui.Err, d.Where+": conditional: ["+d.Code+"] "+d.Msg)
			}
		}
		switch {
		case o.Diff:
			if rep.Changed {
				name := strings.TrimPrefix(filepath.ToSlash(r.job.name), "/")
				stdout.WriteString(unifiedDiff("a/"+name, "b/"+name, string(r.in), string(r.out)))
			}
		case o.Check || o.NoOutput:
		case r.job.dst == "" && !ui.JSON:
			stdout.Write(r.out)
		case r.job.dst == "" && ui.JSON:
			f.Content = string(r.out)
		}
		doc.Files = append(doc.Files, f)
	}
	doc.Total.Seconds = elapsed.Seconds()
	if elapsed > 0 {
		doc.Total.LinesPerSec = float64(doc.Total.Lines) / elapsed.Seconds()
	}
	if o.Check && !ui.JSON {
		for _, n := range changed {
			stdout.WriteString(n + "\n")
		}
	}
	if !ui.JSON {
		if _, err := ui.Out.Write(stdout.Bytes()); err != nil {
			return err
		}
	}
	statsOut := ui.Out
	if stdout.Len() > 0 && !o.Check { // translation or diff on stdout: keep it clean
		statsOut = ui.Err
	}
	err := ui.Result("hipify", doc, func(_ io.Writer, s *Styles) error {
		if !o.Stats {
			return nil
		}
		t, missing := hipifyStatsTable(doc)
		if err := t.Render(statsOut, s); err != nil {
			return err
		}
		for _, m := range missing {
			if _, err := fmt.Fprintln(statsOut, "missing: "+m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case len(failed) == 1:
		return failed[0]
	case len(failed) > 1:
		return fmt.Errorf("%d of %d files failed (first: %w)", len(failed), len(results), failed[0])
	case o.Check && len(changed) > 0:
		if !ui.JSON {
			ui.Infof("%d of %d files need hipify (changes or unsupported APIs)", len(changed), len(results))
		}
		return exitError{ExitFailure, errSilent}
	}
	if !o.Stats && !ui.JSON && len(results) > 1 {
		ui.Infof("hipify: %d files, %d lines, %d replacements, %d unsupported, %d hazards in %s",
			doc.Total.Files, doc.Total.Lines, doc.Total.Replacements, doc.Total.Unsupported, doc.Total.Hazards, elapsed.Round(time.Millisecond))
	}
	return nil
}

// hipifyStatsTable is the --stats table, and the kernels HIP would miss.
func hipifyStatsTable(doc hipifyDoc) (Table, []string) {
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
