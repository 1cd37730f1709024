package compile

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/toolchain"
)

// These tests run the real clang on tiny kernels (no HIP headers, so each
// compile takes a fraction of a second) in real directories.

// tinyKernel stores VALUE (from its headers) into p[0].
const tinyKernel = "extern \"C\" __attribute__((global)) void k(float* p) { p[0] = VALUE; }\n"

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
}

type realBuild struct {
	t        *testing.T
	tc       *toolchain.Clang
	cacheDir string
}

// build builds src in base through the cache and without it, checks the
// two objects are the same bytes, and returns the cached build's status.
func (rb realBuild) build(base, src string, flags ...string) (Status, []byte) {
	t := rb.t
	t.Helper()
	req := Request{BaseDir: base, Sources: []string{filepath.Join(base, src)}, Targets: targets("gfx90a"), Flags: flags,
		OutDir: filepath.Join(base, "out"), NoManifest: true}
	rep, err := realBuilder(t, rb.tc, rb.cacheDir).Build(context.Background(), req)
	require.NoError(t, err)
	got, err := os.ReadFile(rep.Results[0].Out)
	require.NoError(t, err)
	req.OutDir = filepath.Join(base, "out-nocache")
	rep2, err := realBuilder(t, rb.tc, "").Build(context.Background(), req)
	require.NoError(t, err)
	want, err := os.ReadFile(rep2.Results[0].Out)
	require.NoError(t, err)
	require.Equal(t, want, got, "%s %s: cached build (%s) differs from a build without the cache", base, src, rep.Results[0].Status)
	return rep.Results[0].Status, got
}

func newRealBuild(t *testing.T) realBuild {
	return realBuild{t: t, tc: realClang(t, toolchain.LayoutClang), cacheDir: filepath.Join(t.TempDir(), "cache")}
}

// TestRealCopyOfProject: a byte-identical copy hits and gets the same
// object; a copy with one header changed misses.
func TestRealCopyOfProject(t *testing.T) {
	rb := newRealBuild(t)
	root := t.TempDir()
	files := map[string]string{"src/k.hip": "#include \"local.h\"\n#include <v.h>\n" + tinyKernel,
		"src/local.h": "#define ONE 1.0f\n", "include/v.h": "#define VALUE (ONE + 2.0f)\n"}
	for _, p := range []string{"a", "b", "c"} {
		write(t, filepath.Join(root, p), files)
	}
	write(t, filepath.Join(root, "c"), map[string]string{"include/v.h": "#define VALUE (ONE + 3.0f)\n"})
	build := func(p string) (Status, []byte) {
		// -I given absolute, as rocmk build's -I and rocmk.toml make it.
		return rb.build(filepath.Join(root, p), "src/k.hip", "-I"+filepath.Join(root, p, "include"))
	}
	st, a := build("a")
	require.Equal(t, StatusCompiled, st)
	st, b := build("b")
	assert.Equal(t, StatusHit, st, "an identical copy")
	assert.Equal(t, a, b)
	st, c := build("c")
	assert.Equal(t, StatusCompiled, st, "a copy with another header")
	assert.NotEqual(t, a, c)
}

// TestRealLocationFlagKeepsCopiesApart: with -g the object records the
// directory it was built in, so copies must not share it.
func TestRealLocationFlagKeepsCopiesApart(t *testing.T) {
	rb := newRealBuild(t)
	root := t.TempDir()
	for _, p := range []string{"a", "b"} {
		write(t, filepath.Join(root, p), map[string]string{"k.hip": "#define VALUE 1.0f\n" + tinyKernel})
	}
	st, a := rb.build(filepath.Join(root, "a"), "k.hip", "-g")
	require.Equal(t, StatusCompiled, st)
	st, b := rb.build(filepath.Join(root, "b"), "k.hip", "-g")
	assert.Equal(t, StatusCompiled, st)
	assert.NotEqual(t, a, b, "debug info names the directory")
}

// TestRealMissingSearchDirCreated: -I of a directory that does not exist
// (clang drops it), then created with a header that shadows one found
// later in the search: a miss.
func TestRealMissingSearchDirCreated(t *testing.T) {
	rb := newRealBuild(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{"k.hip": "#include <v.h>\n" + tinyKernel, "inc2/v.h": "#define VALUE 2.0f\n"})
	flags := []string{"-Iinc1", "-Iinc2"}
	st, a := rb.build(dir, "k.hip", flags...)
	require.Equal(t, StatusCompiled, st)
	st, _ = rb.build(dir, "k.hip", flags...)
	require.Equal(t, StatusHit, st)
	write(t, dir, map[string]string{"inc1/v.h": "#define VALUE 1.0f\n"})
	st, b := rb.build(dir, "k.hip", flags...)
	assert.Equal(t, StatusCompiled, st)
	assert.NotEqual(t, a, b)
}

