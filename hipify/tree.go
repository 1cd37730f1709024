package hipify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rocmk/rocmk/cache/safefile"
)

// Tree mode: `rocmk hipify` over files, directories, standard input or the
// bundled samples, translated in parallel and written atomically.

// TreeOptions say what to translate and where the translations go.
type TreeOptions struct {
	Inputs  []string          // files, directories (walked), "-" for standard input
	Samples map[string][]byte // instead of Inputs: sources by name (--sample)
	Output  string            // -o: a file, or a directory for several inputs or a tree
	InPlace bool              // rewrite the inputs
	Backup  string            // with InPlace: keep each original as FILE+Backup
	Rename  map[string]string // extension renames in tree mode: ".cu" -> ".hip"
	// Write writes the translations (without it, as for --check, --diff
	// and --no-output, nothing is written). Show: the translations not
	// written are shown whole (stdout, --json), so they inline the compat
	// header.
	Write, Show bool
	Translate   Options
	Parity      bool // also check kernel parity (--stats)
	// Read reads an input file and ReadStdin standard input, within the
	// caller's size limits.
	Read      func(name string) ([]byte, error)
	ReadStdin func() ([]byte, error)
	Jobs      int // parallel translations
}

// Job is one file to translate.
type Job struct {
	Name string // as shown in diagnostics
	Src  string // the path read ("" for a sample or standard input)
	Data []byte // the content, when Src is ""
	Dst  string // the path written ("": none)
	Rel  string // the path under its input directory
	// CompatDir is where rocmk_hip_compat.h goes when the translation needs
	// it: the root of the output tree ("": beside the output file).
	CompatDir string
}

// Result is one job's outcome.
type Result struct {
	Job
	In, Out []byte
	Report  *Report
	Parity  *Parity // with TreeOptions.Parity: the kernels of the source and of its translation
	Err     error
	Wrote   bool
	Backup  string // the backup written in place
}

// NeedsHipify reports what --check reports: a translation that changes
// the file or leaves an unsupported API.
func (r Result) NeedsHipify() bool {
	return r.Report != nil && (r.Report.Changed || len(r.Report.Unsupported) > 0)
}

// usagef reports a plan that the flags make impossible (exit status 2).
func usagef(format string, a ...any) error { return safefile.Usagef(format, a...) }

// ParseDefines reads -D values: NAME or NAME=VALUE (NAME alone is 1).
func ParseDefines(list []string) (map[string]string, error) {
	m := map[string]string{}
	for _, d := range list {
		k, v, ok := strings.Cut(d, "=")
		if !ok {
			v = "1"
		}
		if k == "" {
			return nil, fmt.Errorf("%q: want NAME or NAME=VALUE", d)
		}
		m[k] = v
	}
	return m, nil
}

// ParseRenames reads --rename values: .FROM=.TO extension renames.
func ParseRenames(list []string) (map[string]string, error) {
	m := map[string]string{}
	for _, r := range list {
		from, to, ok := strings.Cut(r, "=")
		if !ok || !strings.HasPrefix(from, ".") || !strings.HasPrefix(to, ".") {
			return nil, fmt.Errorf("%q: want .FROM=.TO, e.g. .cu=.hip", r)
		}
		m[from] = to
	}
	return m, nil
}

// cudaExts are the files a directory walk translates.
var cudaExts = map[string]bool{".cu": true, ".cuh": true, ".c": true, ".cc": true, ".cpp": true, ".cxx": true,
	".h": true, ".hh": true, ".hpp": true, ".hxx": true, ".inl": true, ".inc": true}

// PlanTree lists the jobs, one per input file, per file of a CUDA
// extension under an input directory (hidden directories skipped) or per
// sample, and checks before anything is written that no job writes over
// another's output or over an input (checkOutputs).
func PlanTree(o TreeOptions) ([]Job, error) {
	if o.InPlace && o.Output != "" {
		return nil, usagef("--in-place and -o are exclusive")
	}
	if o.Output == "-" { // stdout, as the input "-" is stdin: no output path
		o.Output = ""
	}
	var jobs []Job
	var err error
	if o.Samples != nil {
		jobs, err = planSamples(o)
	} else {
		jobs, err = planInputs(o)
	}
	if err != nil {
		return nil, err
	}
	return jobs, checkOutputs(jobs, o.InPlace, o.Backup)
}

