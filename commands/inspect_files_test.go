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
// reads, and --extract written whole (never replacing what is in DIR).

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

// Issue 19 item 1: --extract never replaces what is in DIR and never
// follows a link there (the old code wrote through both, and blocked or
// failed on a named pipe): each such entry gets the next free name, with a
// warning naming the file that was kept.
func TestInspectExtractKeepsWhatIsInDir(t *testing.T) {
	dir := t.TempDir()
	// a named pipe where an extracted file goes: not opened, so no wait
	fifo := filepath.Join(dir, "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx90a.co")
	mkfifo(t, fifo)
	// a symbolic link to a file outside DIR where another goes
	victim := filepath.Join(t.TempDir(), "victim.txt")
	require.NoError(t, os.WriteFile(victim, []byte("victim"), 0o644))
	link := filepath.Join(dir, "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx906.co")
	require.NoError(t, os.Symlink(victim, link))
	// a file of an earlier run where a third goes
	kept := filepath.Join(dir, "vadd.gfx90a.co.gfx90a.co")
	require.NoError(t, os.WriteFile(kept, []byte("earlier"), 0o644))
	var r result
	inTime(t, 10*time.Second, func() {
		r = runRocmk(t, testEnv(nil), "inspect", "--extract", dir, corpusPath("host/app"), corpusPath("co/vadd.gfx90a.co"))
	})
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, fifo+" exists, not replaced: written as "+filepath.Join(dir, "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx90a.1.co"))
	assert.Contains(t, r.Stderr, link+" exists, not replaced: written as "+filepath.Join(dir, "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx906.1.co"))
	assert.Contains(t, r.Stderr, kept+" exists, not replaced: written as "+filepath.Join(dir, "vadd.gfx90a.co.gfx90a.1.co"))
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&os.ModeNamedPipe != 0, "the pipe is not replaced")
	fi, err = os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&os.ModeSymlink != 0, "the link is kept")
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "victim", string(b), "nothing is written through the link")
	b, err = os.ReadFile(kept)
	require.NoError(t, err)
	assert.Equal(t, "earlier", string(b), "an existing file is not replaced")
	b, err = os.ReadFile(filepath.Join(dir, "vadd.gfx90a.co.gfx90a.1.co"))
	require.NoError(t, err)
	assert.Equal(t, "\x7fELF", string(b[:4]))
}
