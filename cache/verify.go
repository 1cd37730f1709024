package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Problem is one bad file found by Verify.
type Problem struct {
	Path   string `json:"path"`
	Key    string `json:"key,omitempty"` // action ID of the entry concerned, if any
	Reason string `json:"reason"`
	Fixed  bool   `json:"removed"`
}

// VerifyReport is what Verify checked and found.
type VerifyReport struct {
	Entries      int       `json:"entries"`        // index entries read
	DataFiles    int       `json:"data_files"`     // data files hashed
	Bytes        int64     `json:"bytes"`          // bytes hashed
	Problems     []Problem `json:"problems"`       // corrupt or truncated files, entries without data
	Removed      int       `json:"removed"`        // files removed (fix)
	Dirs         int       `json:"dirs,omitempty"` // directories of the areas (trees/, devlibs/) checked against their markers
	TempFiles    int       `json:"temp_files"`     // temporary files and directories (ignored; prune removes them)
	Unreferenced int       `json:"unreferenced"`   // intact data files no entry uses (prune removes them)
}

// OK reports whether Verify found nothing wrong.
func (r VerifyReport) OK() bool { return len(r.Problems) == 0 }

// RelativeTo is r with its problems' paths relative to dir (the cache
// directory) where they are inside it.
func (r VerifyReport) RelativeTo(dir string) VerifyReport {
	probs := make([]Problem, len(r.Problems))
	for i, p := range r.Problems {
		if q, err := filepath.Rel(dir, p.Path); err == nil {
			p.Path = q
		}
		probs[i] = p
	}
	r.Problems = probs
	return r
}

// Verify re-hashes every data file and checks every index entry against
// its data. With fix, it removes what is bad (an entry whose data is bad
// is removed too) so that the next build recompiles it. Temporary files
// and unreferenced data files are counted, not reported: a running or
// killed rocmk leaves them, and prune removes them.
//
// Hashing runs without a lock; removal takes the exclusive lock and
// re-checks each file first, so a concurrent Put that repairs an entry
// is not undone.
func (c *Cache) Verify(fix bool) (VerifyReport, error) {
	ents, si, err := c.scan()
	if err != nil {
		return VerifyReport{}, err
	}
	r := VerifyReport{Entries: len(ents), TempFiles: len(si.temps)}
	for _, p := range si.badIndex {
		r.Problems = append(r.Problems, Problem{Path: p, Key: keyOf(p), Reason: "unreadable index entry"})
	}
	badData := map[OutputID]bool{}
	for o, p := range si.dataPath {
		r.DataFiles++
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			// A directory, link or FIFO where a data file should be:
			// never read it (a FIFO would block), remove it with fix.
			badData[o] = true
			r.Problems = append(r.Problems, Problem{Path: p, Reason: fmt.Sprintf("not a regular file (%s)", fi.Mode().Type())})
			continue
		}
		got, n, err := hashFile(p)
		r.Bytes += n
		switch {
		case errors.Is(err, fs.ErrNotExist):
			delete(si.data, o) // removed meanwhile (prune)
		case err != nil:
			badData[o] = true
			r.Problems = append(r.Problems, Problem{Path: p, Reason: fmt.Sprintf("unreadable data file: %v", err)})
		case got != o:
			badData[o] = true
			r.Problems = append(r.Problems, Problem{Path: p, Reason: "data file content does not match its hash (corrupt or truncated)"})
		}
	}
	used := map[OutputID]bool{}
	for _, e := range ents {
		used[e.Output] = true
		p := c.fileName(e.Action, "a")
		sz, ok := si.data[e.Output]
		switch {
		case !ok:
			// Absent at scan time, or removed since: look again.
			if _, err := os.Stat(c.OutputFile(e.Output)); err == nil {
				continue
			}
			r.Problems = append(r.Problems, Problem{Path: p, Key: e.Action.String(), Reason: "data file missing"})
		case badData[e.Output]:
			r.Problems = append(r.Problems, Problem{Path: p, Key: e.Action.String(), Reason: "data file corrupt"})
		case sz != e.Size:
			r.Problems = append(r.Problems, Problem{Path: p, Key: e.Action.String(), Reason: fmt.Sprintf("data file has %d bytes, entry says %d", sz, e.Size)})
		}
	}
	for o := range si.data {
		if !used[o] && !badData[o] {
			r.Unreferenced++
		}
	}
	c.verifyAreas(&r)
	slices.SortFunc(r.Problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	if !fix || len(r.Problems) == 0 {
		return r, nil
	}
	unlock, err := lock(c.lockFile(), true)
	if err != nil {
		return r, fmt.Errorf("cache: %w", err)
	}
	defer unlock()
	for i := range r.Problems {
		pr := &r.Problems[i]
		if c.stillBad(pr.Path) && removeBad(pr.Path) == nil {
			pr.Fixed = true
			r.Removed++
		}
	}
	return r, nil
}