// TestRealIncludeNextShadowed: a header reached through #include_next is
// shadowed by one created between the two directories.
func TestRealIncludeNextShadowed(t *testing.T) {
	rb := newRealBuild(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{"k.hip": "#include <v.h>\n" + tinyKernel,
		"a/v.h": "#include_next <v.h>\n", "c/v.h": "#define VALUE 3.0f\n"})
	write(t, dir, map[string]string{"b/.keep": ""})
	flags := []string{"-Ia", "-Ib", "-Ic"}
	st, _ := rb.build(dir, "k.hip", flags...)
	require.Equal(t, StatusCompiled, st)
	write(t, dir, map[string]string{"b/v.h": "#define VALUE 2.0f\n"})
	st, _ = rb.build(dir, "k.hip", flags...)
	assert.Equal(t, StatusCompiled, st)
}

// TestRealNotStored: an #include whose name is a macro, and a source that
// reads the clock, compile every time (and are right every time).
func TestRealNotStored(t *testing.T) {
	rb := newRealBuild(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"m.hip": "#define HDR \"v.h\"\n#include HDR\n" + tinyKernel, "v.h": "#define VALUE 1.0f\n",
		"clock.hip": "#define VALUE 1.0f\n__attribute__((used)) __attribute__((device)) const char when[] = __TIME__;\n" + tinyKernel,
	})
	for i := 0; i < 2; i++ {
		st, _ := rb.build(dir, "m.hip")
		assert.Equal(t, StatusCompiled, st, "#include MACRO")
	}
	// __TIME__: the object differs from second to second, so no
	// comparison with a build without the cache; it must compile each time.
	for i := 0; i < 2; i++ {
		req := Request{BaseDir: dir, Sources: []string{filepath.Join(dir, "clock.hip")}, Targets: targets("gfx90a"), OutDir: filepath.Join(dir, "out")}
		rep, err := realBuilder(t, rb.tc, rb.cacheDir).Build(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, StatusCompiled, rep.Results[0].Status, "__TIME__")
	}
}

// TestRealRefusesSpecialIncludes: a source including a FIFO or /dev/zero
// fails at once with the file and line, whether or not the cache is on,
// and the compiler never runs (it would block or read forever).
func TestRealRefusesSpecialIncludes(t *testing.T) {
	tc := realClang(t, toolchain.LayoutClang)
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "fifo.h"))
	write(t, dir, map[string]string{
		"zero.hip": "#define VALUE 1.0f\n#include \"/dev/zero\"\n" + tinyKernel,
		"fifo.hip": "#define VALUE 1.0f\n#include \"hdr.h\"\n" + tinyKernel,
		"hdr.h":    "// a header that includes the FIFO\n#if __has_include(\"fifo.h\")\n#endif\n",
	})
	for _, cacheDir := range []string{"", filepath.Join(dir, "cache")} {
		done := make(chan struct{})
		var errs []string
		go func() {
			defer close(done)
			for _, src := range []string{"zero.hip", "fifo.hip"} {
				_, err := realBuilder(t, tc, cacheDir).Build(context.Background(), Request{BaseDir: dir,
					Sources: []string{filepath.Join(dir, src)}, Targets: targets("gfx90a"), OutDir: filepath.Join(dir, "out")})
				if err != nil {
					errs = append(errs, err.Error())
				} else {
					errs = append(errs, "")
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("build blocked on a special include")
		}
		assert.Equal(t, []string{
			"# zero.hip [gfx90a]\nzero.hip:2: #include \"/dev/zero\": /dev/zero is a character device, not a regular file: not compiled (the compiler would block or read forever)",
			"# fifo.hip [gfx90a]\nhdr.h:2: __has_include(\"fifo.h\"): fifo.h is a FIFO, not a regular file: not compiled (the compiler would block or read forever)",
		}, errs)
	}
	// A FIFO as the source itself.
	mkfifo(t, filepath.Join(dir, "src.hip"))
	_, err := realBuilder(t, tc, "").Build(context.Background(), Request{BaseDir: dir,
		Sources: []string{filepath.Join(dir, "src.hip")}, Targets: targets("gfx90a"), OutDir: filepath.Join(dir, "out")})
	assert.ErrorContains(t, err, "src.hip: not a regular file")
}
