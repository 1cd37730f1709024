package cache

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 11 item 6: a named pipe or a device planted as a cache file is a
// corrupt entry (a miss, removed), never a hang or an endless read.

// inTime fails the test if f has not returned after d.
func inTime(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("blocked for more than %v", d)
	}
}

// plant replaces the file at p by a named pipe, or by a symbolic link to
// /dev/zero.
func plant(t *testing.T, p, what string) {
	t.Helper()
	require.NoError(t, os.Remove(p))
	switch what {
	case "fifo":
		mkfifo(t, p)
	case "zero":
		require.NoError(t, os.Symlink("/dev/zero", p))
	}
}

func TestSpecialFilesAreMisses(t *testing.T) {
	data := payload("code object", 200)
	for _, what := range []string{"fifo", "zero"} {
		t.Run(what+" data", func(t *testing.T) {
			c, _ := openTest(t)
			id := aid("k")
			_, err := c.PutBytes(id, data, Meta{Kind: "object"})
			require.NoError(t, err)
			p := dataPath(t, c, id)
			plant(t, p, what)
			inTime(t, 10*time.Second, func() {
				_, err := c.Get(id)
				assert.ErrorIs(t, err, ErrNotFound, "Get")
				_, _, err = c.GetFile(id)
				assert.ErrorIs(t, err, ErrNotFound, "GetFile")
				_, _, err = c.GetBytes(id)
				assert.ErrorIs(t, err, ErrNotFound, "GetBytes")
			})
			assert.True(t, gone(p), "the planted data file is removed")
			assert.True(t, gone(indexPath(c, id)), "with its entry")
			_, err = c.PutBytes(id, data, Meta{Kind: "object"})
			require.NoError(t, err)
			b, _, err := c.GetBytes(id)
			require.NoError(t, err, "a new Put repairs it")
			assert.Equal(t, data, b)
		})
		t.Run(what+" index", func(t *testing.T) {
			c, _ := openTest(t)
			id := aid("k")
			_, err := c.PutBytes(id, data, Meta{Kind: "object"})
			require.NoError(t, err)
			plant(t, indexPath(c, id), what)
			inTime(t, 10*time.Second, func() {
				_, err := c.Get(id)
				assert.ErrorIs(t, err, ErrNotFound)
				_, _, err = c.GetBytes(id)
				assert.ErrorIs(t, err, ErrNotFound)
			})
		})
	}
}

func TestVerifyRemovesSpecialFiles(t *testing.T) {
	c, _ := openTest(t)
	data := payload("code object", 200)
	var planted []string
	for i, what := range []string{"fifo", "zero"} {
		id := aid(what + "-data")
		_, err := c.PutBytes(id, append(data, byte(i)), Meta{Kind: "object"})
		require.NoError(t, err)
		p := dataPath(t, c, id)
		plant(t, p, what)
		planted = append(planted, p)

		id = aid(what + "-index")
		_, err = c.PutBytes(id, append(data, byte(i+2)), Meta{Kind: "object"})
		require.NoError(t, err)
		plant(t, indexPath(c, id), what)
		planted = append(planted, indexPath(c, id))
	}
	// the cache's own bookkeeping files too
	for _, n := range []string{"stats.json", "trim.txt"} {
		mkfifo(t, filepath.Join(c.Dir(), n))
	}
	inTime(t, 20*time.Second, func() {
		r, err := c.Verify(true)
		require.NoError(t, err)
		assert.Len(t, r.Problems, 6, "%+v", r.Problems) // 2 bad data files, their 2 entries, 2 bad index files
		for _, p := range r.Problems {
			assert.True(t, p.Fixed, "%s: %s", p.Path, p.Reason)
		}
		_, err = c.Stats()
		assert.NoError(t, err)
		assert.NoError(t, c.AutoTrim())
	})
	for _, p := range planted {
		assert.True(t, gone(p), "%s removed", p)
	}
	r, err := c.Verify(false)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%+v", r.Problems)
}
