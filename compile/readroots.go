package compile

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/rocmk/rocmk/compile/toolchain"
)

// A deps entry names the files a build stats and reads to check it. One
// fetched from a shared cache is written by whoever can write there, so a
// lookup only follows records whose paths lie where a compile of the job
// may read: the base directory, the source's directory, the directories its command line and the
// include-path variables name, and the toolchain's trees (/usr, the ROCm
// installation). A record elsewhere makes that record set a miss before
// anything is stat'ed: a server cannot learn, from the order of our
// requests, whether /home/u/.ssh/id_rsa exists. Local entries are checked
// the same way, as a remote hit is kept in the local cache.

// readRoots returns the directories a compile of j may read under
// (absolute, cleaned).
func readRoots(tc toolchain.Toolchain, j toolchain.Job, environ []string) []string {
	roots := []string{j.Dir, filepath.Dir(absName(j.Dir, j.Src)), "/usr"}
	if c, ok := tc.(*toolchain.Clang); ok {
		roots = append(roots, c.RocmPath, c.HIPInclude, c.DeviceLibDir, filepath.Dir(filepath.Dir(c.Clang)), filepath.Dir(filepath.Dir(c.Driver)))
	}
	for i := 0; i < len(j.Flags); i++ {
		for _, pf := range pathFlags {
			switch {
			case j.Flags[i] == pf && i+1 < len(j.Flags):
				roots = append(roots, j.Flags[i+1])
			case strings.HasPrefix(j.Flags[i], pf) && len(j.Flags[i]) > len(pf):
				roots = append(roots, j.Flags[i][len(pf):])
			default:
				continue
			}
			break
		}
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH":
			roots = append(roots, filepath.SplitList(v)...)
		}
	}
	out := roots[:0]
	for _, r := range roots {
		if r == "" {
			continue
		}
		if !filepath.IsAbs(r) {
			r = filepath.Join(j.Dir, r)
		}
		out = append(out, filepath.Clean(r))
	}
	return out
}

// underRoots reports whether name (a record's path, relative to baseDir or
// absolute) lies, lexically, under one of roots.
func underRoots(name, baseDir string, roots []string) bool {
	p := filepath.Clean(absName(baseDir, name))
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+string(os.PathSeparator)) || r == string(os.PathSeparator) {
			return true
		}
	}
	return false
}

// recordsUnder reports whether every record of a set lies under roots. A
// missing search directory may also be a top-level one ("/include": the
// driver's defaults for an empty ROCm prefix); its existence tells nothing.
func recordsUnder(recs []depRecord, baseDir string, roots []string) bool {
	for _, r := range recs {
		if r.Kind == recSearchDir && filepath.Dir(filepath.Clean(r.Path)) == string(os.PathSeparator) {
			continue
		}
		if !underRoots(r.Path, baseDir, roots) {
			return false
		}
	}
	return true
}
