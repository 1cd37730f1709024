package compile

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rocmk/rocmk/compile/embedding"
	"github.com/rocmk/rocmk/compile/slurm"
	"github.com/rocmk/rocmk/inspect"
)

// Request is what one `rocmk build` asks for.
type Request struct {
	// BaseDir is the directory the compiler runs in ("" = the current
	// directory). Paths inside it (sources, -I directories, headers) are
	// given to the compiler and keyed relative to it, so a copy of the
	// project elsewhere builds the same objects and shares the cache.
	BaseDir      string
	Sources      []string         // source files (.hip, .cpp; .cu in a translated tree)
	Targets      []inspect.Target // one job per (source, target)
	Flags        []string         // user flags for every job
	OutDir       string           // where code objects and the manifest go
	Bundle       bool             // also write <stem>.hipfb with all targets
	Embed        []string         // "rust", "go", "c": embedding files
	EmbedPackage string           // package name of the Go embedding file (default "hsaco")
	NoManifest   bool             // skip manifest.json
	// Executor runs the compiles that miss the cache: "local" (or "") or
	// "slurm", with Slurm's options (Session.Build).
	Executor string
	Slurm    slurm.Options
	// Tree is the translated tree the sources are in, when they were
	// CUDA (set by Session.Plan; the Builder does not read it).
	Tree *Tree
}

// ObjectName is the file name of source src's code object for target t:
// "<stem>-<target>.hsaco", with the ':' of target features replaced by '_'
// (gfx90a:xnack+ -> vadd-gfx90a_xnack+.hsaco) so the name is safe everywhere.
func ObjectName(src string, t inspect.Target) string {
	return Stem(src) + "-" + TargetFileName(t) + ".hsaco"
}

// ErrOutputConflict is wrapped by the error for two sources that would
// write the same output file (same stem in one output directory).
var ErrOutputConflict = errors.New("two sources would write the same output")

// CheckOutputNames refuses a build in which two sources would write one
// output file: a code object, a bundle, or (with embeddings) one
// identifier. It runs before anything compiles; the fix is to rename a
// source or to build the two in separate output directories.
// With no targets (not chosen yet) the output is named with a pattern.
func CheckOutputNames(sources []string, targets []inspect.Target, outDir string, embed bool) error {
	byStem := map[string]string{}
	byIdent := map[string]string{}
	for _, src := range sources {
		abs, err := filepath.Abs(src)
		if err != nil {
			return err
		}
		st := Stem(src)
		if prev, ok := byStem[st]; ok {
			if a, _ := filepath.Abs(prev); a == abs {
				return fmt.Errorf("%w: source %s is given twice", ErrOutputConflict, src)
			}
			out := st + "-*.hsaco"
			if len(targets) > 0 {
				out = ObjectName(src, targets[0])
			}
			return fmt.Errorf("%w: sources %s and %s would both write %s: rename one, or build them with separate -o directories",
				ErrOutputConflict, prev, src, filepath.Join(outDir, out))
		}
		byStem[st] = src
		if embed {
			id := embedding.Ident(st)
			if prev, ok := byIdent[id]; ok {
				return fmt.Errorf("%w: sources %s and %s would both be named %s in the embedding files: rename one",
					ErrOutputConflict, prev, src, id)
			}
			byIdent[id] = src
		}
	}
	return nil
}

// TargetFileName makes a target ID file-safe: ':' becomes '_'.
func TargetFileName(t inspect.Target) string {
	return strings.ReplaceAll(t.String(), ":", "_")
}

