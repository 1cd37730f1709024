package cache

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/rocmk/rocmk/cache/safefile"
)

// Stats are the hit and miss counters since the last reset, plus the size
// of the cache when Stats was called.
type Stats struct {
	Hits    int64       `json:"hits"`
	Misses  int64       `json:"misses"`
	Remote  RemoteStats `json:"remote"`            // the remote tier's counters (cache/remote)
	Since   time.Time   `json:"since"`             // last reset (or first use)
	Entries int         `json:"entries,omitempty"` // filled by Stats, not stored
	Bytes   int64       `json:"bytes,omitempty"`   // data + index bytes, filled by Stats
	// Dirs and DirBytes are the areas' directories (trees/, devlibs/) and
	// their bytes, filled by Stats.
	Dirs     int   `json:"dirs,omitempty"`
	DirBytes int64 `json:"dir_bytes,omitempty"`
}

// RemoteStats are the remote tier's counters: lookups that reached the
// server and found an entry (Hits) or none (Misses), failures of any kind
// (Errors: connection, status, timeout, short or corrupt data), and bytes
// moved.
type RemoteStats struct {
	Hits      int64 `json:"hits"`
	Misses    int64 `json:"misses"`
	Errors    int64 `json:"errors"`
	BytesDown int64 `json:"bytes_down"`
	BytesUp   int64 `json:"bytes_up"`
	Uploads   int64 `json:"uploads"`
}

// Add returns the field-wise sum of r and o.
func (r RemoteStats) Add(o RemoteStats) RemoteStats {
	return RemoteStats{r.Hits + o.Hits, r.Misses + o.Misses, r.Errors + o.Errors,
		r.BytesDown + o.BytesDown, r.BytesUp + o.BytesUp, r.Uploads + o.Uploads}
}

// HitRate is Hits/(Hits+Misses), or 0 with no lookups.
func (s Stats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

func (c *Cache) statsFile() string { return filepath.Join(c.dir, "stats.json") }

// readStats reads the counters; a missing or unreadable file counts as zero.
func (c *Cache) readStats() Stats {
	var s Stats
	b, err := safefile.Read(c.statsFile(), maxIndexSize)
	if err == nil && json.Unmarshal(b, &s) == nil && s.Hits >= 0 && s.Misses >= 0 {
		return s
	}
	return Stats{}
}

// updateStats applies f to the stored counters under the stats lock, which
// serialises processes; the file itself is replaced by rename.
func (c *Cache) updateStats(f func(*Stats)) error {
	unlock, err := lock(filepath.Join(c.dir, "stats.lock"), true)
	if err != nil {
		return fmt.Errorf("cache stats: %w", err)
	}
	defer unlock()
	s := c.readStats()
	if s.Since.IsZero() {
		s.Since = c.now().UTC()
	}
	f(&s)
	s.Entries, s.Bytes, s.Dirs, s.DirBytes = 0, 0, 0, 0
	b, _ := json.Marshal(s)
	if err := safefile.Write(c.statsFile(), append(b, '\n'), ownFile(time.Time{})); err != nil {
		return fmt.Errorf("cache stats: %w", err)
	}
	return nil
}

// AddStats adds one run's hits and misses to the persistent counters. It is
// safe for concurrent processes: no update is lost.
func (c *Cache) AddStats(hits, misses int) error {
	if hits == 0 && misses == 0 {
		return nil
	}
	return c.updateStats(func(s *Stats) {
		s.Hits += int64(hits)
		s.Misses += int64(misses)
	})
}

// AddRemoteStats adds one run's remote counters to the persistent ones,
// under the same lock as AddStats.
func (c *Cache) AddRemoteStats(r RemoteStats) error {
	if r == (RemoteStats{}) {
		return nil
	}
	return c.updateStats(func(s *Stats) { s.Remote = s.Remote.Add(r) })
}

// ZeroStats resets the counters and their start time.
func (c *Cache) ZeroStats() error {
	return c.updateStats(func(s *Stats) { *s = Stats{Since: c.now().UTC()} })
}

// Stats returns the counters, the current number of entries and bytes, and
// the areas' directories and bytes.
func (c *Cache) Stats() (Stats, error) {
	s := c.readStats()
	ents, si, err := c.scan()
	if err != nil {
		return s, err
	}
	s.Entries = len(ents)
	s.Bytes = diskBytes(si)
	for _, d := range c.scanAreas().dirs {
		s.Dirs++
		s.DirBytes += d.Size
	}
	return s, nil
}

func diskBytes(si scanInfo) int64 {
	var n int64
	for _, sz := range si.data {
		n += sz
	}
	for _, sz := range si.indexSize {
		n += sz
	}
	return n
}