func planSamples(o TreeOptions) ([]Job, error) {
	if len(o.Inputs) > 0 {
		return nil, usagef("--sample takes no file arguments")
	}
	if o.InPlace {
		return nil, usagef("--sample cannot be translated --in-place")
	}
	names := make([]string, 0, len(o.Samples))
	for n := range o.Samples {
		names = append(names, n)
	}
	sort.Strings(names)
	var jobs []Job
	for _, n := range names {
		j := Job{Name: n, Data: o.Samples[n], Rel: n}
		if o.Output != "" && o.Write {
			j.Dst = filepath.Join(o.Output, renameExt(n, o.Rename, ".hip"))
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

func planInputs(o TreeOptions) ([]Job, error) {
	if len(o.Inputs) == 0 {
		return nil, usagef("no input: give CUDA files, a directory, - for stdin, or --sample")
	}
	dirs := map[string]bool{}
	for _, p := range o.Inputs {
		if p == "-" {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		dirs[p] = fi.IsDir()
	}
	tree := len(o.Inputs) > 1 || dirs[o.Inputs[0]]
	if tree && o.Write && !o.InPlace && o.Output == "" {
		return nil, usagef("several inputs or a directory need -o DIR, --in-place, --diff or --check")
	}
	var jobs []Job
	for _, p := range o.Inputs {
		switch {
		case p == "-":
			data, err := o.ReadStdin()
			if err != nil {
				return nil, err
			}
			j := Job{Name: "<stdin>", Data: data, Rel: "stdin.hip"}
			if o.Write && o.Output != "" {
				j.Dst = o.Output
			}
			jobs = append(jobs, j)
		case dirs[p]:
			dj, err := planDir(o, p)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, dj...)
		default:
			jobs = append(jobs, planFile(o, p, tree))
		}
	}
	return jobs, nil
}

// planDir lists the CUDA files under dir.
func planDir(o TreeOptions, dir string) ([]Job, error) {
	var jobs []Job
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != dir && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !cudaExts[strings.ToLower(filepath.Ext(p))]:
			return nil
		}
		if ok, err := safefile.WalkedFile(p, d); !ok {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		j := Job{Name: p, Src: p, Rel: rel}
		switch {
		case o.Write && o.InPlace:
			j.Dst, j.CompatDir = p, dir
		case o.Write:
			j.Dst, j.CompatDir = filepath.Join(o.Output, renameExt(rel, o.Rename, "")), o.Output
		}
		jobs = append(jobs, j)
		return nil
	})
	return jobs, err
}

// planFile is one file named on the command line.
func planFile(o TreeOptions, p string, tree bool) Job {
	j := Job{Name: p, Src: p, Rel: filepath.Base(p)}
	switch {
	case !o.Write:
	case o.InPlace:
		j.Dst = p
	case o.Output != "" && tree:
		j.Dst = filepath.Join(o.Output, renameExt(filepath.Base(p), o.Rename, ""))
	case o.Output != "":
		j.Dst = o.Output
		if fi, err := os.Stat(o.Output); err == nil && fi.IsDir() {
			j.Dst = filepath.Join(o.Output, renameExt(filepath.Base(p), o.Rename, ""))
		}
	}
	return j
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

// RunTree translates the jobs on o.Jobs goroutines and writes what they
// write (atomically; in place after a synced backup), then the compat
// headers the written translations include. progress is called after each
// job. No job starts after ctx is done; its error is then ctx's.
func RunTree(ctx context.Context, jobs []Job, o TreeOptions, progress func()) ([]Result, error) {
	Entries() // load the tables outside the per-file timings
	results := make([]Result, len(jobs))
	defs := projectDefines(o, jobs)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(max(1, o.Jobs), len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = translateOne(o, jobs[i], defs[i])
				progress()
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	writeCompatHeaders(results)
	return results, nil
}

// translateOne translates and writes one job.
func translateOne(o TreeOptions, j Job, defs map[string]bool) Result {
	r := Result{Job: j}
	src := j.Data
	var mode fs.FileMode = 0o644
	var fi fs.FileInfo
	if j.Src != "" {
		var err error
		if fi, err = os.Stat(j.Src); err != nil {
			r.Err = err
			return r
		}
		mode = fi.Mode().Perm()
		if src, r.Err = o.Read(j.Src); r.Err != nil {
			return r
		}
	}
	r.In = src
	topt := compatOptions(o, j)
	topt.ProjectDefines = defs
	topt.SourcePath = j.Src
	r.Out, r.Report, r.Err = Translate(j.Name, src, topt)
	if r.Err == nil && o.Parity {
		p := CheckParity(j.Name, src, r.Out, o.Translate, nil)
		r.Parity = &p
	}
	if r.Err != nil || j.Dst == "" {
		return r
	}
	if r.Err = checkCompatPath(j, r.Report); r.Err != nil {
		return r
	}
	if !o.InPlace {
		if r.Err = safefile.Write(j.Dst, r.Out, safefile.Options{Perm: mode}); r.Err == nil {
			r.Wrote = true
		}
		return r
	}
	if !r.Report.Changed {
		return r
	}
	// Refuse before anything is written, the backup included.
	if r.Err = safefile.CheckWritable(j.Src); r.Err != nil {
		return r
	}
	own, err := checkInPlace(j.Src, fi)
	if r.Err = err; err != nil {
		return r
	}
	// The old content must survive a crash: sync before the rename.
	opt := safefile.Options{Perm: mode, Sync: true}
	if o.Backup != "" {
		r.Backup = j.Src + o.Backup
		if r.Err = safefile.WriteFrom(r.Backup, opt, own.fill(src)); r.Err != nil {
			return r
		}
	}
	if r.Err = safefile.WriteFrom(j.Dst, opt, own.fill(r.Out)); r.Err == nil {
		r.Wrote = true
	}
	return r
}

// srcOfWriter is the input of the job that writes file key k ("" for
// standard input or a sample).
func srcOfWriter(jobs []Job, ids fileKeys, k string) string {
	for _, j := range jobs {
		if j.Dst != "" && ids.key(j.Dst) == k {
			return j.Src
		}
	}
	return ""
}

// checkOutputs refuses, before any file is translated or written, a plan that
// would lose a file: two jobs writing one file (a/k.cu and b/k.cu into one
// -o DIR, k.cuh renamed onto k.cu), or a job writing over an input (-o naming
// an input, a hard or symbolic link to one, a backup name that is an input)
// other than its own source with --in-place. Files are compared by device
// and inode when they exist, else by their path with symbolic links
// resolved. (Names differing only in case are different files on Linux.)
func checkOutputs(jobs []Job, inPlace bool, backup string) error {
	ids := fileKeys{}
	inputs := map[string]bool{}
	for _, j := range jobs {
		if j.Src != "" {
			inputs[ids.key(j.Src)] = true
		}
	}
	written := map[string]string{} // file key -> the input written there
	var conflicts []string
	hint := ""
	claim := func(j Job, dst, what string) {
		k := ids.key(dst)
		if prev, ok := written[k]; ok {
			conflicts = append(conflicts, fmt.Sprintf("%s and %s%s would both be written to %s", prev, what, j.Name, dst))
			return
		}
		written[k] = what + j.Name
		ownSource := inPlace && what == "" && j.Src != "" && ids.key(j.Src) == k
		if inputs[k] && !ownSource {
			conflicts = append(conflicts, fmt.Sprintf("%s%s would be written to %s, which is also an input", what, j.Name, dst))
			if !inPlace {
				hint = " (--in-place rewrites sources)"
			}
		}
	}
	for _, j := range jobs {
		if j.Dst == "" {
			continue
		}
		claim(j, j.Dst, "")
		if inPlace && backup != "" {
			claim(j, j.Src+backup, "the backup of ")
		}
	}
	// Where rocmk writes its compat header, an input of that name that is
	// not one rocmk wrote (a user's rocmk_hip_compat.h) is refused now: left
	// to the translations, it was written before the files that need the
	// header were refused, and the output was half a tree.
	seen := map[string]bool{}
	for _, j := range jobs {
		if j.CompatDir == "" || j.Dst == "" {
			continue
		}
		p := compatPath(j)
		k := ids.key(p)
		by, ok := written[k]
		if !ok || seen[k] {
			continue
		}
		seen[k] = true
		if data, err := readCompatHeader(srcOfWriter(jobs, ids, k)); err != nil || !IsCompatHeader(data) {
			conflicts = append(conflicts, fmt.Sprintf("%s would be written to %s, where rocmk writes its compat header (rename the input)", by, p))
		}
	}
	switch len(conflicts) {
	case 0:
		return nil
	case 1:
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

// compatPath is where a job's translation finds rocmk_hip_compat.h: the
// root of the output tree, or beside the output file.
func compatPath(j Job) string {
	dir := j.CompatDir
	if dir == "" {
		dir = filepath.Dir(j.Dst)
	}
	return filepath.Join(dir, CompatHeaderName)
}

// compatOptions are the translation options for one job: the compat header
// is included by its path relative to the output file, or inlined when the
// translation goes to stdout.
func compatOptions(o TreeOptions, j Job) Options {
	t := o.Translate
	switch {
	case j.Dst == "" && o.Show:
		t.CompatInline = true
	case j.CompatDir != "" && j.Dst != "":
		if rel, err := filepath.Rel(filepath.Dir(j.Dst), compatPath(j)); err == nil {
			t.CompatInclude = filepath.ToSlash(rel)
		}
	}
	return t
}

// checkCompatPath refuses an output that needs the compat header where a
// file of that name exists that rocmk did not write.
func checkCompatPath(j Job, rep *Report) error {
	if len(rep.Compat) == 0 {
		return nil
	}
	p := compatPath(j)
	if p == j.Dst {
		return nil
	}
	data, err := readCompatHeader(p)
	if errors.Is(err, fs.ErrNotExist) || err == nil && IsCompatHeader(data) {
		return nil
	}
	return fmt.Errorf("%s: the translation needs rocmk's %s, but %s exists and was not written by rocmk: not overwritten, %s not written",
		j.Name, CompatHeaderName, p, j.Dst)
}

// writeCompatHeaders writes rocmk_hip_compat.h where written translations
// include it (never over a user's file, never over an output of the run). A
// failure is the failure of the files that need the header.
func writeCompatHeaders(results []Result) {
	outputs := map[string]bool{}
	for _, r := range results {
		if r.Wrote {
			outputs[r.Dst] = true
		}
	}
	errs := map[string]error{}
	for i := range results {
		r := &results[i]
		if !r.Wrote || r.Report == nil || len(r.Report.Compat) == 0 {
			continue
		}
		p := compatPath(r.Job)
		if outputs[p] {
			continue
		}
		err, done := errs[p]
		if !done {
			err = writeCompatHeader(p)
			errs[p] = err
		}
		if err != nil {
			r.Err = fmt.Errorf("%s: %w", r.Name, err)
		}
	}
}

func writeCompatHeader(p string) error {
	want := CompatHeader()
	old, err := readCompatHeader(p)
	switch {
	case err == nil && bytes.Equal(old, want):
		return nil
	case err == nil && !IsCompatHeader(old), err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s exists and was not written by rocmk: not overwritten", p)
	}
	return safefile.Write(p, want, safefile.Options{Perm: 0o644})
}

// readCompatHeader reads an existing rocmk_hip_compat.h: a regular file of at
// most a few times the header's size (a named pipe or a device of that name
// is refused, never read).
func readCompatHeader(p string) ([]byte, error) {
	return safefile.Read(p, int64(4*len(CompatHeader())))
}

// TreeReport is what a tree translation did (rocmk.hipify/v1).
type TreeReport struct {
	HIPVersion string       `json:"hip_version"`
	Files      []FileResult `json:"files"`
	Total      Totals       `json:"total"`
	// Blockers (--stats) classify what will not compile on the target.
	Blockers *BlockerReport `json:"blockers,omitempty"`
}

// FileResult is one file's report in a TreeReport.
type FileResult struct {
	*Report
	Output  string  `json:"output_path,omitempty"`
	Error   string  `json:"error,omitempty"`
	Content string  `json:"content,omitempty"` // the translation, when --json has no other place for it
	Kernels *Parity `json:"kernels,omitempty"`
}

// Totals add the files' reports up.
type Totals struct {
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

// Summarize reports results, translated for hip in elapsed.
func Summarize(results []Result, hip Version, elapsed time.Duration) TreeReport {
	rep := TreeReport{HIPVersion: hip.String(), Total: Totals{Files: len(results), Replaced: map[string]int{}, Seconds: elapsed.Seconds()}}
	for _, r := range results {
		f := FileResult{Report: r.Report, Kernels: r.Parity}
		if r.Err != nil {
			rep.Total.Failed++
			f.Error = r.Err.Error()
			rep.Files = append(rep.Files, f)
			continue
		}
		if r.Wrote {
			f.Output = r.Dst
		}
		t := &rep.Total
		t.Lines += r.Report.Lines
		t.Replacements += r.Report.Replacements()
		for k, v := range r.Report.Replaced {
			t.Replaced[k] += v
		}
		t.Unsupported += len(r.Report.Unsupported)
		t.Hazards += len(r.Report.Hazards)
		if r.Report.Changed {
			t.Changed++
		}
		rep.Files = append(rep.Files, f)
	}
	if elapsed > 0 {
		rep.Total.LinesPerSec = float64(rep.Total.Lines) / elapsed.Seconds()
	}
	return rep
}
