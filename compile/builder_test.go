package compile

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

func fakeBuilder(t *testing.T, fr *fakeRunner, jobs int) (*Builder, string) {
	dir := t.TempDir()
	copyFiles(t, dir, "vadd.hip", "scale.h")
	c, err := cache.Open(filepath.Join(dir, "cache"))
	require.NoError(t, err)
	return &Builder{TC: fakeClangTC(), Run: fr, Jobs: jobs, Cache: c,
		Environ: noEnv}, dir
}

func TestBuildParallelOneTargetFails(t *testing.T) {
	fr := newFake(t)
	fr.fail = map[string]string{"gfx1030": "vadd.hip:3:10: error: use of undeclared identifier 'x'\n"}
	fr.objects["gfx908"] = fr.objects["gfx90a"] // a compiler that writes the wrong target
	b, dir := fakeBuilder(t, fr, 8)
	out := filepath.Join(dir, "out")
	rep, err := b.Build(context.Background(), Request{Sources: []string{filepath.Join(dir, "vadd.hip")},
		Targets: targets("gfx90a", "gfx1030", "gfx908"), OutDir: out, Bundle: true})
	var list ErrorList
	require.ErrorAs(t, err, &list)
	require.Len(t, list, 2)
	assert.Equal(t, "# vadd.hip [gfx1030]\nvadd.hip:3:10: error: use of undeclared identifier 'x'", list[1].Error()) // sorted by processor
	assert.Equal(t, StatusCompiled, rep.Results[0].Status)
	assert.Equal(t, StatusFailed, rep.Results[1].Status)
	// gfx908 got a gfx90a object: the read-back check must refuse it.
	assert.Equal(t, StatusFailed, rep.Results[2].Status)
	assert.ErrorContains(t, rep.Results[2].Err, "code object is for gfx90a, not gfx908")
	assert.FileExists(t, filepath.Join(out, "vadd-gfx90a.hsaco"))
	assert.NoFileExists(t, filepath.Join(out, "vadd-gfx1030.hsaco"))
	assert.NoFileExists(t, filepath.Join(out, "vadd.hipfb"), "no bundle when a target failed")
	assert.FileExists(t, filepath.Join(out, ManifestFile))
}

func TestBuildCacheHitsWithFakeRunner(t *testing.T) {
	fr := newFake(t)
	b, dir := fakeBuilder(t, fr, 4)
	req := Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx90a", "gfx1030"), OutDir: filepath.Join(dir, "out")}
	_, err := b.Build(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, 2, fr.compiles())
	rep, err := b.Build(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, 2, fr.compiles(), "second build must not compile")
	assert.Equal(t, 2, rep.Count(StatusHit))
	// The header recorded from the depfile is part of the key.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scale.h"), []byte("#define SCALE 2.0f\n"), 0o644))
	rep, err = b.Build(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, 4, fr.compiles())
	assert.Equal(t, 0, rep.Count(StatusHit))
}

func TestBuildCancelKillsAndLeavesNothing(t *testing.T) {
	fr := newFake(t)
	fr.block = make(chan struct{})
	fr.started = make(chan string, 16)
	b, dir := fakeBuilder(t, fr, 2)
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := b.Build(ctx, Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx90a", "gfx1030", "gfx900", "gfx906"), OutDir: out})
		done <- err
	}()
	<-fr.started
	<-fr.started // both workers are inside the compiler
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Build did not return after cancel")
	}
	assert.Equal(t, 2, fr.compiles(), "nothing new starts after cancel")
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		t.Errorf("left behind after cancel: %s", e.Name())
	}
}

func TestExecRunnerCancelKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	r := &runner.ExecRunner{}
	// The shell starts a grandchild (like clang starting lld) and waits.
	_, err := r.Run(ctx, runner.Cmd{Argv: []string{"sh", "-c", "sleep 30 & echo $! > " + pidFile + "; wait"}})
	assert.ErrorIs(t, err, context.Canceled)
	b, rerr := os.ReadFile(pidFile)
	require.NoError(t, rerr)
	pid := strings.TrimSpace(string(b))
	// The grandchild must be gone (killed with the group).
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %s survived cancel", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDryRunPrintsAndRunsNothing(t *testing.T) {
	var buf strings.Builder
	r := &runner.Shell{Runner: runner.ExecRunner{}, Print: &buf, DryRun: true}
	tc := fakeClangTC()
	tc.Driver, tc.Clang = "/usr/bin/clang++-15", "/usr/bin/clang++-15" // a dry run reads no binary
	tc.DeviceLibDir = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"       // nor device library
	b := &Builder{TC: tc, Run: r, DryRun: true}
	rep, err := b.Build(context.Background(), Request{BaseDir: "/nonexistent", Sources: []string{"/nonexistent/k.hip"}, Targets: targets("gfx90a", "gfx1030"), OutDir: "/nonexistent/out"})
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Count(StatusSkipped))
	want := "cd /nonexistent && /usr/bin/clang++-15 -x hip --offload-arch=gfx90a --cuda-device-only --no-gpu-bundle-output -O3 --rocm-path=/usr --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode -cuid=112bf8ff6c908956 -c k.hip -o /nonexistent/out/k-gfx90a.hsaco\n" +
		"cd /nonexistent && /usr/bin/clang++-15 -x hip --offload-arch=gfx1030 --cuda-device-only --no-gpu-bundle-output -O3 --rocm-path=/usr --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode -cuid=112bf8ff6c908956 -c k.hip -o /nonexistent/out/k-gfx1030.hsaco\n"
	assert.Equal(t, want, buf.String())
	assert.NoDirExists(t, "/nonexistent/out")
}

