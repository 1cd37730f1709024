package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fillTree is a Publish fill: files a.h, sub/b.h (content k), an empty
// include directory inc/ and a link.
func fillTree(k int) func(string) error {
	return func(tmp string) error {
		if err := os.MkdirAll(filepath.Join(tmp, "sub"), 0o777); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(tmp, "inc"), 0o777); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, "a.h"), content(k), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, "sub", "b.h"), content(k+1), 0o644); err != nil {
			return err
		}
		return os.Symlink("a.h", filepath.Join(tmp, "sub", "link.h"))
	}
}

// treeIsWhole says whether dir holds exactly what fillTree(k) wrote; a
// file that is gone (the directory was trimmed) counts as whole: a reader
// sees all of a directory or none.
func treeIsWhole(dir string, k int) error {
	for rel, want := range map[string][]byte{"a.h": content(k), "sub/b.h": content(k + 1)} {
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			return fmt.Errorf("%s/%s: %d bytes, want %d (%v)", dir, rel, len(got), len(want), err)
		}
	}
	return nil
}

func TestAreaPublishReusesAndMarksUse(t *testing.T) {
	c, clk := openTest(t)
	a := c.Area("trees")
	fills := 0
	fill := func(tmp string) error { fills++; return fillTree(1)(tmp) }
	dir, err := a.Publish("t1", nil, fill)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(c.Dir(), "trees", "t1"), dir)
	assert.FileExists(t, filepath.Join(dir, AreaMarker))
	require.NoError(t, treeIsWhole(dir, 1))
	bad, _ := checkDir(dir)
	assert.Empty(t, bad)

	old := clk.t.Add(-3 * time.Hour)
	require.NoError(t, os.Chtimes(dir, old, old))
	_, err = a.Publish("t1", func(string) bool { return true }, fill)
	require.NoError(t, err)
	assert.Equal(t, 1, fills, "a whole directory is used as it is")
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(clk.t), "use is marked: %v", fi.ModTime())

	// ok says no: replaced whole.
	_, err = a.Publish("t1", func(string) bool { return false }, fill)
	require.NoError(t, err)
	assert.Equal(t, 2, fills)
	assert.NoFileExists(t, filepath.Join(c.Dir(), "trees", "trim.txt"), "a cache's area is trimmed by the cache")

	for _, name := range []string{"", ".x", "a/b", "..", areaStamp} {
		_, err := a.Publish(name, nil, fill)
		assert.Error(t, err, "%q", name)
	}
	ents, err := os.ReadDir(a.Dir())
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary directory left")
}

// Publish replaces what is not a published directory: one without its
// marker (a rocmk before markers), a file, a link, a FIFO in its place.
func TestAreaPublishReplacesWhatIsNotWhole(t *testing.T) {
	outside := t.TempDir()
	for _, what := range []string{"no marker", "file", "link", "fifo"} {
		t.Run(what, func(t *testing.T) {
			c, _ := openTest(t)
			a := c.Area("devlibs")
			p := filepath.Join(a.Dir(), "d")
			require.NoError(t, os.MkdirAll(a.Dir(), 0o777))
			switch what {
			case "no marker":
				require.NoError(t, fillTree(1)(mkdir(t, p)))
			case "file":
				require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
			case "link":
				require.NoError(t, os.Symlink(outside, p))
			case "fifo":
				mkfifo(t, p)
			}
			inTime(t, 10*time.Second, func() {
				dir, err := a.Publish("d", nil, fillTree(2))
				require.NoError(t, err)
				require.NoError(t, treeIsWhole(dir, 2))
			})
			bad, _ := checkDir(p)
			assert.Empty(t, bad)
			ents, _ := os.ReadDir(outside)
			assert.Empty(t, ents, "nothing written through a link")
		})
	}
}

func mkdir(t *testing.T, p string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(p, 0o777))
	return p
}

// A failed fill publishes nothing and leaves nothing.
func TestAreaPublishFailedFill(t *testing.T) {
	c, _ := openTest(t)
	a := c.Area("trees")
	_, err := a.Publish("t", nil, func(tmp string) error {
		require.NoError(t, os.WriteFile(filepath.Join(tmp, "half"), nil, 0o644))
		return errors.New("compiler failed")
	})
	require.ErrorContains(t, err, "compiler failed")
	ents, err := os.ReadDir(a.Dir())
	require.NoError(t, err)
	assert.Empty(t, ents)
	_, err = a.Publish("t", nil, func(tmp string) error { return os.WriteFile(filepath.Join(tmp, AreaMarker), nil, 0o644) })
	assert.ErrorContains(t, err, "marker", "a fill cannot forge the marker")
	_, err = a.Publish("t", nil, func(tmp string) error { mkfifo(t, filepath.Join(tmp, "p")); return nil })
	assert.ErrorContains(t, err, "not a regular file")
}