// Stem is a source's base name without extension.
func Stem(src string) string {
	b := filepath.Base(src)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// Status says how a job ended.
type Status string

const (
	StatusHit      Status = "hit"      // the code object came from the cache
	StatusCompiled Status = "compiled" // the compiler ran
	StatusFailed   Status = "failed"   // the compiler failed or the output was wrong
	StatusSkipped  Status = "skipped"  // not run (cancelled, or -n)
	StatusMissing  Status = "missing"  // Builder.Fetch: not in the cache (nothing compiled)
)

// KernelUsage is one kernel's resource usage, read back from the code
// object (Result.Kernels, sorted by name).
type KernelUsage struct {
	Name       string `json:"name"`
	VGPRs      int    `json:"vgprs"`
	SGPRs      int    `json:"sgprs"`
	AGPRs      int    `json:"agprs,omitempty"`
	VGPRSpills int    `json:"vgpr_spills,omitempty"`
	SGPRSpills int    `json:"sgpr_spills,omitempty"`
	LDS        int    `json:"lds_bytes"`
	Scratch    int    `json:"scratch_bytes"`
}

// Result is one job's outcome.
type Result struct {
	Src    string         `json:"source"`
	Target inspect.Target `json:"target"`
	Status Status         `json:"status"`
	// Toolchain names what built the target ("clang++-15 15.0.6, ROCm 5.2.3").
	Toolchain string        `json:"toolchain,omitempty"`
	Cache     string        `json:"cache,omitempty"` // a hit: "local", or "remote" (fetched from a remote cache's server)
	Where     string        `json:"where,omitempty"` // with an executor, where a compile ran: "local" or "slurm:NODE"
	Out       string        `json:"file,omitempty"`
	SHA256    string        `json:"sha256,omitempty"`
	Size      int           `json:"size,omitempty"`
	Dur       time.Duration `json:"-"`
	CPU       time.Duration `json:"-"`
	Kernels   []KernelUsage `json:"kernels,omitempty"`
	Err       error         `json:"-"`
	Argv      []string      `json:"-"`
	// Object is the code object, parsed once (nil unless hit or compiled):
	// its bytes (Object.Data), kernels and their arguments.
	Object *inspect.CodeObject `json:"-"`
}

// Report is the outcome of a whole build.
type Report struct {
	Results []*Result
	Bundles []string // bundle files written
	Files   []string // other files written (manifest, embeddings)
	Wall    time.Duration
	CPU     time.Duration // compiler CPU time (user+system) summed over jobs
	// Warnings concern the build as a whole (Session.Build: targets built
	// with device libraries older than the target).
	Warnings []string
}

// RemoteHits counts the hits fetched from a remote cache's server.
func (r *Report) RemoteHits() int {
	n := 0
	for _, x := range r.Results {
		if x.Cache == "remote" {
			n++
		}
	}
	return n
}

// Where counts the compiles by where they ran ("local", "slurm"), with an
// executor; nil without one.
func (r *Report) Where() map[string]int {
	var m map[string]int
	for _, x := range r.Results {
		if x.Status != StatusCompiled || x.Where == "" {
			continue
		}
		if m == nil {
			m = map[string]int{}
		}
		k, _, _ := strings.Cut(x.Where, ":")
		m[k]++
	}
	return m
}

// Count returns how many jobs ended with status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, x := range r.Results {
		if x.Status == s {
			n++
		}
	}
	return n
}

// CompileError is a failed job: the source, the target, and what the
// compiler (or rocmk's check of its output) said.
type CompileError struct {
	Src    string
	Target inspect.Target
	Stderr []byte
	Err    error // the underlying error (exit status, context), may be nil
}

func (e *CompileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s [%s]\n", filepath.Base(e.Src), e.Target)
	msg := strings.TrimRight(string(e.Stderr), "\n")
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	b.WriteString(msg)
	return b.String()
}

func (e *CompileError) Unwrap() error { return e.Err }

// ErrorList is every failure of a build, sorted by source then target.
type ErrorList []*CompileError

func (l ErrorList) Error() string {
	var parts []string
	for _, e := range l {
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "\n")
}

// Unwrap exposes each error to errors.Is/As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

func (l ErrorList) sort() {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Src != l[j].Src {
			return l[i].Src < l[j].Src
		}
		return inspect.ProcessorIndex(l[i].Target.Proc) < inspect.ProcessorIndex(l[j].Target.Proc)
	})
}
