package compile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
)

func TestParseSearchPath(t *testing.T) {
	sp, err := toolchain.ParseSearchPath([]byte(clangSearchOutput))
	require.NoError(t, err)
	assert.Equal(t, []string{"quoted"}, sp.Quote)
	assert.Equal(t, []string{"inc", "/usr/lib/llvm-15/lib/clang/15.0.6",
		"/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12",
		"/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/x86_64-linux-gnu/c++/12", "/usr/include"}, sp.Angle)
	assert.Equal(t, []string{"nonexistent", "/include"}, sp.Missing)
	assert.Equal(t, []string{"pre h.h", "__clang_hip_runtime_wrapper.h"}, sp.Includes)
	assert.Equal(t, []string{"/usr/bin/../lib/gcc/x86_64-linux-gnu"}, sp.Installs)
	assert.Equal(t, "", sp.Unmodelled)
	sp, err = toolchain.ParseSearchPath([]byte(strings.Replace(clangSearchOutput, "-E -main-file-name", "-E -ivfsoverlay /o.yaml -main-file-name", 1)))
	require.NoError(t, err)
	assert.Equal(t, "-ivfsoverlay", sp.Unmodelled)

	_, err = toolchain.ParseSearchPath([]byte("clang: error: unknown argument: '-fbogus'\n"))
	assert.Error(t, err)
}

// TestRealSearchPath: the real clang's answer for a job with relative and
// missing include directories.
func TestRealSearchPath(t *testing.T) {
	tc := realClang(t, toolchain.LayoutClang)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "inc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pre.h"), nil, 0o644))
	j := toolchain.Job{Src: "k.hip", Dir: dir, Target: targets("gfx90a")[0], Flags: []string{"-iquote", "q", "-Iinc", "-Inope", "-include", "pre.h"}}
	sp, err := tc.SearchPath(t.Context(), &runner.ExecRunner{}, j)
	require.NoError(t, err)
	assert.Equal(t, "inc", sp.Angle[0], "-I comes first among <> directories")
	assert.Contains(t, sp.Missing, "nope")
	assert.Contains(t, sp.Missing, "q")
	assert.Contains(t, sp.Includes, "pre.h")
	assert.NotEmpty(t, sp.Installs)
}

func TestRelFlags(t *testing.T) {
	got := relFlags([]string{"-I/p/inc", "-I", "/p/a/b", "-isystem/p/sys", "-iquote", "/other/q", "-include", "/p/pre.h",
		"-I/p/x/../y", "-I/p", "-I/pq", "-DX=/p/inc", "-isysroot", "/p"}, "/p")
	assert.Equal(t, []string{"-Iinc", "-I", "a/b", "-isystemsys", "-iquote", "/other/q", "-include", "pre.h",
		"-I/p/x/../y", "-I.", "-I/pq", "-DX=/p/inc", "-isysroot", "/p"}, got)
}

func TestLocationFlag(t *testing.T) {
	assert.Equal(t, "", locationFlag([]string{"-O2", "-DX", "-Iinc", "-g0", "-ffast-math", "--gpu-max-threads-per-block=256"}))
	for _, f := range []string{"-g", "-ggdb", "-gline-tables-only", "-fdebug-prefix-map=/a=/b", "-ffile-prefix-map=/a=/b",
		"-fprofile-instr-generate", "-fcoverage-mapping", "-Xclang"} {
		assert.Equal(t, f, locationFlag([]string{"-O2", f}), f)
	}
}

func TestCheckOutputNames(t *testing.T) {
	ts := targets("gfx90a", "gfx1030")
	assert.NoError(t, CheckOutputNames([]string{"a/k.hip", "b/m.hip"}, ts, "out", true))
	err := CheckOutputNames([]string{"a/k.hip", "b/m.hip", "b/k.hip"}, ts, "out", false)
	require.ErrorIs(t, err, ErrOutputConflict)
	assert.Contains(t, err.Error(), "sources a/k.hip and b/k.hip would both write out/k-gfx90a.hsaco")
	err = CheckOutputNames([]string{"k.hip", "k.cpp"}, ts, "out", false)
	assert.ErrorIs(t, err, ErrOutputConflict)
	err = CheckOutputNames([]string{"a/k.hip", "./a/k.hip"}, ts, "out", false)
	assert.ErrorContains(t, err, "source ./a/k.hip is given twice")
	// Distinct files, one identifier in the embedding files.
	assert.NoError(t, CheckOutputNames([]string{"k-1.hip", "k_1.hip"}, ts, "out", false))
	err = CheckOutputNames([]string{"k-1.hip", "k_1.hip"}, ts, "out", true)
	assert.ErrorContains(t, err, "sources k-1.hip and k_1.hip would both be named k_1 in the embedding files")
}

// TestHeaderState: what a header lookup makes of each kind of path.
func TestHeaderState(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.h")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	fifo := filepath.Join(dir, "p.h")
	mkfifo(t, fifo)
	assert.Equal(t, "present", statPath(f).headerState())
	assert.Equal(t, "absent", statPath(dir).headerState(), "a directory is skipped")
	assert.Equal(t, "absent", statPath(filepath.Join(dir, "none.h")).headerState())
	assert.Equal(t, "absent", statPath(filepath.Join(f, "x.h")).headerState(), "a file used as a directory")
	assert.Equal(t, "fifo", statPath(fifo).headerState())
	assert.Equal(t, "chardev", statPath("/dev/zero").headerState())
}

// clangSearchOutput is `clang++-15 -E -v` (cut) for -I inc -Inonexistent
// -include "pre h.h" on Debian 12.
const clangSearchOutput = `Debian clang version 15.0.6
Target: x86_64-pc-linux-gnu
Selected GCC installation: /usr/bin/../lib/gcc/x86_64-linux-gnu/12
 "/usr/lib/llvm-15/bin/clang" -cc1 -triple amdgcn-amd-amdhsa -E -main-file-name null -include "pre h.h" -idirafter /usr/include -I inc -Inonexistent -include __clang_hip_runtime_wrapper.h -o /dev/null -x hip /dev/null
clang -cc1 version 15.0.6 based upon LLVM 15.0.6 default target x86_64-pc-linux-gnu
ignoring nonexistent directory "nonexistent"
ignoring nonexistent directory "/include"
ignoring duplicate directory "/usr/local/include"
#include "..." search starts here:
 quoted
#include <...> search starts here:
 inc
 /usr/lib/llvm-15/lib/clang/15.0.6
 /usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12
 /usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/x86_64-linux-gnu/c++/12
 /usr/include
End of search list.
`