func TestUnsupportedTargetMessage(t *testing.T) {
	err := fakeClangTC().Check(inspect.MustParseTarget("gfx1100"))
	var ue *toolchain.UnsupportedTargetError
	require.ErrorAs(t, err, &ue)
	msg := err.Error()
	assert.Contains(t, msg, "target gfx1100 is not supported by clang++-15 15.0.6, ROCm 5.2.3")
	assert.Contains(t, msg, "oclc_isa_version_1100.bc")
	assert.Contains(t, msg, "gfx900 gfx906 gfx908 gfx90a gfx940 gfx1030")
	assert.Contains(t, msg, "gfx1100 is supported by ROCm 5.5 or later")
}

func TestCheckObject(t *testing.T) {
	a, err := os.ReadFile(testdata("vadd-gfx90a.hsaco"))
	require.NoError(t, err)
	assert.NoError(t, CheckObject(a, inspect.MustParseTarget("gfx90a")))
	assert.ErrorContains(t, CheckObject(a, inspect.MustParseTarget("gfx1030")), "code object is for gfx90a, not gfx1030")
	assert.ErrorContains(t, CheckObject(a, inspect.MustParseTarget("gfx90a:xnack-")), "xnack")
	assert.Error(t, CheckObject(a[:40], inspect.MustParseTarget("gfx90a")))
	assert.Error(t, CheckObject([]byte("#!/bin/sh\n"+strings.Repeat("x", 100)), inspect.MustParseTarget("gfx90a")))
	co, err := toolchain.ReadObject(a, inspect.MustParseTarget("gfx90a"))
	require.NoError(t, err)
	assert.Equal(t, []KernelUsage{{Name: "vadd", VGPRs: co.Kernels[0].VGPRs, SGPRs: co.Kernels[0].SGPRs}}, kernelUsage(co))
	assert.Equal(t, "gfx90a", co.Target.Proc)
	assert.Positive(t, co.Kernels[0].VGPRs, "resources from the same parse")
}

func TestCorruptCacheEntryIsMiss(t *testing.T) {
	fr := newFake(t)
	b, dir := fakeBuilder(t, fr, 1)
	req := Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx90a"), OutDir: filepath.Join(dir, "out")}
	_, err := b.Build(context.Background(), req)
	require.NoError(t, err)
	// Flip one byte in every stored code object (data files of 4 KiB; the
	// deps entry is small JSON).
	n := 0
	filepath.WalkDir(filepath.Join(dir, "cache"), func(p string, d os.DirEntry, err error) error {
		if fi, _ := os.Stat(p); err == nil && !d.IsDir() && strings.HasSuffix(p, "-d") && fi.Size() > 1000 {
			data, _ := os.ReadFile(p)
			data[len(data)-100] ^= 0x40
			os.WriteFile(p, data, 0o644)
			n++
		}
		return nil
	})
	require.Equal(t, 1, n)
	rep, err := b.Build(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, StatusCompiled, rep.Results[0].Status)
	assert.Equal(t, 2, fr.compiles())
	got, _ := os.ReadFile(filepath.Join(dir, "out", "vadd-gfx90a.hsaco"))
	assert.Equal(t, fr.objects["gfx90a"], got)
}

