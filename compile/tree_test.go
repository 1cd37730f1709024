package compile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/hipify"
)

// writeFiles writes name -> text under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o777))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
}

// treeProject is a CUDA project whose sources reach headers every way a
// compiler does: beside the includer, in a subdirectory, through "..",
// through -I with "" and <>, in an #if 0 branch, through #include_next.
var treeProject = map[string]string{
	"proj/kernels/a.cu": `#include <cuda_runtime.h>
#include <math.h>
#include "utils.cuh"
#include "../shared/common.h"
#include <lib/api.h>
#if 0
#include "never.h"
#endif
__global__ void a(float *x) { x[0] = sqrtf(x[0]); }
`,
	"proj/kernels/b.cu":              "#include \"utils.cuh\"\n__global__ void b(float *x) {}\n",
	"proj/kernels/utils.cuh":         "#pragma once\n#include \"detail/defs.h\"\ninline void grow(void **p) { cudaMalloc(p, 4); }\n",
	"proj/kernels/detail/defs.h":     "#pragma once\n#define N 4\n",
	"proj/kernels/never.h":           "#pragma once\n",
	"proj/kernels/unused.cuh":        "#pragma once\n",
	"proj/shared/common.h":           "#pragma once\n#include \"api_local.h\"\n",
	"proj/shared/api_local.h":        "#pragma once\n",
	"proj/include/lib/api.h":         "#pragma once\n#include_next <lib/api.h>\n",
	"proj/include2/lib/api.h":        "#pragma once\n",
	"proj/include/hip/hip_runtime.h": "#error HIP's headers are never taken from the project\n",
	"proj/include/cuda_runtime.h":    "#error mapped by hipify, never followed\n",
}

func rels(t *Tree) []string {
	var out []string
	for _, f := range t.Files {
		out = append(out, f.Rel)
	}
	return out
}

// TestTranslateTreeClosure: a source's include closure is mirrored under
// its common directory, translated, with the -I directories mapped; HIP's
// headers, system headers and files nothing includes are not.
func TestTranslateTreeClosure(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, treeProject)
	p := filepath.Join(dir, "proj")
	tr, err := TranslateTree(TreeRequest{
		Sources:  []string{filepath.Join(p, "kernels", "a.cu"), filepath.Join(p, "kernels", "b.cu")},
		Includes: []string{filepath.Join(p, "include"), filepath.Join(p, "include2")},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"rocmk/rocmk_hip_compat.h",
		"src/include/lib/api.h",
		"src/include2/lib/api.h",
		"src/kernels/a.cu",
		"src/kernels/b.cu",
		"src/kernels/detail/defs.h",
		"src/kernels/never.h",
		"src/kernels/utils.cuh",
		"src/shared/api_local.h",
		"src/shared/common.h",
	}, rels(tr))
	assert.Equal(t, []string{"src/kernels/a.cu", "src/kernels/b.cu"}, tr.Sources)
	assert.Equal(t, []string{"src/include", "src/include2", "rocmk"}, tr.Includes)
	utils := tr.File(filepath.Join(p, "kernels", "utils.cuh"))
	require.NotNil(t, utils)
	assert.Contains(t, string(utils.Data), "hipMalloc(p, 4)")
	assert.Contains(t, string(utils.Orig), "cudaMalloc(p, 4)")
	assert.Contains(t, string(tr.File(filepath.Join(p, "kernels", "a.cu")).Data), "#include <hip/hip_runtime.h>")
	assert.Empty(t, tr.Warnings)

	tr.Locate(filepath.Join(dir, "trees"))
	assert.Equal(t, []string{"-I" + filepath.Join(tr.Dir, "src", "include"), "-I" + filepath.Join(tr.Dir, "src", "include2"),
		"-I" + filepath.Join(tr.Dir, "rocmk")}, tr.IncludeFlags())
}