// verifyAreas checks every directory of the areas against its marker. An
// area, or a thing at an area's top level, that is not a directory is a
// problem too (a link is never followed).
func (c *Cache) verifyAreas(r *VerifyReport) {
	as := c.scanAreas()
	r.TempFiles += as.temps
	for _, name := range Areas {
		if fi, err := os.Lstat(filepath.Join(c.dir, name)); err == nil && !fi.IsDir() {
			r.Problems = append(r.Problems, Problem{Path: filepath.Join(c.dir, name), Reason: notDir(fi)})
		}
		_, strays, _ := c.Area(name).scan(true)
		for _, p := range strays {
			if fi, err := os.Lstat(p); err == nil {
				r.Problems = append(r.Problems, Problem{Path: p, Reason: notDir(fi)})
			}
		}
	}
	var suspects []string
	for _, d := range as.dirs {
		r.Dirs++
		bad, n := checkDir(filepath.Join(c.dir, d.Area, d.Name))
		r.Bytes += n
		if bad != "" {
			suspects = append(suspects, filepath.Join(c.dir, d.Area, d.Name))
		}
	}
	if len(suspects) == 0 {
		return
	}
	// A publish replacing a directory, or a prune, may have moved it
	// while it was read: look again where neither can run.
	if unlock, err := lock(c.lockFile(), true); err == nil {
		defer unlock()
	}
	for _, p := range suspects {
		if bad, _ := checkDir(p); bad != "" && !gone(p) {
			r.Problems = append(r.Problems, Problem{Path: p, Reason: bad})
		}
	}
}

func gone(p string) bool {
	_, err := os.Lstat(p)
	return errors.Is(err, fs.ErrNotExist)
}

func notDir(fi fs.FileInfo) string {
	return fmt.Sprintf("not a directory (%s)", fi.Mode().Type())
}

// areaOf says whether path is an area of c, or at an area's top level, and
// which area.
func (c *Cache) areaOf(path string) (string, bool) {
	rel, err := filepath.Rel(c.dir, path)
	if err != nil {
		return "", false
	}
	first, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first, slices.Contains(Areas, first) && !strings.Contains(rest, "/")
}

// removeBad removes a bad cache file, or a directory put in a file's place
// (os.Remove alone fails on a non-empty one, so verify would never fix it).
func removeBad(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		if name := filepath.Base(path); !strings.HasPrefix(name, tempPrefix) {
			// An area's directory goes whole or not at all.
			return OpenArea(filepath.Dir(path)).remove(name)
		}
		return os.RemoveAll(path)
	}
	return os.Remove(path)
}

// stillBad re-checks a file Verify found bad, under the exclusive lock.
func (c *Cache) stillBad(path string) bool {
	base := path[strings.LastIndexByte(path, os.PathSeparator)+1:]
	if _, ok := c.areaOf(path); ok {
		fi, err := os.Lstat(path)
		if err != nil {
			return false
		}
		if !fi.IsDir() || filepath.Dir(path) == c.dir {
			return !fi.IsDir()
		}
		bad, _ := checkDir(path)
		return bad != ""
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return strings.HasSuffix(base, "-d") || strings.HasSuffix(base, "-a")
	}
	switch {
	case strings.HasSuffix(base, "-d"):
		id, err := ParseActionID(strings.TrimSuffix(base, "-d"))
		if err != nil {
			return false
		}
		return badData(path, OutputID(id))
	case strings.HasSuffix(base, "-a"):
		id, err := ParseActionID(strings.TrimSuffix(base, "-a"))
		if err != nil {
			return false
		}
		e, err := c.readIndex(id)
		if err != nil {
			return !errors.Is(err, fs.ErrNotExist) && err != ErrNotFound
		}
		if fi, err := os.Lstat(c.OutputFile(e.Output)); err == nil && !fi.Mode().IsRegular() {
			return true
		}
		got, n, err := hashFile(c.OutputFile(e.Output))
		return err != nil || got != e.Output || n != e.Size
	}
	return false
}

func keyOf(path string) string {
	base := path[strings.LastIndexByte(path, os.PathSeparator)+1:]
	return strings.TrimSuffix(base, "-a")
}
