package cache

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocmk/rocmk/cache/safefile"
)

// Policy says what Trim removes. Target and Toolchain restrict it to the
// entries whose Meta matches; among those it removes every entry (All), the
// entries not used for OlderThan, and then the least recently used ones
// until the whole cache is at most MaxBytes. With a filter and no other
// criterion, every matching entry is removed. The zero Policy removes only
// debris: stale temporary files, unreadable index files and data files no
// entry refers to.
type Policy struct {
	OlderThan time.Duration // remove entries unused for this long
	MaxBytes  int64         // then evict LRU entries until the cache is this small
	Target    string        // only entries for this target ("gfx90a" also matches "gfx90a:xnack+")
	Toolchain string        // only entries whose toolchain contains this text
	All       bool          // remove every matching entry
	DryRun    bool          // report, remove nothing
}

// Trimmed is what Trim removed (or would remove, with DryRun).
type Trimmed struct {
	Removed   []Entry   // entries, least recently used first
	Dirs      []AreaDir // directories of the areas (trees/, devlibs/), least recently used first
	Files     int       // files removed: index, data, debris
	Bytes     int64     // bytes freed
	Debris    int       // of Files: temporary files, unreadable index files, unreferenced data files, leftovers in areas
	Kept      int       // entries left
	KeptDirs  int       // area directories left
	KeptBytes int64     // bytes left
}

// MatchTarget reports whether an entry's target ID matches want: equal, or
// want is the processor alone ("gfx90a" matches "gfx90a:xnack+").
func MatchTarget(target, want string) bool {
	if target == want {
		return true
	}
	proc, _, _ := strings.Cut(target, ":")
	return proc == want
}

func (p Policy) matches(m Meta) bool {
	if p.Target != "" && !MatchTarget(m.Target, p.Target) {
		return false
	}
	if p.Toolchain != "" && !strings.Contains(m.Toolchain, p.Toolchain) {
		return false
	}
	return true
}

// Trim removes entries, and directories of the areas, as p says, least
// recently used first. An area directory has no Meta: a Target or
// Toolchain filter never matches one. Trim holds the cache's exclusive
// lock while it works, so a concurrent Put waits and then completes (its
// entry survives), a concurrent Get either finds an entry whole or misses,
// and a directory being published is renamed into place before Trim looks
// or after it is done.
func (c *Cache) Trim(p Policy) (Trimmed, error) {
	if p.OlderThan < 0 || p.MaxBytes < 0 {
		return Trimmed{}, fmt.Errorf("cache: negative trim limit")
	}
	if !p.DryRun {
		unlock, err := lock(c.lockFile(), true)
		if err != nil {
			return Trimmed{}, fmt.Errorf("cache: %w", err)
		}
		defer unlock()
	}
	ents, si, err := c.scan()
	if err != nil {
		return Trimmed{}, err
	}
	as := c.scanAreas()
	now := c.now()
	pl := newTrimPlan(ents, si, as.dirs)
	pl.choose(p, now)
	debris := append(c.debris(si, pl.refs, now, p.DryRun), as.debris...)
	t := pl.t
	counted := map[string]bool{} // debris that total counts: unreferenced data
	for _, p := range si.dataPath {
		counted[p] = true
	}
	for _, d := range debris {
		if info, err := os.Lstat(d); err == nil {
			sz := info.Size()
			if info.IsDir() {
				sz = treeBytes(d)
			}
			t.Bytes += sz
			if counted[d] {
				pl.total -= sz
			}
		}
		t.Files++
		t.Debris++
	}
	t.Kept = len(ents) - len(t.Removed)
	t.KeptDirs = len(as.dirs) - len(t.Dirs)
	t.KeptBytes = pl.total
	if p.DryRun {
		return t, nil
	}
	for _, e := range t.Removed {
		os.Remove(c.fileName(e.Action, "a"))
		if pl.refs[e.Output] == 0 {
			os.Remove(c.OutputFile(e.Output))
		}
	}
	for _, d := range t.Dirs {
		c.Area(d.Area).remove(d.Name)
	}
	for _, d := range debris {
		removeBad(d)
	}
	return t, nil
}

// trimPlan is what Trim chose so far, and the bytes that would be left.
type trimPlan struct {
	ents       []Entry
	dirs       []AreaDir
	si         scanInfo
	refs       map[OutputID]int // entries left per data file
	total      int64
	removed    []bool
	removedDir []bool
	t          Trimmed
}

func newTrimPlan(ents []Entry, si scanInfo, dirs []AreaDir) *trimPlan {
	// Least recently used first; ties by creation, then key, for stable output.
	slices.SortFunc(ents, func(a, b Entry) int {
		if r := a.Used.Compare(b.Used); r != 0 {
			return r
		}
		if r := a.Created.Compare(b.Created); r != 0 {
			return r
		}
		return bytes.Compare(a.Action[:], b.Action[:])
	})
	slices.SortFunc(dirs, func(a, b AreaDir) int {
		if r := a.Used.Compare(b.Used); r != 0 {
			return r
		}
		return strings.Compare(a.Path(), b.Path())
	})
	pl := &trimPlan{ents: ents, dirs: dirs, si: si, refs: map[OutputID]int{}, total: diskBytes(si),
		removed: make([]bool, len(ents)), removedDir: make([]bool, len(dirs))}
	for _, e := range ents {
		pl.refs[e.Output]++
	}
	for _, d := range dirs {
		pl.total += d.Size
	}
	return pl
}

