package commands

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"github.com/rocmk/rocmk/compile"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
)

var cacheT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// populateCache fills dir with entries created over 40 days, some used later,
// plus counters, all on a fake clock. The command clock is cacheT0+45d.
func populateCache(t *testing.T, dir string) (*cache.Cache, time.Time) {
	t.Helper()
	c, err := cache.Open(dir)
	require.NoError(t, err)
	now := cacheT0
	c.SetClock(func() time.Time { return now })
	type ent struct {
		src, target, tc, rocm string
		size                  int
		day                   int // created on day N
		usedDay               int // used again on day N (0: never)
	}
	for i, e := range []ent{
		{"vadd.hip", "gfx90a", "clang 15.0.7", "5.2.3", 9000, 0, 44},
		{"vadd.hip", "gfx1030", "clang 15.0.7", "5.2.3", 7000, 0, 0},
		{"softmax.hip", "gfx90a:xnack+", "clang 15.0.7", "5.2.3", 40000, 5, 0},
		{"softmax.hip", "gfx942", "clang 17.0.0", "6.0.2", 52000, 20, 30},
		{"gemm.hip", "gfx942", "clang 17.0.0", "6.0.2", 300000, 40, 0},
	} {
		now = cacheT0.Add(time.Duration(e.day) * 24 * time.Hour)
		data := make([]byte, e.size)
		for j := range data {
			data[j] = byte(i*31 + j%251)
		}
		id := cache.ActionID(sha256.Sum256([]byte(e.src + e.target)))
		_, err := c.PutBytes(id, data, cache.Meta{Kind: "object", Source: e.src, Target: e.target, Toolchain: e.tc, ROCm: e.rocm})
		require.NoError(t, err)
		if e.usedDay > 0 {
			now = cacheT0.Add(time.Duration(e.usedDay) * 24 * time.Hour)
			_, err := c.Get(id)
			require.NoError(t, err)
		}
	}
	now = cacheT0
	require.NoError(t, c.ZeroStats())
	require.NoError(t, c.AddStats(7, 3))
	return c, cacheT0.Add(45 * 24 * time.Hour)
}

func cacheTestEnv(dir string, now time.Time, vars map[string]string) Env {
	if vars == nil {
		vars = map[string]string{}
	}
	vars["ROCMK_CACHE_DIR"] = dir
	env := testEnv(vars)
	env.Now = func() time.Time { return now }
	return env
}

func cacheTranscript(r result, dir string) []byte {
	return []byte(strings.ReplaceAll(string(r.transcript()), dir, "$CACHE"))
}

