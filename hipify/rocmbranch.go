package hipify

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocmk/rocmk/cache/safefile"
)

// The ROCm switch (cudamacros.go) takes a project's own ROCm branch. A
// project copied in part may keep the branch but not what it includes:
// mistral.rs kept vLLM's `#ifdef USE_ROCM #include
// "quantization/fp8/amd/quant_utils.cuh"` but not that file. Taking such a
// branch can only fail, so where the ROCm branch of a conditional on the
// switch includes a quoted header found nowhere (not beside the file, nor
// beside any directory above it, where a project's include root is), and
// the other branch's quoted headers are all there, the conditional is
// left as written: the CUDA branch is compiled, translated, and that is
// reported. A header that only such kept branches include is that CUDA
// branch's own code: its switches stay as written too.

// keptBranch is a conditional on a ROCm switch whose CUDA branch is kept.
type keptBranch struct {
	missing string // the ROCm branch's header that is not there
	line    int
	cuda    []string // the CUDA branch's quoted includes, as written
}

// cudaSideLevels bounds how far above a header its includers are looked
// for, in per-file and tree mode alike, and cudaSideBudget how many
// entries that walk may visit (a header high in a large tree, or in /tmp,
// gives up: its switches are then mapped as usual).
const (
	cudaSideLevels = 3
	cudaSideBudget = 5000
	// cudaSideMaxFile bounds one walked file: a FIFO, a device or a huge
	// file beside the project must not hang or exhaust the translation.
	cudaSideMaxFile = 64 << 20
)

// condChain returns the directive tokens of the conditional that starts
// at HASH token h: #if..., each #elif/#else, and the #endif last (nil
// when it is not closed).
func (f *file) condChain(h int) []int {
	chain, depth := []int{h}, 0
	for i := h + 1; i < len(f.toks); i++ {
		tk := &f.toks[i]
		if tk.kind != HASH {
			continue
		}
		switch {
		case strings.HasPrefix(tk.lit, "#if"):
			depth++
		case tk.lit == "#endif" && depth > 0:
			depth--
		case tk.lit == "#endif":
			return append(chain, i)
		case depth == 0 && strings.HasPrefix(tk.lit, "#el"):
			chain = append(chain, i)
		}
	}
	return nil
}

// switchSense reports whether the conditional at HASH token h is a plain
// test of one ROCm switch, and whether its first branch is the ROCm one:
// #ifdef S, #if S, #if defined(S), #ifndef S, #if !defined(S).
func (f *file) switchSense(h int) (rocmFirst, ok bool) {
	var words []string
	for j := h + 1; j < len(f.toks) && f.toks[j].kind != PPEND; j++ {
		if f.toks[j].kind != COMMENT {
			words = append(words, f.toks[j].lit)
		}
	}
	neg := f.toks[h].lit == "#ifndef"
	if f.toks[h].lit == "#if" {
		if len(words) > 0 && words[0] == "!" {
			neg, words = true, words[1:]
		}
		if len(words) > 0 && words[0] == "defined" {
			words = words[1:]
		}
		if len(words) == 3 && words[0] == "(" && words[2] == ")" {
			words = words[1:2]
		}
	} else if f.toks[h].lit != "#ifdef" && !neg {
		return false, false
	}
	if len(words) != 1 || f.classify(words[0]) != rocmSwitchMacro {
		return false, false
	}
	return !neg, true
}

// quotedIncludes lists the quoted #includes between tokens a and b, as
// written, with their lines.
func (f *file) quotedIncludes(a, b int) (names []string, lines []int) {
	for i := a; i < b; i++ {
		if f.toks[i].kind != HASH || f.toks[i].lit != "#include" {
			continue
		}
		if n := f.next(i); n < b && f.toks[n].kind == STRING && strings.HasPrefix(f.toks[n].lit, `"`) && len(f.toks[n].lit) > 2 {
			names = append(names, f.toks[n].lit[1:len(f.toks[n].lit)-1])
			lines = append(lines, f.toks[n].pos.Line)
		}
	}
	return names, lines
}

