package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile"
)

// Issue 20 item 4: the cache knows every directory under its root. A
// translated tree placed by compile and a device-library directory are
// counted by stats, checked by verify and removed by prune --all.
func TestCacheCommandsCoverAreas(t *testing.T) {
	dir := t.TempDir()
	c, now := populateCache(t, dir)
	env := cacheTestEnv(dir, now, nil)

	src := filepath.Join(t.TempDir(), "k.cu")
	require.NoError(t, os.WriteFile(src, []byte("__global__ void k(float *x) { x[threadIdx.x] = 1; }\n"), 0o644))
	tr, err := compile.TranslateTree(compile.TreeRequest{Sources: []string{src}})
	require.NoError(t, err)
	require.NoError(t, tr.Place(filepath.Join(dir, "trees")))
	libs, err := c.Area("devlibs").Publish("gfx1201-x", nil, func(tmp string) error {
		return os.WriteFile(filepath.Join(tmp, "oclc_isa_version_1201.bc"), []byte("bitcode"), 0o644)
	})
	require.NoError(t, err)

	r := runRocmk(t, env, "cache", "stats", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var st struct {
		Entries  int   `json:"entries"`
		Dirs     int   `json:"dirs"`
		DirBytes int64 `json:"dir_bytes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &st))
	assert.Equal(t, 5, st.Entries)
	assert.Equal(t, 2, st.Dirs)
	assert.Positive(t, st.DirBytes)
	r = runRocmk(t, env, "cache", "stats")
	assert.Contains(t, r.Stdout, "directories")

	r = runRocmk(t, env, "cache", "ls")
	assert.Contains(t, r.Stderr, "and 2 directories in trees/ and devlibs/")
	r = runRocmk(t, env, "cache", "ls", "--json")
	var ls struct {
		Dirs []cache.AreaDir `json:"dirs"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &ls))
	assert.Len(t, ls.Dirs, 2)

	r = runRocmk(t, env, "cache", "verify")
	require.Equal(t, 0, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "5 data files and 2 directories")

	// A half-published directory (no marker): reported, kept by --dry-run,
	// then removed.
	require.NoError(t, os.Remove(filepath.Join(libs, cache.AreaMarker)))
	r = runRocmk(t, env, "cache", "verify", "--dry-run")
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stdout, "devlibs/gfx1201-x: incomplete")
	assert.DirExists(t, libs)
	r = runRocmk(t, env, "cache", "verify")
	assert.Equal(t, ExitFailure, r.Code)
	assert.NoDirExists(t, libs)
	r = runRocmk(t, env, "cache", "verify")
	assert.Equal(t, 0, r.Code, r.Stdout)

	r = runRocmk(t, env, "cache", "prune", "--all", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var pr struct {
		Removed []json.RawMessage `json:"removed"`
		Dirs    []cache.AreaDir   `json:"removed_dirs"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &pr))
	assert.Len(t, pr.Removed, 5)
	require.Len(t, pr.Dirs, 1)
	assert.Equal(t, "trees/"+filepath.Base(tr.Dir), pr.Dirs[0].Path())
	assert.NoDirExists(t, tr.Dir)
	r = runRocmk(t, env, "cache", "stats", "--json")
	st.Dirs = -1
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &st))
	assert.Equal(t, -1, st.Dirs, "no dirs: omitted, as before areas were counted")
	assert.NoDirExists(t, libs)
}
