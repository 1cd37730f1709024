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
	Removed   []Entry // entries, least recently used first
	Files     int     // files removed: index, data, debris
	Bytes     int64   // bytes freed
	Debris    int     // of Files: temporary files, unreadable index files, unreferenced data files
	Kept      int     // entries left
	KeptBytes int64   // bytes left
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

// Trim removes entries as p says, least recently used first. It holds the
// cache's exclusive lock while it works, so a concurrent Put waits and then
// completes (its entry survives); a concurrent Get either finds an entry
// whole or misses.
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
	now := c.now()
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
	refs := map[OutputID]int{}
	for _, e := range ents {
		refs[e.Output]++
	}
	total := diskBytes(si)
	var t Trimmed
	removed := make([]bool, len(ents))
	remove := func(i int) {
		e := ents[i]
		removed[i] = true
		t.Removed = append(t.Removed, e)
		t.Files++
		t.Bytes += si.indexSize[e.Action]
		total -= si.indexSize[e.Action]
		if refs[e.Output]--; refs[e.Output] == 0 {
			if sz, ok := si.data[e.Output]; ok {
				t.Files++
				t.Bytes += sz
				total -= sz
			}
		}
	}
	filtered := p.Target != "" || p.Toolchain != ""
	for i, e := range ents {
		if !p.matches(e.Meta) {
			continue
		}
		switch {
		case p.All,
			p.OlderThan > 0 && now.Sub(e.Used) > p.OlderThan,
			filtered && p.OlderThan == 0 && p.MaxBytes == 0:
			remove(i)
		}
	}
	if p.MaxBytes > 0 {
		for i, e := range ents {
			if total <= p.MaxBytes {
				break
			}
			if !removed[i] && p.matches(e.Meta) {
				remove(i)
			}
		}
	}
	// Debris. Under the exclusive lock no Put is half-way, so every
	// temporary file in a subdirectory is left over from a killed process.
	var debris []string
	for _, tmp := range si.temps {
		if p.DryRun {
			// Without the lock, only old ones are surely debris.
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
	for _, d := range debris {
		if info, err := os.Stat(d); err == nil {
			t.Bytes += info.Size()
			total -= info.Size()
		}
		t.Files++
		t.Debris++
	}
	t.Kept = len(ents) - len(t.Removed)
	t.KeptBytes = total
	if p.DryRun {
		return t, nil
	}
	for _, e := range t.Removed {
		os.Remove(c.fileName(e.Action, "a"))
		if refs[e.Output] == 0 {
			os.Remove(c.OutputFile(e.Output))
		}
	}
	for _, d := range debris {
		os.Remove(d)
	}
	return t, nil
}

// AutoPolicy is what AutoTrim applies: entries unused for 30 days go, then
// the least recently used until the cache is at most 5 GiB.
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