// plantAreas makes trees/old (unused 40 days), trees/new and devlibs/gfx
// (used now), a young and an old temporary directory.
func plantAreas(t *testing.T, c *Cache, clk *clock) {
	t.Helper()
	for _, p := range []struct{ area, name string }{{"trees", "old"}, {"trees", "new"}, {"devlibs", "gfx"}} {
		_, err := c.Area(p.area).Publish(p.name, nil, fillTree(len(p.name)))
		require.NoError(t, err)
	}
	old := clk.t.Add(-40 * day)
	require.NoError(t, os.Chtimes(filepath.Join(c.Dir(), "trees", "old"), old, old))
	young, stale := filepath.Join(c.Dir(), "trees", ".tmp-young-1"), filepath.Join(c.Dir(), "trees", ".tmp-stale-1")
	require.NoError(t, fillTree(9)(mkdir(t, young)))
	require.NoError(t, fillTree(9)(mkdir(t, stale)))
	require.NoError(t, os.Chtimes(young, clk.t, clk.t))
	then := clk.t.Add(-2 * time.Hour)
	require.NoError(t, os.Chtimes(stale, then, then))
}

func areaNames(t *testing.T, c *Cache) []string {
	t.Helper()
	var out []string
	for _, a := range Areas {
		ents, _ := os.ReadDir(filepath.Join(c.Dir(), a))
		for _, e := range ents {
			out = append(out, a+"/"+e.Name())
		}
	}
	return out
}

func TestTrimAreas(t *testing.T) {
	t.Run("older-than", func(t *testing.T) {
		c, clk := openTest(t)
		plantAreas(t, c, clk)
		tr, err := c.Trim(Policy{OlderThan: 30 * day})
		require.NoError(t, err)
		require.Len(t, tr.Dirs, 1)
		assert.Equal(t, "trees/old", tr.Dirs[0].Path())
		assert.Equal(t, 2, tr.KeptDirs)
		assert.Equal(t, 1, tr.Debris, "the stale temporary directory")
		assert.ElementsMatch(t, []string{"trees/new", "trees/.tmp-young-1", "devlibs/gfx"}, areaNames(t, c))
	})
	t.Run("all", func(t *testing.T) {
		c, clk := openTest(t)
		populate(t, c, clk, 3)
		plantAreas(t, c, clk)
		tr, err := c.Trim(Policy{All: true})
		require.NoError(t, err)
		assert.Len(t, tr.Removed, 3)
		assert.Len(t, tr.Dirs, 3)
		assert.Zero(t, tr.KeptBytes, "temporary directories are not counted")
		assert.ElementsMatch(t, []string{"trees/.tmp-young-1"}, areaNames(t, c), "a young temporary directory may be a live publish")
	})
	t.Run("filters never match a directory", func(t *testing.T) {
		c, clk := openTest(t)
		populate(t, c, clk, 4)
		plantAreas(t, c, clk)
		tr, err := c.Trim(Policy{Target: "gfx90a", All: true})
		require.NoError(t, err)
		assert.NotEmpty(t, tr.Removed)
		assert.Empty(t, tr.Dirs)
	})
	t.Run("max-size, one LRU order", func(t *testing.T) {
		c, clk := openTest(t)
		ids := populate(t, c, clk, 4) // used t0 .. t0+3d
		plantAreas(t, c, clk)         // old: t0+3d-40d; new, gfx: t0+3d
		_, err := c.Get(ids[3])       // the newest entry stays newest
		require.NoError(t, err)
		st, err := c.Stats()
		require.NoError(t, err)
		total := st.Bytes + st.DirBytes
		tr, err := c.Trim(Policy{MaxBytes: total - 1, DryRun: true})
		require.NoError(t, err)
		require.Len(t, tr.Dirs, 1, "the least recently used thing is the old tree")
		assert.Equal(t, "trees/old", tr.Dirs[0].Path())
		assert.Empty(t, tr.Removed)
		tr, err = c.Trim(Policy{MaxBytes: st.Bytes})
		require.NoError(t, err)
		assert.Equal(t, "trees/old", tr.Dirs[0].Path())
		assert.NotEmpty(t, tr.Removed, "then entries, oldest first")
		assert.LessOrEqual(t, tr.KeptBytes, st.Bytes)
	})
	t.Run("auto", func(t *testing.T) {
		c, clk := openTest(t)
		plantAreas(t, c, clk)
		require.NoError(t, c.AutoTrim())
		assert.NoDirExists(t, filepath.Join(c.Dir(), "trees", "old"))
		assert.DirExists(t, filepath.Join(c.Dir(), "trees", "new"))
	})
}

