package compile

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 11 item 5 for build: outputs go through safefile.Write, so a named
// pipe, a symbolic link or a read-only file in the output directory is
// written as hipify and inspect --extract write it.
func TestBuildPlacesOutputsThroughSafefile(t *testing.T) {
	fr := newFake(t)
	b, dir := fakeBuilder(t, fr, 2)
	out := filepath.Join(dir, "out")
	require.NoError(t, os.MkdirAll(out, 0o755))
	fifo := filepath.Join(out, "vadd-gfx90a.hsaco")
	mkfifo(t, fifo)
	ro := filepath.Join(out, "vadd-gfx1030.hsaco")
	require.NoError(t, os.WriteFile(ro, []byte("keep"), 0o444))
	elsewhere := filepath.Join(t.TempDir(), "manifest.json")
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(out, ManifestFile)))

	done := make(chan struct{})
	var rep *Report
	var err error
	go func() {
		defer close(done)
		rep, err = b.Build(context.Background(), Request{Sources: []string{filepath.Join(dir, "vadd.hip")},
			Targets: targets("gfx90a", "gfx1030"), OutDir: out})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the build blocked on a named pipe in its output directory")
	}
	require.Error(t, err)
	assert.ErrorContains(t, rep.Results[0].Err, fifo+": named pipe has no reader")
	assert.ErrorContains(t, rep.Results[1].Err, ro+": file is read-only; not modified")
	b2, _ := os.ReadFile(ro)
	assert.Equal(t, "keep", string(b2))
	fi, lerr := os.Lstat(filepath.Join(out, ManifestFile))
	require.NoError(t, lerr)
	assert.True(t, fi.Mode()&os.ModeSymlink != 0, "the manifest link is kept")
	assert.FileExists(t, elsewhere, "and its target written")
}

// Issue 11 item 6: a rocmk.toml that is a named pipe is refused, not waited on.
func TestLoadProjectRefusesNamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), ProjectFile)
	mkfifo(t, p)
	done := make(chan error, 1)
	go func() { _, err := LoadProject(p); done <- err }()
	select {
	case err := <-done:
		assert.EqualError(t, err, p+": not a regular file (a named pipe)")
	case <-time.After(10 * time.Second):
		t.Fatal("LoadProject blocked on a named pipe")
	}
}