// TestTranslateTreeDirs: a kernel directory is mirrored whole (headers
// nothing includes too); hidden directories are skipped.
func TestTranslateTreeDirs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, treeProject)
	writeFiles(t, dir, map[string]string{"proj/kernels/.git/x.h": "x", "proj/kernels/k.hip": "__global__ void k() { cudaMalloc(0, 0); }\n"})
	p := filepath.Join(dir, "proj", "kernels")
	tr, err := TranslateTree(TreeRequest{Sources: []string{filepath.Join(p, "b.cu"), filepath.Join(p, "k.hip")}, Dirs: []string{p}})
	require.NoError(t, err)
	got := strings.Join(rels(tr), " ")
	for _, want := range []string{"src/kernels/unused.cuh", "src/kernels/never.h", "src/kernels/a.cu", "src/kernels/k.hip"} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, ".git")
	// a HIP source is copied as it is
	k := tr.File(filepath.Join(p, "k.hip"))
	assert.Equal(t, "HIP source", k.Copied)
	assert.Equal(t, string(k.Orig), string(k.Data))
}

// TestTranslateTreeHashIsContent: a copy of the project elsewhere is the
// same tree (same hash); one byte changed in a header is another tree.
func TestTranslateTreeHashIsContent(t *testing.T) {
	mk := func(dir string, change map[string]string) *Tree {
		writeFiles(t, dir, treeProject)
		writeFiles(t, dir, change)
		p := filepath.Join(dir, "proj")
		tr, err := TranslateTree(TreeRequest{Sources: []string{filepath.Join(p, "kernels", "a.cu")},
			Includes: []string{filepath.Join(p, "include"), filepath.Join(p, "include2")}})
		require.NoError(t, err)
		return tr
	}
	d1, d2 := t.TempDir(), filepath.Join(t.TempDir(), "deeper", "copy")
	t1, t2 := mk(d1, nil), mk(d2, nil)
	assert.Equal(t, t1.Hash, t2.Hash)
	t3 := mk(d2, map[string]string{"proj/kernels/detail/defs.h": "#pragma once\n#define N 5\n"})
	assert.NotEqual(t, t1.Hash, t3.Hash)
}

// TestTranslateTreeOddFiles: Latin-1 text is translated as bytes; a binary
// header is copied with a warning, never dropped; a macro include mirrors
// the includer's directory with a warning.
func TestTranslateTreeOddFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/k.cu":       "#include \"latin1.cuh\"\n#include \"blob.h\"\n#include HEADER\n__global__ void k() {}\n",
		"k/latin1.cuh": "// (c) Jos\xe9 M\xfcller\ninline void f(void **p) { cudaFree(*p); }\n",
		"k/blob.h":     "\x00\x01binary",
		"k/picked.h":   "#pragma once\n",
	})
	tr, err := TranslateTree(TreeRequest{Sources: []string{filepath.Join(dir, "k", "k.cu")}})
	require.NoError(t, err)
	l := tr.File(filepath.Join(dir, "k", "latin1.cuh"))
	assert.Contains(t, string(l.Data), "// (c) Jos\xe9 M\xfcller\n")
	assert.Contains(t, string(l.Data), "hipFree(*p)")
	b := tr.File(filepath.Join(dir, "k", "blob.h"))
	assert.Equal(t, "\x00\x01binary", string(b.Data))
	assert.Equal(t, "not text", b.Copied)
	assert.NotNil(t, tr.File(filepath.Join(dir, "k", "picked.h")), "a macro include mirrors the directory's headers")
	w := strings.Join(tr.Warnings, "\n")
	assert.Contains(t, w, "blob.h: copied untranslated")
	assert.Contains(t, w, "an #include names a macro")
}