// TestHeaderEditWithRestoredMtime: an edit of the same size whose mtime is
// set back must still miss (the recorded stat data includes ctime), while
// a header whose stat data is unchanged is not re-read.
func TestHeaderEditWithRestoredMtime(t *testing.T) {
	defer func(s time.Duration) { statSlack = s }(statSlack)
	statSlack = -time.Hour // trust recorded hashes regardless of age
	fr := newFake(t)
	b, dir := fakeBuilder(t, fr, 1)
	req := Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx90a"), OutDir: filepath.Join(dir, "out")}
	hdr := filepath.Join(dir, "scale.h")
	fi, err := os.Stat(hdr)
	require.NoError(t, err)
	_, err = b.Build(context.Background(), req)
	require.NoError(t, err)
	rep, err := b.Build(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, StatusHit, rep.Results[0].Status)
	require.NoError(t, os.WriteFile(hdr, []byte("#define SCALE 3.0f\n"), 0o644)) // same size as "1.0f"
	require.NoError(t, os.Chtimes(hdr, fi.ModTime(), fi.ModTime()))
	b.hashes = fileHashes{} // a new process
	rep, err = b.Build(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, StatusCompiled, rep.Results[0].Status)
}

func FuzzDepsEntry(f *testing.F) {
	f.Add([]byte(depsEntry{Alts: []depsAlt{{Recorded: 5, Groups: []string{strings.Repeat("b", 64)}, Files: []depRecord{
		{Kind: recFile, Path: "/a b/c.h", Size: 1, MTime: 2, CTime: 3, Ino: 4, Hash: strings.Repeat("a", 64)},
		{Kind: recProbe, Path: "inc/x.h", State: "absent"}, {Kind: recSearchDir, Path: "nodir", State: "none"},
		{Kind: recInstall, Path: "/usr/lib/gcc/x", State: "1.2.3"}}}, {Recorded: 6}}}.marshal(depsMagic)))
	f.Add([]byte("rocmk-deps v2\n@ 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseDepsEntry(b, depsMagic)
		if err != nil {
			return
		}
		d2, err := parseDepsEntry(d.marshal(depsMagic), depsMagic)
		if err != nil {
			t.Fatalf("round trip: %v", err)
		}
		if !reflect.DeepEqual(d2, d) {
			t.Fatalf("round trip changed the entry")
		}
	})
}

// TestEntryKeysDistinct: a job with no records at all (no includes, no
// search-path facts) must not store its object under its deps entry's key.
func TestEntryKeysDistinct(t *testing.T) {
	b := &Builder{}
	base := cache.ActionID{1}
	keys := map[cache.ActionID]string{depsKey(base): "deps", b.objectKey(base, nil, nil): "object", groupKey(base): "group entry",
		b.groupDigest(nil): "empty group"}
	assert.Len(t, keys, 4, "%v", keys)
}

// remoteStore is a Store whose every hit says it came from a server, as a
// remote tier's fetches do.
type remoteStore struct{ *cache.Cache }

func (s remoteStore) GetBytes(id cache.ActionID) ([]byte, cache.Entry, error) {
	b, e, err := s.Cache.GetBytes(id)
	e.Remote = true
	return b, e, err
}

// A hit says where its object came from: the Store's lookup, not a later
// guess from the object's hash.
func TestResultCacheSaysWhereAHitCameFrom(t *testing.T) {
	fr := newFake(t)
	b, dir := fakeBuilder(t, fr, 2)
	req := Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx90a", "gfx1030"), OutDir: filepath.Join(dir, "out")}
	rep, err := b.Build(context.Background(), req)
	require.NoError(t, err)
	for _, r := range rep.Results {
		assert.Equal(t, StatusCompiled, r.Status)
		assert.Empty(t, r.Cache, "compiled, not a hit")
	}
	rep, err = b.Build(context.Background(), req)
	require.NoError(t, err)
	for _, r := range rep.Results {
		assert.Equal(t, "local", r.Cache)
	}
	b.Cache = remoteStore{b.Cache.(*cache.Cache)}
	rep, err = b.Build(context.Background(), req)
	require.NoError(t, err)
	for _, r := range rep.Results {
		assert.Equal(t, StatusHit, r.Status)
		assert.Equal(t, "remote", r.Cache)
	}
}

// Fetch looks jobs up and stops there: what the cache has is a hit (and
// reaches the local cache through a tier), what it lacks is missing, and
// nothing compiles or is written.
func TestBuildFetchOnly(t *testing.T) {
	fr := newFake(t)
	b, dir := fakeBuilder(t, fr, 2)
	out := filepath.Join(dir, "out")
	req := Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx90a"), OutDir: out}
	_, err := b.Build(context.Background(), req)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(out))
	b.Fetch = true
	req.Targets = targets("gfx90a", "gfx1030")
	rep, err := b.Build(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, StatusHit, rep.Results[0].Status)
	assert.Equal(t, StatusMissing, rep.Results[1].Status)
	assert.Equal(t, 1, fr.compiles(), "nothing compiled")
	assert.NoDirExists(t, out, "no output, manifest or directory")
}