// Hostile areas: an area that is a link to a directory outside the cache,
// a file where an area's directory should be, a FIFO; prune removes the
// link, never what it points to, and never blocks.
func TestTrimAndVerifyHostileAreas(t *testing.T) {
	outside := t.TempDir()
	keep := filepath.Join(outside, "precious")
	require.NoError(t, fillTree(5)(mkdir(t, keep)))
	old := time.Now().Add(-100 * day)
	require.NoError(t, os.Chtimes(keep, old, old))
	for _, fix := range []bool{false, true} {
		c, _ := openTest(t)
		require.NoError(t, os.Symlink(outside, filepath.Join(c.Dir(), "trees")))
		require.NoError(t, os.MkdirAll(filepath.Join(c.Dir(), "devlibs"), 0o777))
		file, fifo := filepath.Join(c.Dir(), "devlibs", "file"), filepath.Join(c.Dir(), "devlibs", "fifo")
		require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
		mkfifo(t, fifo)
		_, err := c.Area("trees").Publish("t", nil, fillTree(1))
		assert.ErrorContains(t, err, "not a directory", "no publishing through a link")
		inTime(t, 10*time.Second, func() {
			var r VerifyReport
			if fix {
				r, err = c.Verify(true)
				require.NoError(t, err)
				assert.Equal(t, 3, r.Removed)
			} else {
				_, err = c.Trim(Policy{All: true, OlderThan: day})
				require.NoError(t, err)
			}
			r, err = c.Verify(false)
			require.NoError(t, err)
			assert.True(t, r.OK(), "%+v", r.Problems)
		})
		assert.True(t, gone(filepath.Join(c.Dir(), "trees")) && gone(file) && gone(fifo))
		require.NoError(t, treeIsWhole(keep, 5))
		assert.FileExists(t, filepath.Join(keep, "a.h"))
	}
}

func TestVerifyAreas(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, content(1), 0o644))
	for name, damage := range map[string]func(dir string){
		"no marker": func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, AreaMarker))) },
		"changed":   func(dir string) { require.NoError(t, os.WriteFile(filepath.Join(dir, "a.h"), []byte("x"), 0o644)) },
		"truncated": func(dir string) { require.NoError(t, os.Truncate(filepath.Join(dir, "sub", "b.h"), 10)) },
		"added":     func(dir string) { require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "new.h"), nil, 0o644)) },
		"missing":   func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "sub", "b.h"))) },
		"no dir":    func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "inc"))) },
		"relinked": func(dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "sub", "link.h")))
			link(t, outside, filepath.Join(dir, "sub", "link.h"))
		},
		// same content, through a link: still not what was published
		"link for file": func(dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "a.h")))
			link(t, outside, filepath.Join(dir, "a.h"))
		},
		"fifo for file": func(dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "a.h")))
			mkfifo(t, filepath.Join(dir, "a.h"))
		},
		"dir for file": func(dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "a.h")))
			mkdir(t, filepath.Join(dir, "a.h"))
		},
		"bad marker": func(dir string) { require.NoError(t, os.WriteFile(filepath.Join(dir, AreaMarker), []byte("{"), 0o644)) },
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := openTest(t)
			good, err := c.Area("trees").Publish("good", nil, fillTree(1))
			require.NoError(t, err)
			bad, err := c.Area("trees").Publish("bad", nil, fillTree(1))
			require.NoError(t, err)
			damage(bad)
			inTime(t, 10*time.Second, func() {
				r, err := c.Verify(false)
				require.NoError(t, err)
				assert.Equal(t, 2, r.Dirs)
				require.Len(t, r.Problems, 1)
				assert.Equal(t, bad, r.Problems[0].Path)
				assert.DirExists(t, bad, "--dry-run removes nothing")
				r, err = c.Verify(true)
				require.NoError(t, err)
				require.Len(t, r.Problems, 1)
				assert.True(t, r.Problems[0].Fixed)
				assert.NoDirExists(t, bad)
				r, err = c.Verify(true)
				require.NoError(t, err)
				assert.True(t, r.OK())
			})
			require.NoError(t, treeIsWhole(good, 1))
			st, err := c.Stats()
			require.NoError(t, err)
			assert.Equal(t, 1, st.Dirs)
			marker, err := os.Stat(filepath.Join(good, AreaMarker))
			require.NoError(t, err)
			assert.Equal(t, int64(len(content(1))+len(content(2)))+marker.Size(), st.DirBytes, "its files and marker")
			b, err := os.ReadFile(outside)
			require.NoError(t, err)
			assert.Equal(t, content(1), b)
		})
	}
}

