package cache

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a movable fake clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openTest(t *testing.T) (*Cache, *clock) {
	t.Helper()
	c, err := Open(t.TempDir())
	require.NoError(t, err)
	clk := &clock{t0}
	c.SetClock(clk.now)
	return c, clk
}

func aid(s string) ActionID { return ActionID(sha256.Sum256([]byte("action " + s))) }

func payload(s string, n int) []byte {
	return bytes.Repeat([]byte(s+"|"), n)
}

func TestOpenWritesTagReadmeVersion(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	_, err := Open(dir)
	require.NoError(t, err)
	tag, err := os.ReadFile(filepath.Join(dir, "CACHEDIR.TAG"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(tag), "Signature: 8a477f597d28d172789f06886806bc55"))
	v, err := os.ReadFile(filepath.Join(dir, "version"))
	require.NoError(t, err)
	assert.Equal(t, "1\n", string(v))
	_, err = os.Stat(filepath.Join(dir, "README"))
	require.NoError(t, err)
	// Opening again keeps working.
	_, err = Open(dir)
	require.NoError(t, err)

	f := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err = Open(f)
	assert.Error(t, err)
}

func TestPutGet(t *testing.T) {
	c, clk := openTest(t)
	id := aid("x")
	_, err := c.Get(id)
	assert.ErrorIs(t, err, ErrNotFound)

	data := payload("hello", 100)
	m := Meta{Kind: "object", Source: "vadd.hip", Target: "gfx90a", Toolchain: "clang 15.0.7", ROCm: "5.2.3"}
	e, err := c.PutBytes(id, data, m)
	require.NoError(t, err)
	assert.Equal(t, OutputID(sha256.Sum256(data)), e.Output)
	assert.Equal(t, int64(len(data)), e.Size)
	assert.Equal(t, t0, e.Created)

	clk.advance(time.Minute)
	g, err := c.Get(id)
	require.NoError(t, err)
	assert.Equal(t, e.Output, g.Output)
	assert.Equal(t, m, g.Meta)
	assert.Equal(t, t0, g.Created.UTC())
	assert.True(t, g.Used.Equal(t0), "used is not bumped within the hour: %v", g.Used)

	b, g2, err := c.GetBytes(id)
	require.NoError(t, err)
	assert.Equal(t, data, b)
	assert.Equal(t, g.Output, g2.Output)

	p, _, err := c.GetFile(id)
	require.NoError(t, err)
	assert.Equal(t, c.OutputFile(e.Output), p)
	fb, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, data, fb)

	// Used is bumped once more than an hour has passed.
	clk.advance(2 * time.Hour)
	g, err = c.Get(id)
	require.NoError(t, err)
	assert.True(t, g.Used.Equal(clk.t), "used %v, want %v", g.Used, clk.t)
	info, err := os.Stat(filepath.Join(c.Dir(), id.String()[:2], id.String()+"-a"))
	require.NoError(t, err)
	assert.True(t, info.ModTime().Equal(clk.t))

	// Put again with other data replaces the mapping.
	data2 := payload("other", 10)
	_, err = c.PutBytes(id, data2, m)
	require.NoError(t, err)
	b, _, err = c.GetBytes(id)
	require.NoError(t, err)
	assert.Equal(t, data2, b)
}

func TestSharedDataStoredOnce(t *testing.T) {
	c, _ := openTest(t)
	data := payload("same", 50)
	e1, err := c.PutBytes(aid("1"), data, Meta{Target: "gfx900"})
	require.NoError(t, err)
	e2, err := c.PutBytes(aid("2"), data, Meta{Target: "gfx906"})
	require.NoError(t, err)
	assert.Equal(t, e1.Output, e2.Output)
	ents, err := c.List()
	require.NoError(t, err)
	assert.Len(t, ents, 2)
	n := 0
	filepath.WalkDir(c.Dir(), func(p string, d os.DirEntry, _ error) error {
		if strings.HasSuffix(p, "-d") {
			n++
		}
		return nil
	})
	assert.Equal(t, 1, n)
}

// dataPath returns the data file of id's entry.
func dataPath(t *testing.T, c *Cache, id ActionID) string {
	t.Helper()
	e, err := c.readIndex(id)
	require.NoError(t, err)
	return c.OutputFile(e.Output)
}

func indexPath(c *Cache, id ActionID) string { return c.fileName(id, "a") }