// countingStore counts the reads of each entry.
type countingStore struct {
	Store
	mu    sync.Mutex
	reads map[cache.ActionID]int
}

func (s *countingStore) GetBytes(id cache.ActionID) ([]byte, cache.Entry, error) {
	s.mu.Lock()
	s.reads[id]++
	s.mu.Unlock()
	return s.Store.GetBytes(id)
}

// TestBuildReadsEachEntryOnce (issue 19): storing a compile reuses what the
// lookup read. Each read is a round trip to a remote cache, or a timeout
// when it hangs: the deps entry was read twice per compiled job, and the
// shared group once more.
func TestBuildReadsEachEntryOnce(t *testing.T) {
	fr := newFake(t)
	b, dir := fakeBuilder(t, fr, 1)
	cs := &countingStore{Store: b.Cache, reads: map[cache.ActionID]int{}}
	b.Cache = cs
	req := Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx90a"), OutDir: filepath.Join(dir, "out")}
	rep, err := b.Build(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, StatusCompiled, rep.Results[0].Status)
	for id, n := range cs.reads {
		assert.Equal(t, 1, n, "entry %s read %d times in a one-job build", id, n)
	}
	clear(cs.reads)
	rep, err = b.Build(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, StatusHit, rep.Results[0].Status, "what was stored is found")
	for id, n := range cs.reads {
		assert.Equal(t, 1, n, "entry %s read %d times", id, n)
	}
}

// TestDepsEntryOutsideReadRootsIsNotFollowed (issue 19): a deps entry
// written by someone else (a shared cache) that names a path no compile of
// the job reads is a miss before anything is stat'ed there, so a server
// cannot learn whether a file of the user's exists. The build compiles, and
// its own entry replaces the bad one.
func TestDepsEntryOutsideReadRootsIsNotFollowed(t *testing.T) {
	fr := newFake(t)
	b, dir := fakeBuilder(t, fr, 1)
	req := Request{BaseDir: dir, Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx90a"), OutDir: filepath.Join(dir, "out")}
	_, err := b.Build(context.Background(), req)
	require.NoError(t, err)

	secret := filepath.Join(t.TempDir(), "id_rsa") // outside the project, the flags and the toolchain
	require.NoError(t, os.WriteFile(secret, []byte("key"), 0o600))
	tc, tcID, err := b.toolchain(context.Background(), req.Targets[0])
	require.NoError(t, err)
	base, err := b.baseKey(tc, tcID, toolchain.Job{Src: "vadd.hip", Dir: dir, Target: req.Targets[0], Flags: nil})
	require.NoError(t, err)
	for _, kind := range []byte{recProbe, recFile} {
		rec := depRecord{Kind: kind, Path: secret, State: "present", Hash: strings.Repeat("0", 64)}
		bad := depsEntry{Alts: []depsAlt{{Recorded: 1, Files: []depRecord{rec}}}}
		require.NoError(t, put(b.Cache, depsKey(base), bad.marshal(depsMagic), cache.Meta{Kind: "deps"}))
		before := fr.compiles()
		rep, err := b.Build(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, StatusCompiled, rep.Results[0].Status, "a miss")
		assert.Equal(t, before+1, fr.compiles())
		b.paths.mu.Lock()
		_, statted := b.paths.m[secret]
		b.paths.mu.Unlock()
		assert.False(t, statted, "%c record: %s must not be stat'ed", kind, secret)
		rep, err = b.Build(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, StatusHit, rep.Results[0].Status, "the build's own entry is found")
	}
}

func TestReadRoots(t *testing.T) {
	j := toolchain.Job{Dir: "/p", Src: "src/k.hip", Flags: []string{"-I", "/opt/lib/include", "-isystem../sib", "-DX=/etc"}}
	roots := readRoots(fakeClangTC(), j, []string{"CPATH=/cp1:/cp2", "HOME=/home/u"})
	for name, want := range map[string]bool{
		"inc/h.h": true, "/p/src/x.h": true, "/usr/include/stdio.h": true, "/opt/lib/include/a.h": true,
		"../sib/h.h": true, "/cp2/h.h": true, "/home/u/.ssh/id_rsa": false, "/etc/passwd": false,
		"../other/h.h": false, "inc/../../other/h.h": false, "/opt/lib/includeX/h.h": false,
	} {
		assert.Equal(t, want, underRoots(name, "/p", roots), name)
	}
	assert.True(t, recordsUnder([]depRecord{{Kind: recSearchDir, Path: "/include"}}, "/p", roots), "a top-level missing search directory")
	assert.False(t, recordsUnder([]depRecord{{Kind: recProbe, Path: "/include"}}, "/p", roots))
}
