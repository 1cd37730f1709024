package commands

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 11 items 5 and 6 for inspect: inputs that never end, bounded
// reads, and --extract written through the one output writer.

func TestInspectRefusesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "k.hsaco")
	mkfifo(t, fifo)
	inTime(t, 10*time.Second, func() {
		r := runRocmk(t, testEnv(nil), "inspect", fifo)
		assert.Equal(t, ExitFailure, r.Code)
		assert.Contains(t, r.Stderr, fifo+": not a regular file (a named pipe)")
		r = runRocmk(t, testEnv(nil), "inspect", "--diff", fifo, corpusPath("host/app"))
		assert.Equal(t, ExitFailure, r.Code)
		assert.Contains(t, r.Stderr, "not a regular file (a named pipe)")
	})
}

func TestInspectInputLimit(t *testing.T) {
	app := corpusPath("host/app")
	r := runRocmk(t, testEnv(map[string]string{"ROCMK_MAX_INPUT": "4KiB"}), "inspect", app)
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stderr, app+": ")
	assert.Contains(t, r.Stderr, "over the limit of 4096 (ROCMK_MAX_INPUT=SIZE raises the limit)")
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_MAX_INPUT": "64MiB"}), "inspect", app)
	assert.Equal(t, 0, r.Code, r.Stderr)
}

func TestInspectExtractWritesThroughSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	// a named pipe where an extracted file goes, with nobody reading: an
	// error, not a hang (the old code blocked opening it)
	fifo := filepath.Join(dir, "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx90a.co")
	mkfifo(t, fifo)
	// a symbolic link where another goes: its target is written, the link kept
	target := filepath.Join(t.TempDir(), "kept.co")
	link := filepath.Join(dir, "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx906.co")
	require.NoError(t, os.Symlink(target, link))
	inTime(t, 10*time.Second, func() {
		r := runRocmk(t, testEnv(nil), "inspect", "--extract", dir, corpusPath("host/app"))
		assert.Equal(t, ExitFailure, r.Code)
		assert.Contains(t, r.Stderr, fifo+": named pipe has no reader")
	})
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&os.ModeNamedPipe != 0, "the pipe is not replaced")
	fi, err = os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&os.ModeSymlink != 0, "the link is kept")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "\x7fELF", string(b[:4]))
}
