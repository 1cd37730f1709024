package cache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const day = 24 * time.Hour

// populate puts entries e0..e(n-1), one a day, each 1000*(i+1) bytes, and
// returns their ids. The clock ends at the last Put.
func populate(t *testing.T, c *Cache, clk *clock, n int) []ActionID {
	t.Helper()
	var ids []ActionID
	targets := []string{"gfx90a", "gfx90a:xnack+", "gfx1030", "gfx942"}
	for i := range n {
		if i > 0 {
			clk.advance(day)
		}
		id := aid(fmt.Sprint("e", i))
		tc := "clang 15.0.7"
		if i%2 == 1 {
			tc = "clang 17.0.0"
		}
		_, err := c.PutBytes(id, bytes.Repeat([]byte{byte(i)}, 1000*(i+1)), Meta{Kind: "object", Source: fmt.Sprint("k", i, ".hip"), Target: targets[i%len(targets)], Toolchain: tc})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

func present(c *Cache, ids ...ActionID) []bool {
	var out []bool
	for _, id := range ids {
		_, _, err := c.GetBytes(id)
		out = append(out, err == nil)
	}
	return out
}

func removedSources(tr Trimmed) []string {
	var s []string
	for _, e := range tr.Removed {
		s = append(s, e.Meta.Source)
	}
	return s
}

func TestTrimOlderThan(t *testing.T) {
	c, clk := openTest(t)
	ids := populate(t, c, clk, 5) // used at day 0..4
	clk.advance(40 * day)         // now day 44
	// Using e0 makes it recent.
	_, err := c.Get(ids[0])
	require.NoError(t, err)
	clk.advance(day) // day 45: e1 unused 44 days ... e4 unused 41 days, e0 1 day

	tr, err := c.Trim(Policy{OlderThan: 42 * day})
	require.NoError(t, err)
	assert.Equal(t, []string{"k1.hip", "k2.hip"}, removedSources(tr))
	assert.Equal(t, 3, tr.Kept)
	assert.Equal(t, 4, tr.Files, "two index and two data files")
	assert.Greater(t, tr.Bytes, int64(2000+3000))
	assert.Equal(t, []bool{true, false, false, true, true}, present(c, ids...))
}

func TestTrimMaxBytesEvictsLeastRecentlyUsed(t *testing.T) {
	c, clk := openTest(t)
	ids := populate(t, c, clk, 5) // 1000..5000 bytes
	clk.advance(2 * time.Hour)
	_, err := c.Get(ids[0]) // e0 becomes the most recently used
	require.NoError(t, err)
	st, err := c.Stats()
	require.NoError(t, err)
	require.Greater(t, st.Bytes, int64(15000))

	dry, err := c.Trim(Policy{MaxBytes: 10000, DryRun: true})
	require.NoError(t, err)
	ents, err := c.List() // (present would mark every entry used)
	require.NoError(t, err)
	assert.Len(t, ents, 5, "dry run removes nothing")

	tr, err := c.Trim(Policy{MaxBytes: 10000})
	require.NoError(t, err)
	assert.Equal(t, removedSources(dry), removedSources(tr))
	assert.Equal(t, dry.Bytes, tr.Bytes)
	// LRU order: e1 (2000), e2 (3000), e3 (4000) go; e4 (5000) and e0 (1000) stay.
	assert.Equal(t, []string{"k1.hip", "k2.hip", "k3.hip"}, removedSources(tr))
	assert.LessOrEqual(t, tr.KeptBytes, int64(10000))
	st2, err := c.Stats()
	require.NoError(t, err)
	assert.Equal(t, tr.KeptBytes, st2.Bytes)
	assert.Equal(t, st.Bytes-tr.Bytes, st2.Bytes)
	assert.Equal(t, []bool{true, false, false, false, true}, present(c, ids...))
}

func TestTrimFilters(t *testing.T) {
	c, clk := openTest(t)
	ids := populate(t, c, clk, 6) // targets gfx90a, gfx90a:xnack+, gfx1030, gfx942, gfx90a, gfx90a:xnack+

	tr, err := c.Trim(Policy{Target: "gfx90a:xnack+", DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"k1.hip", "k5.hip"}, removedSources(tr))

	tr, err = c.Trim(Policy{Target: "gfx90a", Toolchain: "clang 15"})
	require.NoError(t, err)
	assert.Equal(t, []string{"k0.hip", "k4.hip"}, removedSources(tr))

	clk.advance(10 * day)
	tr, err = c.Trim(Policy{Toolchain: "17.0", OlderThan: 12 * day})
	require.NoError(t, err)
	assert.Equal(t, []string{"k1.hip"}, removedSources(tr), "k3 and k5 are newer than 12 days")

	tr, err = c.Trim(Policy{All: true, Target: "gfx1030"})
	require.NoError(t, err)
	assert.Equal(t, []string{"k2.hip"}, removedSources(tr))
	assert.Equal(t, []bool{false, false, false, true, false, true}, present(c, ids...))

	tr, err = c.Trim(Policy{All: true})
	require.NoError(t, err)
	assert.Len(t, tr.Removed, 2)
	assert.Equal(t, 0, tr.Kept)
	ents, err := c.List()
	require.NoError(t, err)
	assert.Empty(t, ents)
}

func TestTrimZeroPolicyRemovesOnlyDebris(t *testing.T) {
	c, clk := openTest(t)
	ids := populate(t, c, clk, 3)
	sub := filepath.Dir(indexPath(c, ids[0]))
	tmp := filepath.Join(sub, tempPrefix+"42")
	require.NoError(t, os.WriteFile(tmp, []byte("half a code object"), 0o644))
	orphan := filepath.Join(sub, fmt.Sprintf("%064x-d", 7))
	require.NoError(t, os.WriteFile(orphan, []byte("nobody uses me"), 0o644))
	bad := filepath.Join(sub, fmt.Sprintf("%064x-a", 9))
	require.NoError(t, os.WriteFile(bad, []byte("{"), 0o644))

	tr, err := c.Trim(Policy{})
	require.NoError(t, err)
	assert.Empty(t, tr.Removed)
	assert.Equal(t, 3, tr.Debris)
	assert.Equal(t, 3, tr.Kept)
	for _, p := range []string{tmp, orphan, bad} {
		_, err := os.Stat(p)
		assert.ErrorIs(t, err, os.ErrNotExist, p)
	}
	assert.Equal(t, []bool{true, true, true}, present(c, ids...))
	_, err = c.Trim(Policy{OlderThan: -1})
	assert.Error(t, err)
}

func TestAutoTrimRunsAtMostDaily(t *testing.T) {
	c, clk := openTest(t)
	ids := populate(t, c, clk, 2)
	clk.advance(31 * day) // both unused for more than 30 days
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir(), "trim.txt"), []byte(fmt.Sprint(clk.t.Add(-time.Hour).Unix())), 0o644))
	require.NoError(t, c.AutoTrim())
	assert.Equal(t, []bool{true, true}, present(c, ids...), "trimmed an hour ago: nothing to do")

	clk.advance(day)
	// GetBytes above did not bump used times that are more than an hour old?
	// It did: present() marked both used at the clock of that moment. Age them again.
	clk.advance(31 * day)
	require.NoError(t, c.AutoTrim())
	assert.Equal(t, []bool{false, false}, present(c, ids...))
	b, err := os.ReadFile(filepath.Join(c.Dir(), "trim.txt"))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprint(clk.t.Unix(), "\n"), string(b))

	// A corrupt trim.txt means: trim now.
	id := aid("fresh")
	_, err = c.PutBytes(id, []byte("x"), Meta{})
	require.NoError(t, err)
	clk.advance(31 * day)
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir(), "trim.txt"), []byte("garbage"), 0o644))
	require.NoError(t, c.AutoTrim())
	assert.Equal(t, []bool{false}, present(c, id))
}