// headerFound reports whether the quoted header name is beside dir or
// beside a directory above it.
func headerFound(dir, name string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// keptBranches finds the conditionals on a ROCm switch whose CUDA branch
// is kept (by their HASH token); dir is the source's directory (none
// known: nil).
func (f *file) keptBranches(dir string) map[int]keptBranch {
	if dir == "" || !f.mentionsSwitch() {
		return nil
	}
	var kept map[int]keptBranch
	for h := range f.toks {
		tk := &f.toks[h]
		if tk.kind != HASH || tk.lit != "#if" && tk.lit != "#ifdef" && tk.lit != "#ifndef" {
			continue
		}
		rocmFirst, ok := f.switchSense(h)
		if !ok {
			continue
		}
		chain := f.condChain(h)
		if len(chain) < 2 || len(chain) > 3 || len(chain) == 3 && f.toks[chain[1]].lit != "#else" {
			continue // no #else, or #elifs: not two branches
		}
		rocm, cuda := [2]int{chain[0], chain[1]}, [2]int{chain[len(chain)-2], chain[len(chain)-1]}
		if !rocmFirst {
			rocm, cuda = cuda, rocm
		}
		if len(chain) == 2 {
			if rocmFirst {
				continue // #ifdef S with no #else: nothing to keep instead
			}
			rocm = [2]int{chain[1], chain[1]} // #ifndef S alone: the ROCm branch is empty
		}
		names, lines := f.quotedIncludes(rocm[0], rocm[1])
		cudaNames, _ := f.quotedIncludes(cuda[0], cuda[1])
		for k, n := range names {
			if headerFound(dir, n) || !allFound(dir, cudaNames) {
				continue
			}
			if kept == nil {
				kept = map[int]keptBranch{}
			}
			kept[h] = keptBranch{missing: n, line: lines[k], cuda: cudaNames}
			break
		}
	}
	return kept
}

func allFound(dir string, names []string) bool {
	for _, n := range names {
		if !headerFound(dir, n) {
			return false
		}
	}
	return true
}

// mentionsSwitch is a cheap test for any ROCm switch in the source.
func (f *file) mentionsSwitch() bool {
	for _, s := range f.rocmSwitches() {
		if bytes.Contains(f.src, []byte(s)) {
			return true
		}
	}
	return false
}

// cudaSideOf returns the file (and line) whose kept CUDA branch includes
// the source at path, when every include of it found within
// cudaSideLevels directories above it is in such a branch ("" otherwise).
func cudaSideOf(path string, opt *Options) (string, int) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", 0
	}
	root := filepath.Dir(abs)
	for range cudaSideLevels {
		root = filepath.Dir(root)
	}
	var by string
	var byLine int
	only, seen := true, 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if seen++; seen > cudaSideBudget {
			only = false
			return fs.SkipAll
		}
		if err == nil && d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if err != nil || d.IsDir() || p == abs || !isSourceName(p) {
			return nil
		}
		src, err := safefile.Read(p, cudaSideMaxFile)
		if err != nil || !bytes.Contains(src, []byte(filepath.Base(abs))) || checkText(p, src) != nil {
			return nil
		}
		o := *opt
		inc := newFile(p, src, &o)
		kept := inc.keptBranches(filepath.Dir(p))
		names, lines := inc.quotedIncludes(0, len(inc.toks))
		for k, n := range names {
			if !resolvesTo(filepath.Dir(p), n, abs) {
				continue
			}
			if !inc.inKeptCUDA(kept, lines[k]) {
				only = false
				return fs.SkipAll
			}
			if by == "" {
				by, byLine = p, lines[k]
			}
		}
		return nil
	})
	if !only {
		return "", 0
	}
	return by, byLine
}

// resolvesTo reports whether the quoted name, included from dir, is the
// file target (beside dir or beside a directory above it, like headerFound).
func resolvesTo(dir, name, target string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Join(d, name) == target {
			return true
		}
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode().IsRegular() || filepath.Dir(d) == d {
			return false // the include finds another file first
		}
	}
}

// inKeptCUDA reports whether the #include on line is in the CUDA branch of
// one of the kept conditionals.
func (f *file) inKeptCUDA(kept map[int]keptBranch, line int) bool {
	for h := range kept {
		chain := f.condChain(h)
		rocmFirst, _ := f.switchSense(h)
		a, b := chain[0], chain[1]
		if rocmFirst {
			a, b = chain[len(chain)-2], chain[len(chain)-1]
		}
		if f.toks[a].pos.Line < line && line < f.toks[b].pos.Line {
			return true
		}
	}
	return false
}

func isSourceName(p string) bool {
	switch filepath.Ext(p) {
	case ".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".inl", ".inc":
		return true
	}
	return false
}

// keepCUDABranch reports (and then the macro pass leaves as written) a
// conditional on a ROCm switch at HASH token h whose CUDA branch is kept,
// or any such conditional of a file that is a kept branch's CUDA side.
func (t *macroPass) keepCUDABranch(h int, orig string) bool {
	if t.kept == nil {
		t.kept = t.keptBranches(t.opt.sourceDir())
		t.cudaSide, t.cudaSideLine = "", 0
		if t.opt.SourcePath != "" && t.mentionsSwitch() {
			t.cudaSide, t.cudaSideLine = cudaSideOf(t.opt.SourcePath, t.opt)
		}
		if t.kept == nil {
			t.kept = map[int]keptBranch{}
		}
	}
	if k, ok := t.kept[h]; ok {
		t.diag(t.toks[h].pos, SevHazard, "rocm-branch-kept-cuda", k.missing, "`"+orig+"` left as is: its ROCm branch includes \""+k.missing+"\" (line "+
			strconv.Itoa(k.line)+"), which is neither beside the file nor above it, so the CUDA branch ("+quoteList(k.cuda)+") is compiled, translated")
		return true
	}
	if t.cudaSide != "" {
		t.diag(t.toks[h].pos, SevHazard, "rocm-branch-kept-cuda", "", "`"+orig+"` left as is: this file is the CUDA branch that "+
			t.cudaSide+":"+strconv.Itoa(t.cudaSideLine)+" keeps (its ROCm branch's header is not there)")
		return true
	}
	return false
}

func quoteList(names []string) string {
	if len(names) == 0 {
		return "no includes"
	}
	return `"` + strings.Join(names, `", "`) + `"`
}

// sourceDir is the directory of Options.SourcePath ("" when unknown).
func (o *Options) sourceDir() string {
	if o.SourcePath == "" {
		return ""
	}
	if abs, err := filepath.Abs(o.SourcePath); err == nil {
		return filepath.Dir(abs)
	}
	return ""
}