// TestTranslateTreeCompatName: rocmk's own header of an older run is
// replaced by the current one; a user's file of that name is an error.
func TestTranslateTreeCompatName(t *testing.T) {
	dir := t.TempDir()
	old := string(hipify.CompatHeader()[:200]) + "\n// an older rocmk\n"
	writeFiles(t, dir, map[string]string{"k/k.cu": "#include \"rocmk_hip_compat.h\"\n", "k/rocmk_hip_compat.h": old})
	tr, err := TranslateTree(TreeRequest{Sources: []string{filepath.Join(dir, "k", "k.cu")}})
	require.NoError(t, err)
	assert.Equal(t, string(hipify.CompatHeader()), string(tr.File(filepath.Join(dir, "k", "rocmk_hip_compat.h")).Data))

	writeFiles(t, dir, map[string]string{"k/rocmk_hip_compat.h": "// mine\n"})
	_, err = TranslateTree(TreeRequest{Sources: []string{filepath.Join(dir, "k", "k.cu")}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rocmk_hip_compat.h that rocmk did not write")
}

// TestTranslateTreeFIFO: an include that is a named pipe is an error
// naming it, not a hang.
func TestTranslateTreeFIFO(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"k.cu": "#include \"pipe.h\"\n"})
	mkfifo(t, filepath.Join(dir, "pipe.h"))
	done := make(chan error, 1)
	go func() {
		_, err := TranslateTree(TreeRequest{Sources: []string{filepath.Join(dir, "k.cu")}})
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "pipe.h")
	case <-time.After(10 * time.Second):
		t.Fatal("TranslateTree blocked on a named pipe")
	}
}

func placedTree(t *testing.T) (*Tree, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, treeProject)
	p := filepath.Join(dir, "proj")
	tr, err := TranslateTree(TreeRequest{Sources: []string{filepath.Join(p, "kernels", "a.cu")},
		Includes: []string{filepath.Join(p, "include"), filepath.Join(p, "include2")}})
	require.NoError(t, err)
	return tr, filepath.Join(dir, "cache", "trees")
}

// TestTreePlaceReuse: Place writes the tree whole; a second Place (another
// run, same bytes) reuses it without writing; include directories exist.
func TestTreePlaceReuse(t *testing.T) {
	tr, root := placedTree(t)
	require.NoError(t, tr.Place(root))
	assert.Equal(t, filepath.Join(root, tr.Hash[:32]), tr.Dir)
	for _, f := range tr.Files {
		data, err := os.ReadFile(tr.Path(f.Rel))
		require.NoError(t, err)
		assert.Equal(t, string(f.Data), string(data), f.Rel)
	}
	for _, d := range tr.Includes {
		fi, err := os.Stat(tr.Path(d))
		require.NoError(t, err)
		assert.True(t, fi.IsDir())
	}
	a := tr.Path("src/kernels/a.cu")
	before, err := os.Stat(a)
	require.NoError(t, err)
	again := *tr
	again.Dir = ""
	require.NoError(t, again.Place(root))
	after, err := os.Stat(a)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "a reused tree is not rewritten")
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range ents {
		assert.False(t, strings.HasPrefix(e.Name(), ".tmp-"), "left behind: %s", e.Name())
	}
}

// TestTreePlaceRepairs: a tree changed, added to or cut short after it
// was placed is replaced whole by the next Place.
func TestTreePlaceRepairs(t *testing.T) {
	for name, damage := range map[string]func(tr *Tree){
		"changed":   func(tr *Tree) { require.NoError(t, os.WriteFile(tr.Path("src/kernels/utils.cuh"), []byte("x"), 0o644)) },
		"removed":   func(tr *Tree) { require.NoError(t, os.Remove(tr.Path("src/shared/common.h"))) },
		"added":     func(tr *Tree) { require.NoError(t, os.WriteFile(tr.Path("src/kernels/api.h"), nil, 0o644)) },
		"emptied":   func(tr *Tree) { require.NoError(t, os.Truncate(tr.Path("src/kernels/a.cu"), 0)) },
		"no -I dir": func(tr *Tree) { require.NoError(t, os.RemoveAll(tr.Path("src/include2"))) },
	} {
		t.Run(name, func(t *testing.T) {
			tr, root := placedTree(t)
			require.NoError(t, tr.Place(root))
			damage(tr)
			require.False(t, tr.complete(tr.Dir))
			require.NoError(t, tr.Place(root))
			assert.True(t, tr.complete(tr.Dir))
		})
	}
}

// TestTreePlaceConcurrent: many runs placing one tree at once all end
// with the whole tree, and leave nothing aside.
func TestTreePlaceConcurrent(t *testing.T) {
	tr, root := placedTree(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := *tr
			if err := mine.Place(root); err != nil {
				errs <- err
				return
			}
			if !mine.complete(mine.Dir) {
				errs <- fmt.Errorf("incomplete tree after Place")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{tr.Hash[:32], "trim.txt"}, names)
}