func link(t *testing.T, target, p string) {
	t.Helper()
	require.NoError(t, os.Symlink(target, p))
}

// An area outside a cache (no cache, a --keep directory) trims itself
// when it publishes, at most once a day, under the cache's age.
func TestStandaloneAreaTrimsItself(t *testing.T) {
	root := filepath.Join(t.TempDir(), "trees")
	a := OpenArea(root)
	_, err := a.Publish("old", nil, fillTree(1))
	require.NoError(t, err)
	long := time.Now().Add(-31 * day)
	require.NoError(t, os.Chtimes(filepath.Join(root, "old"), long, long))
	require.NoError(t, os.Chtimes(filepath.Join(root, areaStamp), long, long))
	_, err = a.Publish("fresh", nil, fillTree(2))
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(root, "old"))
	// within a day of the last trim nothing is looked at
	_, err = a.Publish("old", nil, fillTree(1))
	require.NoError(t, err)
	require.NoError(t, os.Chtimes(filepath.Join(root, "old"), long, long))
	_, err = a.Publish("third", nil, fillTree(3))
	require.NoError(t, err)
	assert.DirExists(t, filepath.Join(root, "old"))

	// In a cache directory the same path is the cache's.
	c, err := Open(t.TempDir())
	require.NoError(t, err)
	in := OpenArea(filepath.Join(c.Dir(), "trees"))
	assert.Equal(t, c.lockFile(), in.lock)
	assert.Empty(t, OpenArea(filepath.Join(c.Dir(), "other")).lock)
}

// Real processes: publishers of the same directories race a pruner that
// empties the cache; every reader sees a whole directory or none, and the
// cache is clean after.
func TestMultiProcessPruneDuringPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	_, err := Open(dir)
	require.NoError(t, err)
	runHelpers(t,
		helperCmd(t, dir, "publish", 150),
		helperCmd(t, dir, "publish", 150),
		helperCmd(t, dir, "publish", 150),
		helperCmd(t, dir, "prune", 60))
	c, err := Open(dir)
	require.NoError(t, err)
	r, err := c.Verify(false)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%+v", r.Problems)
	assert.Zero(t, r.TempFiles)
	for _, n := range areaNames(t, c) {
		k, err := strconv.Atoi(filepath.Base(n)[1:])
		require.NoError(t, err, n)
		assert.NoError(t, treeIsWhole(filepath.Join(dir, n), k))
	}
}

// Real processes: verify while others publish and replace the same
// directories reports nothing (a directory moved while it is read is
// looked at again under the exclusive lock).
func TestMultiProcessVerifyDuringPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	_, err := Open(dir)
	require.NoError(t, err)
	runHelpers(t,
		helperCmd(t, dir, "publish", 200, "ROCMK_CACHE_HELPER_REPLACE=1"),
		helperCmd(t, dir, "publish", 200, "ROCMK_CACHE_HELPER_REPLACE=1"),
		helperCmd(t, dir, "verify", 40))
}

// SIGKILL at random points of a stream of publishes leaves only whole
// directories and temporary ones that prune removes once stale.
func TestSIGKILLDuringPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	c, err := Open(dir)
	require.NoError(t, err)
	for round := range 4 {
		cmd := helperCmd(t, dir, "publishloop", 0)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		buf := make([]byte, 6)
		_, err = out.Read(buf) // "ready\n"
		require.NoError(t, err)
		time.Sleep(time.Duration(20+round*15) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
	}
	r, err := c.Verify(false)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%+v", r.Problems)
	for _, n := range areaNames(t, c) {
		if base := filepath.Base(n); base[0] != '.' {
			k, _ := strconv.Atoi(base[1:])
			assert.NoError(t, treeIsWhole(filepath.Join(dir, n), k))
		}
	}
	clk := &clock{time.Now().Add(2 * time.Hour)}
	c.SetClock(clk.now)
	_, err = c.Trim(Policy{})
	require.NoError(t, err)
	r, err = c.Verify(false)
	require.NoError(t, err)
	assert.Zero(t, r.TempFiles, "stale temporary directories pruned")
}
