package toolchain

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocmk/rocmk/cache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/runner"
)

// ISAVersion reproduces the constant of every processor's ISA library that
// ROCm 7.0.2 ships, and refuses generic targets and unknown names.
func TestISAVersion(t *testing.T) {
	f, err := os.Open(testdata("devlibs/isa-versions-rocm-7.0.2.txt"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.Fields(sc.Text())
		if len(line) != 2 || strings.HasPrefix(line[0], "#") {
			continue
		}
		want, err := strconv.Atoi(line[1])
		require.NoError(t, err)
		got, err := ISAVersion(line[0])
		if strings.HasSuffix(line[0], "-generic") {
			assert.ErrorContains(t, err, "generic target", line[0])
			continue
		}
		n++
		if assert.NoError(t, err, line[0]) {
			assert.Equal(t, want, got, line[0])
		}
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 47, n, "processors checked")
	for _, bad := range []string{"gfx91", "sm_90", "", "gfx"} {
		_, err := ISAVersion(bad)
		assert.Error(t, err, bad)
	}
}

// isaRunner stands for clang in the device-library tests: it checks the
// command, reads the IR it was given and writes it, prefixed with the
// bitcode magic, where -o says.
type isaRunner struct {
	mu    sync.Mutex
	cmds  []runner.Cmd
	delay time.Duration
	fail  string // stderr of a failing run
	empty bool   // write nothing
}

func (r *isaRunner) Run(ctx context.Context, c runner.Cmd) (runner.Output, error) {
	r.mu.Lock()
	r.cmds = append(r.cmds, c)
	r.mu.Unlock()
	time.Sleep(r.delay)
	if r.fail != "" {
		return runner.Output{Stderr: []byte(r.fail)}, errors.New("exit status 1")
	}
	argv := c.Argv
	if len(argv) != 10 || argv[1] != "-x" || argv[2] != "ir" || argv[7] != "isa.ll" || argv[8] != "-o" {
		return runner.Output{}, fmt.Errorf("unexpected argv %q", argv)
	}
	ir, err := os.ReadFile(filepath.Join(c.Dir, argv[7]))
	if err != nil {
		return runner.Output{}, err
	}
	if r.empty {
		return runner.Output{}, nil
	}
	return runner.Output{}, os.WriteFile(filepath.Join(c.Dir, argv[9]), append([]byte("BC\xc0\xde"), ir...), 0o644)
}

func (r *isaRunner) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.cmds)
}

// fakeBitcodeDir makes a device-library directory with ocml, ockl, the
// control libraries and ISA libraries for procs (contents: their names).
func fakeBitcodeDir(t *testing.T, procs ...string) string {
	dir := t.TempDir()
	names := []string{"ocml.bc", "ockl.bc", "oclc_abi_version_500.bc", "oclc_wavefrontsize64_off.bc", "opencl.bc"}
	for _, p := range procs {
		names = append(names, isaFile(p))
	}
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644))
	}
	return dir
}

// devlibRequest generates into a cache directory, as builds do.
func devlibRequest(t *testing.T, base string, r runner.Runner) DeviceLibRequest {
	cc, err := cache.Open(t.TempDir())
	require.NoError(t, err)
	return DeviceLibRequest{Base: base, Clang: "/usr/lib/llvm-19/bin/clang++", ClangID: "clang 19.1.7", CacheDir: cc.Dir(), Run: r}
}

func TestPrepareDeviceLibsUsesTheToolchainsOwnFile(t *testing.T) {
	base := fakeBitcodeDir(t, "gfx1030", "gfx1100")
	run := &isaRunner{}
	r := devlibRequest(t, base, run)
	libs, err := PrepareDeviceLibs(context.Background(), r, "gfx1100")
	require.NoError(t, err)
	assert.Equal(t, base, libs.Dir)
	assert.False(t, libs.Generated)
	assert.Equal(t, 11000, libs.ISAVersion)
	assert.Equal(t, 0, run.calls(), "nothing to generate")
	assert.NoDirExists(t, filepath.Join(r.CacheDir, "devlibs"))
}

// libsID is the identity a Builder keys a device-library directory with.
func libsID(t *testing.T, dir string) string {
	t.Helper()
	files, err := TreeFiles(dir)
	require.NoError(t, err)
	id, err := TreeDigest(dir, files)
	require.NoError(t, err)
	return id
}

