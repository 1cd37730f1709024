package cache

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyRemovesDirectoryInPlaceOfFile: a data file or an index file
// replaced by a non-empty directory is reported, removed with fix, and the
// next Verify is clean (it used to fail to remove it and exit 1 forever).
func TestVerifyRemovesDirectoryInPlaceOfFile(t *testing.T) {
	for _, which := range []string{"d", "a"} {
		t.Run(which, func(t *testing.T) {
			c, _ := openTest(t)
			e, err := c.PutBytes(aid("x"), payload("x", 4096), Meta{Kind: "object"})
			require.NoError(t, err)
			p := c.OutputFile(e.Output)
			if which == "a" {
				p = c.fileName(e.Action, "a")
			}
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.MkdirAll(filepath.Join(p, "sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(p, "sub", "f"), []byte("x"), 0o644))

			r, err := c.Verify(false)
			require.NoError(t, err)
			require.False(t, r.OK())
			assert.DirExists(t, p, "dry run removes nothing")

			r, err = c.Verify(true)
			require.NoError(t, err)
			assert.False(t, r.OK(), "the problem is reported")
			assert.NoFileExists(t, p)
			assert.NoDirExists(t, p)
			for _, pr := range r.Problems {
				assert.True(t, pr.Fixed, "%+v", pr)
			}

			r, err = c.Verify(true)
			require.NoError(t, err)
			assert.True(t, r.OK(), "%+v", r.Problems)
			_, _, err = c.GetBytes(aid("x"))
			assert.ErrorIs(t, err, ErrNotFound)
		})
	}
}

// RelativeTo shows the problems' paths inside the cache relative to it,
// and leaves the report it was called on as it was.
func TestVerifyReportRelativeTo(t *testing.T) {
	r := VerifyReport{Problems: []Problem{{Path: "/c/d/ab/x-d", Reason: "corrupt"}, {Path: "elsewhere", Reason: "odd"}}}
	rel := r.RelativeTo("/c")
	assert.Equal(t, []Problem{{Path: "d/ab/x-d", Reason: "corrupt"}, {Path: "elsewhere", Reason: "odd"}}, rel.Problems)
	assert.Equal(t, "/c/d/ab/x-d", r.Problems[0].Path)
}