func TestStats(t *testing.T) {
	c, clk := openTest(t)
	s, err := c.Stats()
	require.NoError(t, err)
	assert.Equal(t, Stats{}, s)
	require.NoError(t, c.AddStats(3, 1))
	require.NoError(t, c.AddStats(1, 0))
	populate(t, c, clk, 2)
	s, err = c.Stats()
	require.NoError(t, err)
	assert.Equal(t, int64(4), s.Hits)
	assert.Equal(t, int64(1), s.Misses)
	assert.Equal(t, 0.8, s.HitRate())
	assert.Equal(t, t0, s.Since)
	assert.Equal(t, 2, s.Entries)
	assert.Greater(t, s.Bytes, int64(3000))

	clk.advance(day)
	zeroed := clk.t
	require.NoError(t, c.ZeroStats())
	s, err = c.Stats()
	require.NoError(t, err)
	assert.Equal(t, int64(0), s.Hits+s.Misses)
	assert.Equal(t, zeroed, s.Since)
	assert.Equal(t, 0.0, s.HitRate())

	// A corrupt stats file reads as zero and is replaced by the next update.
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir(), "stats.json"), []byte("{{"), 0o644))
	require.NoError(t, c.AddStats(2, 2))
	s, err = c.Stats()
	require.NoError(t, err)
	assert.Equal(t, int64(2), s.Hits)
}

func TestSelectAndSortEntries(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ents := []Entry{
		{Action: ActionID{1}, Size: 10, Used: t0, Meta: Meta{Kind: "object", Target: "gfx90a:xnack+", Source: "b.hip"}},
		{Action: ActionID{2}, Size: 30, Used: t0.Add(time.Hour), Meta: Meta{Kind: "deps", Target: "gfx90a"}},
		{Action: ActionID{3}, Size: 20, Used: t0.Add(2 * time.Hour), Meta: Meta{Kind: "object", Target: "gfx1030", Source: "a.hip"}},
	}
	kept, hidden := Select(ents, "gfx90a", false)
	assert.Equal(t, []Entry{ents[0]}, kept)
	assert.Equal(t, 1, hidden, "the deps entry is bookkeeping")
	kept, _ = Select(ents, "", true)
	require.NoError(t, SortEntries(kept, "size"))
	assert.Equal(t, []ActionID{{2}, {3}, {1}}, []ActionID{kept[0].Action, kept[1].Action, kept[2].Action})
	require.NoError(t, SortEntries(kept, "used"))
	assert.Equal(t, ActionID{3}, kept[0].Action)
	assert.EqualError(t, SortEntries(kept, "name"), `sort "name": want used, size, created or target`)
	b, err := json.Marshal(ents[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"key":"0100000000000000000000000000000000000000000000000000000000000000","output":`)
	assert.Contains(t, string(b), `"target":"gfx90a:xnack+","toolchain":"","rocm":"","size":10,"created":"0001-01-01T00:00:00Z","used":"2026-01-01T00:00:00Z"`)
}