func TestCorruptionIsAMiss(t *testing.T) {
	data := payload("code object", 200)
	for _, tc := range []struct {
		name     string
		damage   func(t *testing.T, c *Cache, id ActionID)
		getMiss  bool // Get (no hashing) also misses
		dataGone bool // GetBytes removes the entry
	}{
		{"flipped byte in data", func(t *testing.T, c *Cache, id ActionID) {
			p := dataPath(t, c, id)
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x40
			os.Chmod(p, 0o644)
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}, false, true},
		{"truncated data", func(t *testing.T, c *Cache, id ActionID) {
			require.NoError(t, os.Truncate(dataPath(t, c, id), 10))
		}, true, true},
		{"empty data", func(t *testing.T, c *Cache, id ActionID) {
			require.NoError(t, os.Truncate(dataPath(t, c, id), 0))
		}, true, true},
		{"missing data", func(t *testing.T, c *Cache, id ActionID) {
			require.NoError(t, os.Remove(dataPath(t, c, id)))
		}, true, false},
		{"truncated index", func(t *testing.T, c *Cache, id ActionID) {
			require.NoError(t, os.Truncate(indexPath(c, id), 20))
		}, true, false},
		{"garbage index", func(t *testing.T, c *Cache, id ActionID) {
			require.NoError(t, os.WriteFile(indexPath(c, id), []byte("v1 not json\n"), 0o644))
		}, true, false},
		{"index of another key", func(t *testing.T, c *Cache, id ActionID) {
			other := aid("other")
			_, err := c.PutBytes(other, data, Meta{})
			require.NoError(t, err)
			b, _ := os.ReadFile(indexPath(c, other))
			require.NoError(t, os.WriteFile(indexPath(c, id), b, 0o644))
		}, true, false},
		{"flipped byte in index", func(t *testing.T, c *Cache, id ActionID) {
			p := indexPath(c, id)
			b, _ := os.ReadFile(p)
			i := bytes.Index(b, []byte(`"output":"`)) + len(`"output":"`)
			if b[i] == 'a' {
				b[i] = 'b'
			} else {
				b[i] = 'a'
			}
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}, true, false},
		{"future format version", func(t *testing.T, c *Cache, id ActionID) {
			p := indexPath(c, id)
			b, _ := os.ReadFile(p)
			require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte(`{"v":1,`), []byte(`{"v":2,`), 1), 0o644))
		}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := openTest(t)
			id := aid("k")
			_, err := c.PutBytes(id, data, Meta{Target: "gfx90a"})
			require.NoError(t, err)
			tc.damage(t, c, id)

			_, err = c.Get(id)
			if tc.getMiss {
				assert.ErrorIs(t, err, ErrNotFound)
			} else {
				assert.NoError(t, err, "Get does not hash; GetBytes does")
			}
			b, _, err := c.GetBytes(id)
			assert.ErrorIs(t, err, ErrNotFound)
			assert.Nil(t, b)
			_, _, err = c.GetFile(id)
			assert.ErrorIs(t, err, ErrNotFound)
			if tc.dataGone {
				_, err := os.Stat(indexPath(c, id))
				assert.ErrorIs(t, err, os.ErrNotExist, "bad entry dropped")
			}

			// Verify finds what is left and fixes it; a second Verify is clean.
			r, err := c.Verify(true)
			require.NoError(t, err)
			r2, err := c.Verify(false)
			require.NoError(t, err)
			assert.True(t, r2.OK(), "after fix: %+v (first: %+v)", r2.Problems, r.Problems)

			// A new Put repairs the entry.
			_, err = c.PutBytes(id, data, Meta{Target: "gfx90a"})
			require.NoError(t, err)
			b, _, err = c.GetBytes(id)
			require.NoError(t, err)
			assert.Equal(t, data, b)
		})
	}
}

func TestPutRepairsCorruptSharedData(t *testing.T) {
	c, _ := openTest(t)
	data := payload("shared", 100)
	e, err := c.PutBytes(aid("a"), data, Meta{})
	require.NoError(t, err)
	p := c.OutputFile(e.Output)
	os.Chmod(p, 0o644)
	b, _ := os.ReadFile(p)
	b[3] ^= 1
	require.NoError(t, os.WriteFile(p, b, 0o644)) // same size, wrong content
	_, err = c.PutBytes(aid("b"), data, Meta{})
	require.NoError(t, err)
	got, _, err := c.GetBytes(aid("a"))
	require.NoError(t, err, "the second Put rewrote the corrupt data file")
	assert.Equal(t, data, got)
}

func TestVerifyReportsCorruptData(t *testing.T) {
	c, _ := openTest(t)
	for i := range 5 {
		_, err := c.PutBytes(aid(fmt.Sprint(i)), payload(fmt.Sprint(i), 100), Meta{})
		require.NoError(t, err)
	}
	p := dataPath(t, c, aid("3"))
	os.Chmod(p, 0o644)
	b, _ := os.ReadFile(p)
	b[0] ^= 0xff
	require.NoError(t, os.WriteFile(p, b, 0o644))
	// Debris that Verify must not call corruption.
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(p), tempPrefix+"123"), []byte("half"), 0o644))

	r, err := c.Verify(false)
	require.NoError(t, err)
	assert.Equal(t, 5, r.Entries)
	assert.Equal(t, 5, r.DataFiles)
	assert.Equal(t, 1, r.TempFiles)
	require.Len(t, r.Problems, 2, "%+v", r.Problems) // the data file and the entry using it
	assert.Equal(t, 0, r.Removed)

	r, err = c.Verify(true)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Removed)
	r, err = c.Verify(false)
	require.NoError(t, err)
	assert.True(t, r.OK())
	assert.Equal(t, 4, r.Entries)
	_, err = c.Get(aid("3"))
	assert.ErrorIs(t, err, ErrNotFound)
}

func TestPutDetectsChangingReader(t *testing.T) {
	c, _ := openTest(t)
	r := &changingReader{data: []byte("first version")}
	_, err := c.Put(aid("x"), r, Meta{})
	assert.Error(t, err)
	_, err = c.Get(aid("x"))
	assert.ErrorIs(t, err, ErrNotFound)
}

// changingReader returns different content after its first Seek to 0.
type changingReader struct {
	data  []byte
	off   int
	seeks int
}

func (r *changingReader) Read(b []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, errorsEOF
	}
	n := copy(b, r.data[r.off:])
	r.off += n
	return n, nil
}

func (r *changingReader) Seek(off int64, whence int) (int64, error) {
	r.seeks++
	if r.seeks == 2 {
		r.data = []byte("second version!")
	}
	r.off = int(off)
	return off, nil
}

var errorsEOF = io.EOF