func (pl *trimPlan) removeEntry(i int) {
	e := pl.ents[i]
	pl.removed[i] = true
	pl.t.Removed = append(pl.t.Removed, e)
	pl.t.Files++
	pl.t.Bytes += pl.si.indexSize[e.Action]
	pl.total -= pl.si.indexSize[e.Action]
	if pl.refs[e.Output]--; pl.refs[e.Output] == 0 {
		if sz, ok := pl.si.data[e.Output]; ok {
			pl.t.Files++
			pl.t.Bytes += sz
			pl.total -= sz
		}
	}
}

func (pl *trimPlan) removeDir(i int) {
	pl.removedDir[i] = true
	pl.t.Dirs = append(pl.t.Dirs, pl.dirs[i])
	pl.t.Bytes += pl.dirs[i].Size
	pl.total -= pl.dirs[i].Size
}

// choose marks what p removes: every match (All), the matches unused for
// OlderThan, every match of a filter alone, then the least recently used
// matches, entries and directories in one order, until MaxBytes.
func (pl *trimPlan) choose(p Policy, now time.Time) {
	filtered := p.Target != "" || p.Toolchain != ""
	for i, e := range pl.ents {
		if !p.matches(e.Meta) {
			continue
		}
		switch {
		case p.All,
			p.OlderThan > 0 && now.Sub(e.Used) > p.OlderThan,
			filtered && p.OlderThan == 0 && p.MaxBytes == 0:
			pl.removeEntry(i)
		}
	}
	if !filtered {
		for i, d := range pl.dirs {
			if p.All || p.OlderThan > 0 && now.Sub(d.Used) > p.OlderThan {
				pl.removeDir(i)
			}
		}
	}
	if p.MaxBytes <= 0 {
		return
	}
	i, j := 0, 0
	for pl.total > p.MaxBytes {
		for i < len(pl.ents) && (pl.removed[i] || !p.matches(pl.ents[i].Meta)) {
			i++
		}
		for j < len(pl.dirs) && (pl.removedDir[j] || filtered) {
			j++
		}
		switch {
		case i < len(pl.ents) && (j == len(pl.dirs) || !pl.dirs[j].Used.Before(pl.ents[i].Used)):
			pl.removeEntry(i)
		case j < len(pl.dirs):
			pl.removeDir(j)
		default:
			return
		}
	}
}

// debris is what Trim removes besides entries: temporary files, unreadable
// index files and data files no entry refers to. Under the exclusive lock
// no Put is half-way, so every temporary file in a subdirectory is left
// over from a killed process; without it (dryRun), only old ones surely are.
func (c *Cache) debris(si scanInfo, refs map[OutputID]int, now time.Time, dryRun bool) []string {
	var debris []string
	for _, tmp := range si.temps {
		if dryRun {
			if info, err := os.Stat(tmp); err != nil || now.Sub(info.ModTime()) < mtimeInterval {
				continue
			}
		}
		debris = append(debris, tmp)
	}
	debris = append(debris, si.badIndex...)
	for o, path := range si.dataPath {
		if _, ok := refs[o]; !ok {
			debris = append(debris, path)
		}
	}
	return debris
}

// areaScan is what a walk of the areas found.
type areaScan struct {
	dirs   []AreaDir
	debris []string // leftovers of killed processes; what is not a directory where one should be
	temps  int      // temporary directories, young ones included
}

// scanAreas lists the areas' directories. An area that is not a directory
// (a file, or a link, which is never followed) is debris, as is anything
// at an area's top level that is not a directory.
func (c *Cache) scanAreas() areaScan {
	var as areaScan
	now := c.now()
	for _, name := range Areas {
		a := c.Area(name)
		fi, err := os.Lstat(a.dir)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			as.debris = append(as.debris, a.dir)
			continue
		}
		dirs, strays, err := a.scan(true)
		if err != nil {
			continue
		}
		as.dirs = append(as.dirs, dirs...)
		as.debris = append(as.debris, strays...)
		as.debris = append(as.debris, a.leftovers(now)...)
		names, _ := readDirNames(a.dir)
		for _, n := range names {
			if strings.HasPrefix(n, tempPrefix) {
				as.temps++
			}
		}
	}
	return as
}

// AutoPolicy is what AutoTrim applies: entries and area directories unused
// for 30 days go, then the least recently used until the cache, areas
// included, is at most 5 GiB.
var AutoPolicy = Policy{OlderThan: 30 * 24 * time.Hour, MaxBytes: 5 << 30}

// trimInterval is how often AutoTrim does any work.
const trimInterval = 24 * time.Hour

// AutoTrim applies AutoPolicy if it has not run in the last day (the time
// of the last run is kept in trim.txt). Builds call it when they finish.
func (c *Cache) AutoTrim() error {
	now := c.now()
	name := filepath.Join(c.dir, "trim.txt")
	if b, err := safefile.Read(name, maxIndexSize); err == nil {
		if sec, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			// A time far in the future means a broken clock or file: trim anyway.
			if d := now.Sub(time.Unix(sec, 0)); d < trimInterval && d > -mtimeInterval {
				return nil
			}
		}
	}
	if _, err := c.Trim(AutoPolicy); err != nil {
		return err
	}
	// If this write is lost, the next build trims again: harmless.
	return safefile.Write(name, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"), ownFile(time.Time{}))
}