func TestCacheLsStatsPruneGolden(t *testing.T) {
	dir := t.TempDir()
	_, now := populateCache(t, dir)
	env := cacheTestEnv(dir, now, nil)

	r := runRocmk(t, env, "cache", "ls")
	assert.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "cache/ls.golden", cacheTranscript(r, dir))
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	require.Len(t, lines, 7)
	assert.Contains(t, lines[1], "vadd.hip", "most recently used first")
	assert.Contains(t, lines[1], "24h ago")

	r = runRocmk(t, env, "cache", "ls", "--sort", "size", "--target", "gfx90a")
	assert.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "cache/ls-size-target.golden", cacheTranscript(r, dir))
	assert.Contains(t, r.Stdout, "gfx90a:xnack+")
	assert.NotContains(t, r.Stdout, "gfx942")

	r = runRocmk(t, env, "cache", "ls", "-q", "--sort", "created")
	assert.Equal(t, 0, r.Code)
	keys := strings.Fields(r.Stdout)
	require.Len(t, keys, 5)
	for _, k := range keys {
		_, err := cache.ParseActionID(k)
		assert.NoError(t, err)
	}

	r = runRocmk(t, env, "cache", "ls", "--json", "--sort", "target")
	assert.Equal(t, 0, r.Code)
	assert.Empty(t, r.Stderr)
	var doc struct {
		Schema  string
		Count   int
		Bytes   int64
		Entries []struct {
			Key, Target, Source string
			Size                int64
			Used                time.Time
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, "rocmk.cache.ls/v1", doc.Schema)
	assert.Equal(t, 5, doc.Count)
	assert.Equal(t, int64(9000+7000+40000+52000+300000), doc.Bytes)
	assert.Equal(t, "gfx1030", doc.Entries[0].Target)
	assert.Equal(t, cacheT0.Add(44*24*time.Hour), doc.Entries[1].Used, "vadd gfx90a was used on day 44")

	r = runRocmk(t, env, "cache", "ls", "--sort", "age")
	assert.Equal(t, ExitUsage, r.Code)

	r = runRocmk(t, env, "cache", "stats")
	assert.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "cache/stats.golden", cacheTranscript(r, dir))
	assert.Contains(t, r.Stdout, "70.0%")

	// Dry runs remove nothing and say what would go.
	r = runRocmk(t, env, "cache", "prune", "--older-than", "30d", "--dry-run")
	assert.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "cache/prune-older-dry.golden", cacheTranscript(r, dir))
	assert.Contains(t, r.Stdout, "would remove 2 entries")
	r = runRocmk(t, env, "cache", "prune", "--max-size", "100KiB", "--dry-run")
	assert.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "cache/prune-maxsize-dry.golden", cacheTranscript(r, dir))
	r = runRocmk(t, env, "cache", "ls", "-q")
	assert.Len(t, strings.Fields(r.Stdout), 5, "dry runs removed nothing")

	for _, bad := range [][]string{
		{"cache", "prune"},
		{"cache", "prune", "--older-than", "3w"},
		{"cache", "prune", "--max-size", "2XB"},
		{"cache", "prune", "gfx90a"},
	} {
		r = runRocmk(t, env, bad...)
		assert.Equal(t, ExitUsage, r.Code, "%v: %s", bad, r.Stderr)
	}

	// The real prune: by target, then by size, with --json.
	r = runRocmk(t, env, "cache", "prune", "--target", "gfx1030")
	assert.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "removed 1 entry")
	r = runRocmk(t, env, "cache", "prune", "--max-size", "100KiB", "--json")
	assert.Equal(t, 0, r.Code, r.Stderr)
	var pd struct {
		Removed   []struct{ Source, Target string }
		KeptBytes int64 `json:"kept_bytes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &pd))
	require.Len(t, pd.Removed, 3, "gemm.hip alone is over 100 KiB")
	assert.Equal(t, "softmax.hip", pd.Removed[0].Source, "least recently used first")
	assert.Equal(t, "gfx90a:xnack+", pd.Removed[0].Target)
	assert.LessOrEqual(t, pd.KeptBytes, int64(100<<10))
	r = runRocmk(t, env, "cache", "ls", "-q")
	assert.Len(t, strings.Fields(r.Stdout), 1)

	r = runRocmk(t, env, "cache", "stats", "--zero")
	assert.Equal(t, 0, r.Code)
	assert.Contains(t, r.Stderr, "statistics zeroed")
	r = runRocmk(t, env, "cache", "stats", "--json")
	var sd struct{ Hits, Misses int64 }
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &sd))
	assert.Equal(t, int64(0), sd.Hits+sd.Misses)
}

func TestCacheVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	c, now := populateCache(t, dir)
	env := cacheTestEnv(dir, now, nil)
	r := runRocmk(t, env, "cache", "verify")
	assert.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "checked 5 entries and 5 data files")
	assert.Contains(t, r.Stdout, ": ok")

	// Flip a byte in one data file.
	ents, err := c.List()
	require.NoError(t, err)
	var victim cache.Entry
	for _, e := range ents {
		if e.Meta.Source == "gemm.hip" {
			victim = e
		}
	}
	p := c.OutputFile(victim.Output)
	require.NoError(t, os.Chmod(p, 0o644))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[100] ^= 1
	require.NoError(t, os.WriteFile(p, b, 0o644))

	r = runRocmk(t, env, "cache", "verify", "--dry-run")
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stdout, "2 problems, 0 files removed")
	r = runRocmk(t, env, "cache", "verify")
	assert.Equal(t, ExitFailure, r.Code, "problems found (and fixed) exit 1")
	golden(t, "cache/verify-corrupt.golden", cacheTranscript(r, dir))
	r = runRocmk(t, env, "cache", "verify")
	assert.Equal(t, 0, r.Code, r.Stdout)
	assert.Contains(t, r.Stdout, "checked 4 entries")
	_, err = c.Get(victim.Action)
	assert.ErrorIs(t, err, cache.ErrNotFound)
}

func TestCacheDirCommand(t *testing.T) {
	r := runRocmk(t, testEnv(map[string]string{"HOME": "/home/u"}), "cache", "dir")
	assert.Equal(t, "/home/u/.cache/rocmk\n", r.Stdout)
	r = runRocmk(t, testEnv(map[string]string{"HOME": "/home/u", "ROCMK_CACHE_DIR": "/c"}), "cache", "dir")
	assert.Equal(t, "/c\n", r.Stdout)
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": "/c"}), "--cache-dir", "/d", "cache", "dir")
	assert.Equal(t, "/d\n", r.Stdout)
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": "/c"}), "cache", "dir", "--cache-dir", "/e")
	assert.Equal(t, "/e\n", r.Stdout)
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE": "off", "HOME": "/home/u"}), "cache", "dir")
	assert.Equal(t, "off\n", r.Stdout)
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE": "off", "HOME": "/home/u"}), "cache", "ls")
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stderr, "off")
	r = runRocmk(t, testEnv(map[string]string{"HOME": "/home/u"}), "cache", "dir", "--json")
	assert.JSONEq(t, `{"schema":"rocmk.cache.dir/v1","dir":"/home/u/.cache/rocmk","off":false}`, r.Stdout)

	// An empty cache lists as empty.
	dir := filepath.Join(t.TempDir(), "new")
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": dir}), "cache", "ls")
	assert.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "0 entries, 0 B in "+dir+"\n", r.Stdout)
	_, err := os.Stat(filepath.Join(dir, "CACHEDIR.TAG"))
	assert.NoError(t, err)
}

func TestCacheJSONHasNoEscapesWithColourForced(t *testing.T) {
	dir := t.TempDir()
	_, now := populateCache(t, dir)
	env := cacheTestEnv(dir, now, map[string]string{"CLICOLOR_FORCE": "1"})
	for _, sub := range []string{"ls", "stats", "verify", "dir"} {
		r := runRocmk(t, env, "cache", sub, "--json")
		assert.Equal(t, 0, r.Code, "%s: %s", sub, r.Stderr)
		assert.NotContains(t, r.Stdout, "\x1b", sub)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), sub)
		assert.Equal(t, "rocmk.cache."+sub+"/v1", doc["schema"])
	}
	r := runRocmk(t, env, "cache", "prune", "--all", "--dry-run", "--json")
	assert.Equal(t, 0, r.Code, r.Stderr)
	assert.NotContains(t, r.Stdout, "\x1b")
}

// TestCacheLsHidesBookkeeping: the builder's header lists and toolchain IDs
// are listed only with --all.
func TestCacheLsHidesBookkeeping(t *testing.T) {
	dir := t.TempDir()
	c, now := populateCache(t, dir)
	id := cache.NewHash("test")
	id.Write([]byte("deps entry"))
	_, err := c.PutBytes(id.Sum(), []byte("headers"), cache.Meta{Kind: "deps", Source: "vadd.hip", Target: "gfx90a"})
	require.NoError(t, err)
	env := cacheTestEnv(dir, now, nil)

	r := runRocmk(t, env, "cache", "ls", "-q")
	assert.Len(t, strings.Fields(r.Stdout), 5)
	r = runRocmk(t, env, "cache", "ls")
	assert.NotContains(t, r.Stdout, "deps")
	assert.Contains(t, r.Stderr, "1 bookkeeping entry not shown")
	r = runRocmk(t, env, "cache", "ls", "--all", "-q")
	assert.Len(t, strings.Fields(r.Stdout), 6)
}

// TestCacheLsEscapesNames: a source name with escape sequences (a file
// name can hold any byte but / and NUL) is listed escaped, not run by the
// terminal.
func TestCacheLsEscapesNames(t *testing.T) {
	dir := t.TempDir()
	c, now := populateCache(t, dir)
	_, err := c.PutBytes(cache.NewHash("evil").Sum(), []byte("x"), cache.Meta{Kind: "object", Source: "k\x1b]0;owned\x07\x1b[2J.hip", Target: "gfx90a"})
	require.NoError(t, err)
	r := runRocmk(t, cacheTestEnv(dir, now, nil), "cache", "ls")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.NotContains(t, r.Stdout, "\x1b")
	assert.Contains(t, r.Stdout, `k\x1b]0;owned\x07\x1b[2J.hip`)
}

// TestCacheDirOneAnswer (issue 19): `cache` subcommands, builds (a
// Session) and doctor resolve the cache directory the same way: the
// --cache-dir flag, then ROCMK_CACHE=off, then ROCMK_CACHE_DIR, then the
// default. ROCMK_CACHE=off with --cache-dir X listed X while build used no
// cache. (rocmk.toml has no local cache setting: its [cache] table is the
// remote tier's.)
func TestCacheDirOneAnswer(t *testing.T) {
	tmp := t.TempDir()
	flagDir, envDir := filepath.Join(tmp, "flag"), filepath.Join(tmp, "env")
	for _, c := range []struct {
		flag     string
		env      map[string]string
		want     string // "off" or a directory
		wantFrom string
	}{
		{"", map[string]string{"HOME": tmp}, filepath.Join(tmp, ".cache/rocmk"), "default"},
		{"", map[string]string{"HOME": tmp, "ROCMK_CACHE_DIR": envDir}, envDir, "ROCMK_CACHE_DIR"},
		{"", map[string]string{"HOME": tmp, "ROCMK_CACHE_DIR": envDir, "ROCMK_CACHE": "off"}, "off", "ROCMK_CACHE=off"},
		{flagDir, map[string]string{"HOME": tmp, "ROCMK_CACHE": "off"}, flagDir, "--cache-dir"},
		{flagDir, map[string]string{"HOME": tmp, "ROCMK_CACHE_DIR": envDir}, flagDir, "--cache-dir"},
	} {
		env := testEnv(c.env)
		var args []string
		if c.flag != "" {
			args = []string{"--cache-dir", c.flag}
		}
		r := runRocmk(t, env, append(args, "cache", "dir")...)
		require.Equal(t, 0, r.Code, r.Stderr)
		assert.Equal(t, c.want+"\n", r.Stdout, "cache dir, flag %q env %v", c.flag, c.env)

		s, err := compile.OpenSession(compile.SessionOptions{CacheDir: c.flag, Getenv: env.Getenv})
		require.NoError(t, err)
		got := s.CacheDir()
		s.Close(context.Background())
		if c.want == "off" {
			assert.Empty(t, got, "build: no cache, flag %q env %v", c.flag, c.env)
		} else {
			assert.Equal(t, c.want, got, "build, flag %q env %v", c.flag, c.env)
		}

		loc, err := cache.ResolveDir(c.flag, env.Getenv)
		require.NoError(t, err)
		assert.Equal(t, c.wantFrom, loc.Source)
		dc := doctorCacheOf(doctorOptions{CacheDir: c.flag}, env)
		assert.Equal(t, c.want, dc.Dir, "doctor")
		assert.Equal(t, c.wantFrom, dc.Source, "doctor")
	}
}