func TestPrepareDeviceLibsGenerates(t *testing.T) {
	base := fakeBitcodeDir(t, "gfx1030", "gfx1100")
	run := &isaRunner{}
	r := devlibRequest(t, base, run)
	libs, err := PrepareDeviceLibs(context.Background(), r, "gfx1201")
	require.NoError(t, err)
	assert.True(t, libs.Generated)
	assert.Equal(t, base, libs.Base)
	assert.Equal(t, 12001, libs.ISAVersion)
	assert.Equal(t, filepath.Join(r.CacheDir, "devlibs"), filepath.Dir(libs.Dir))
	assert.True(t, strings.HasPrefix(filepath.Base(libs.Dir), "gfx1201-"), libs.Dir)

	// clang wrote the ISA library from IR defining gfx1201's constant, in a
	// directory of its own, with relative names.
	require.Equal(t, 1, run.calls())
	c := run.cmds[0]
	assert.Equal(t, []string{r.Clang, "-x", "ir", "--target=amdgcn-amd-amdhsa", "-nogpulib", "-c", "-emit-llvm", "isa.ll", "-o", "oclc_isa_version_1201.bc"}, c.Argv)
	assert.NotEqual(t, libs.Dir, c.Dir, "generated aside, then renamed")
	bc, err := os.ReadFile(filepath.Join(libs.Dir, "oclc_isa_version_1201.bc"))
	require.NoError(t, err)
	assert.Contains(t, string(bc), "@__oclc_ISA_version = linkonce_odr hidden local_unnamed_addr addrspace(4) constant i32 12001, align 4")
	assert.Contains(t, string(bc), `target triple = "amdgcn-amd-amdhsa"`)

	// The rest is links to the toolchain's bitcode; no other ISA library,
	// no leftovers.
	ents, err := os.ReadDir(libs.Dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		if e.Name() == cache.AreaMarker {
			continue
		}
		names = append(names, e.Name())
		if e.Name() == "oclc_isa_version_1201.bc" {
			continue
		}
		dest, err := os.Readlink(filepath.Join(libs.Dir, e.Name()))
		require.NoError(t, err, e.Name())
		assert.Equal(t, filepath.Join(base, e.Name()), dest)
	}
	assert.Equal(t, []string{"ockl.bc", "oclc_abi_version_500.bc", "oclc_isa_version_1201.bc", "oclc_wavefrontsize64_off.bc", "ocml.bc", "opencl.bc"}, names)
	assert.Equal(t, []string{"gfx1201"}, DeviceLibProcessors(libs.Dir))
	tmps, _ := filepath.Glob(filepath.Join(r.CacheDir, "devlibs", ".tmp-*"))
	assert.Empty(t, tmps)

	// Next time the directory is reused as it is.
	again, err := PrepareDeviceLibs(context.Background(), r, "gfx1201")
	require.NoError(t, err)
	assert.Equal(t, *libs, *again)
	assert.Equal(t, 1, run.calls(), "clang ran once")
}

// What goes into the directory's name and the identity: another clang,
// other bitcode or another target is another directory; the ID follows the
// content.
func TestPrepareDeviceLibsKey(t *testing.T) {
	base := fakeBitcodeDir(t, "gfx1030")
	r := devlibRequest(t, base, &isaRunner{})
	prep := func(r DeviceLibRequest, proc string) *DeviceLibs {
		t.Helper()
		libs, err := PrepareDeviceLibs(context.Background(), r, proc)
		require.NoError(t, err)
		return libs
	}
	first := prep(r, "gfx1200")
	other := prep(r, "gfx1201")
	assert.NotEqual(t, first.Dir, other.Dir)
	assert.NotEqual(t, libsID(t, first.Dir), libsID(t, other.Dir))

	r2 := r
	r2.ClangID = "clang 19.1.8"
	newClang := prep(r2, "gfx1200")
	assert.NotEqual(t, first.Dir, newClang.Dir, "another clang writes its own bitcode")
	assert.Equal(t, libsID(t, first.Dir), libsID(t, newClang.Dir), "same bytes, same identity")

	firstID := libsID(t, first.Dir)
	require.NoError(t, os.WriteFile(filepath.Join(base, "ockl.bc"), []byte("ockl v2"), 0o644))
	newBase := prep(r, "gfx1200")
	assert.NotEqual(t, first.Dir, newBase.Dir, "the bitcode changed")
	assert.NotEqual(t, firstID, libsID(t, newBase.Dir))

	r3 := r
	r3.BaseID = "given by the caller"
	assert.NotEqual(t, newBase.Dir, prep(r3, "gfx1200").Dir, "the caller's identity of the base names the directory")
}

