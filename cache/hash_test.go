package cache

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"github.com/rocmk/rocmk/cache/safefile"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHashIsLabelledLines(t *testing.T) {
	var log bytes.Buffer
	restore := SetDebugHook(func(k string) string {
		if k == "ROCMK_DEBUG" {
			return "other=2,cachehash=1"
		}
		return ""
	}, &log)
	defer restore()

	h := NewHash("object vadd.hip gfx90a")
	fmt.Fprintf(h, "target %s\n", "gfx90a:xnack+")
	fmt.Fprintf(h, "flags %q\n", []string{"-O3"})
	id := h.Sum()

	want := sha256.Sum256([]byte("rocmk-cache v1\ntarget gfx90a:xnack+\nflags [\"-O3\"]\n"))
	assert.Equal(t, ActionID(want), id)
	assert.Equal(t, `HASH[object vadd.hip gfx90a]: "rocmk-cache v1\n"
HASH[object vadd.hip gfx90a]: "target gfx90a:xnack+\n"
HASH[object vadd.hip gfx90a]: "flags [\"-O3\"]\n"
HASH[object vadd.hip gfx90a]: `+id.String()+"\n", log.String())

	// Without the debug setting nothing is logged, and the sum is the same.
	log.Reset()
	restore2 := SetDebugHook(func(string) string { return "" }, &log)
	h = NewHash("x")
	fmt.Fprintf(h, "target %s\n", "gfx90a:xnack+")
	fmt.Fprintf(h, "flags %q\n", []string{"-O3"})
	assert.Equal(t, id, h.Sum())
	restore2()
	assert.Empty(t, log.String())

	// Any change of input changes the key.
	h = NewHash("x")
	fmt.Fprintf(h, "target %s\n", "gfx90a:xnack-")
	fmt.Fprintf(h, "flags %q\n", []string{"-O3"})
	assert.NotEqual(t, id, h.Sum())
}

func TestHashFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.h")
	require.NoError(t, os.WriteFile(p, []byte("#define N 1\n"), 0o644))
	s1, n, err := HashFile(p, 100)
	require.NoError(t, err)
	assert.Equal(t, OutputID(sha256.Sum256([]byte("#define N 1\n"))), s1)
	assert.EqualValues(t, 12, n)
	_, _, err = HashFile(p, 11)
	assert.ErrorIs(t, err, safefile.ErrTooLarge)
	_, _, err = HashFile(p+".missing", 100)
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, _, err = HashFile(dir, 100)
	assert.ErrorIs(t, err, safefile.ErrNotRegular)
}

func TestDefaultDir(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		dir     string
		off     bool
		wantErr bool
	}{
		{env: map[string]string{"HOME": "/home/u"}, dir: "/home/u/.cache/rocmk"},
		{env: map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "/xdg"}, dir: "/xdg/rocmk"},
		{env: map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "relative"}, dir: "/home/u/.cache/rocmk"},
		{env: map[string]string{"HOME": "/home/u", "ROCMK_CACHE_DIR": "/c"}, dir: "/c"},
		{env: map[string]string{"ROCMK_CACHE_DIR": "/c", "ROCMK_CACHE": "off"}, off: true},
		{env: map[string]string{"ROCMK_CACHE_DIR": "off"}, off: true},
		{env: map[string]string{}, wantErr: true},
	} {
		dir, off, err := DefaultDir(func(k string) string { return tc.env[k] })
		if tc.wantErr {
			assert.Error(t, err, "%v", tc.env)
			assert.True(t, strings.Contains(err.Error(), "ROCMK_CACHE_DIR"))
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.dir, dir, "%v", tc.env)
		assert.Equal(t, tc.off, off, "%v", tc.env)
	}
	wd, _ := os.Getwd()
	dir, _, err := DefaultDir(func(k string) string { return map[string]string{"ROCMK_CACHE_DIR": "rel/c"}[k] })
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, "rel", "c"), dir)
}