// Builds racing for one directory all end with the same complete one, and
// nothing is left behind.
func TestPrepareDeviceLibsConcurrent(t *testing.T) {
	base := fakeBitcodeDir(t)
	run := &isaRunner{delay: 20 * time.Millisecond}
	r := devlibRequest(t, base, run)
	const n = 8
	results := make([]*DeviceLibs, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = PrepareDeviceLibs(context.Background(), r, "gfx942")
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, *results[0], *results[i])
	}
	assert.True(t, complete(results[0].Dir, "gfx942", []string{"ockl.bc", "oclc_abi_version_500.bc", "oclc_wavefrontsize64_off.bc", "ocml.bc", "opencl.bc"}))
	ents, err := os.ReadDir(filepath.Join(r.CacheDir, "devlibs"))
	require.NoError(t, err)
	require.Len(t, ents, 1, "one directory, no temporary ones")
	assert.GreaterOrEqual(t, run.calls(), 1)
}

// A crash leaves a temporary directory (removed once stale) or a damaged
// directory (replaced).
func TestPrepareDeviceLibsAfterACrash(t *testing.T) {
	base := fakeBitcodeDir(t)
	run := &isaRunner{}
	r := devlibRequest(t, base, run)
	root := filepath.Join(r.CacheDir, "devlibs")
	stale, fresh := filepath.Join(root, ".tmp-gfx1100-1"), filepath.Join(root, ".tmp-gfx1100-2")
	for _, d := range []string{stale, fresh} {
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "isa.ll"), []byte("half"), 0o644))
	}
	old := time.Now().Add(-2 * time.Hour)
	require.NoError(t, os.Chtimes(stale, old, old))

	libs, err := PrepareDeviceLibs(context.Background(), r, "gfx1100")
	require.NoError(t, err)
	assert.NoDirExists(t, stale, "a crashed run's leftovers")
	assert.DirExists(t, fresh, "may be a live run's")

	// Damaged: the ISA library and a link gone.
	require.NoError(t, os.Remove(filepath.Join(libs.Dir, "oclc_isa_version_1100.bc")))
	require.NoError(t, os.Remove(filepath.Join(libs.Dir, "ocml.bc")))
	again, err := PrepareDeviceLibs(context.Background(), r, "gfx1100")
	require.NoError(t, err)
	assert.Equal(t, libs.Dir, again.Dir)
	assert.FileExists(t, filepath.Join(libs.Dir, "oclc_isa_version_1100.bc"))
	assert.FileExists(t, filepath.Join(libs.Dir, "ocml.bc"))
	assert.Equal(t, 2, run.calls())
	left, _ := filepath.Glob(filepath.Join(root, ".tmp-*-damaged"))
	assert.Empty(t, left)
}

func TestPrepareDeviceLibsErrors(t *testing.T) {
	ctx := context.Background()
	base := fakeBitcodeDir(t, "gfx90a")

	_, err := PrepareDeviceLibs(ctx, devlibRequest(t, base, &isaRunner{fail: "clang: error: unknown argument"}), "gfx1100")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "generating oclc_isa_version_1100.bc for gfx1100")
	assert.Contains(t, err.Error(), "clang: error: unknown argument")

	r := devlibRequest(t, base, &isaRunner{empty: true})
	_, err = PrepareDeviceLibs(ctx, r, "gfx1100")
	assert.ErrorContains(t, err, "wrote no bitcode")
	ents, _ := os.ReadDir(filepath.Join(r.CacheDir, "devlibs"))
	assert.Empty(t, ents, "a failed generation leaves nothing")

	_, err = PrepareDeviceLibs(ctx, devlibRequest(t, base, &isaRunner{}), "gfx11-generic")
	assert.ErrorContains(t, err, "generic target")

	noCache := devlibRequest(t, base, &isaRunner{})
	noCache.CacheDir = ""
	_, err = PrepareDeviceLibs(ctx, noCache, "gfx1100")
	assert.ErrorContains(t, err, "no oclc_isa_version_1100.bc, and there is no cache directory")
	libs, err := PrepareDeviceLibs(ctx, noCache, "gfx90a")
	require.NoError(t, err, "a target the toolchain has needs no cache")
	assert.Equal(t, base, libs.Dir)

	notLibs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(notLibs, "oclc_isa_version_1100.bc"), nil, 0o644))
	_, err = PrepareDeviceLibs(ctx, devlibRequest(t, notLibs, &isaRunner{}), "gfx1100")
	assert.ErrorContains(t, err, "no ocml.bc (not a ROCm bitcode directory)")

	_, err = PrepareDeviceLibs(ctx, devlibRequest(t, filepath.Join(notLibs, "missing"), &isaRunner{}), "gfx1100")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
