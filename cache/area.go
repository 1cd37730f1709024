package cache

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rocmk/rocmk/cache/safefile"
)

// Areas are the directories under the cache root that hold whole
// directories instead of entries: translated CUDA trees and the
// HIP-on-NVIDIA headers (trees/), generated device libraries (devlibs/).
// The cache trims, verifies and counts them with its entries.
var Areas = []string{"trees", "devlibs"}

// AreaMarker is the file Publish writes last into a directory, before it
// renames the directory into place: its manifest (every file's size and
// sha256, every link's target, every subdirectory). A directory of an area
// is complete when its marker is there and everything matches it.
const AreaMarker = ".rocmk-complete"

// areaStamp is where an area outside a cache keeps the time of its last
// trim (earlier rocmk versions kept it there in the cache's areas too).
const areaStamp = "trim.txt"

// leftoverAge is how old a temporary directory in an area must be to be
// a killed process's leftover: one being written is younger (directories
// are written outside the cache's lock, unlike entries).
const leftoverAge = time.Hour

// An Area is a directory of directories, each published whole: written
// aside, given its marker, then renamed into place, so no reader ever sees
// half of one, and a killed process leaves only a temporary directory
// that trimming removes.
type Area struct {
	dir  string
	lock string // the cache's lock file; "" for an area outside a cache
	now  func() time.Time
}

// OpenArea returns the area in dir. When dir is one of Areas directly in a
// cache directory (one with rocmk's CACHEDIR.TAG), the area is that
// cache's: Trim and AutoTrim trim it under the cache's policy, and
// publishing takes the cache's lock. Elsewhere (no cache, a --keep
// directory) the area trims itself when it publishes, at most once a day,
// under AutoPolicy's age.
func OpenArea(dir string) *Area {
	a := &Area{dir: dir, now: time.Now}
	parent := filepath.Dir(dir)
	if slices.Contains(Areas, filepath.Base(dir)) {
		if fi, err := os.Lstat(filepath.Join(parent, "CACHEDIR.TAG")); err == nil && fi.Mode().IsRegular() {
			a.lock = filepath.Join(parent, "lock")
		}
	}
	return a
}

// Area returns the cache's area name (one of Areas).
func (c *Cache) Area(name string) *Area {
	return &Area{dir: filepath.Join(c.dir, name), lock: c.lockFile(), now: c.now}
}

// Dir is the area's directory.
func (a *Area) Dir() string { return a.dir }

// Publish returns the path of the directory name in the area, making it
// when it is not there whole: fill writes it into an empty temporary
// directory, Publish adds the marker and renames it into place. A
// directory that is there with its marker and passes ok (nil: any) is
// used as it is and marked used; one that fails is replaced whole. Losing
// the rename to another process publishing the same name is fine: theirs
// is used.
func (a *Area) Publish(name string, ok func(dir string) bool, fill func(tmp string) error) (string, error) {
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") || name == areaStamp {
		return "", fmt.Errorf("cache area %s: bad directory name %q", a.dir, name)
	}
	dir := filepath.Join(a.dir, name)
	if a.usable(dir, ok) {
		a.markUsed(dir)
		return dir, nil
	}
	if fi, err := os.Lstat(a.dir); err == nil && !fi.IsDir() && (a.lock != "" || fi.Mode()&fs.ModeSymlink == 0) {
		return "", fmt.Errorf("cache area %s is not a directory (%s): 'rocmk cache verify' removes it", a.dir, fi.Mode().Type())
	}
	if err := os.MkdirAll(a.dir, 0o777); err != nil {
		return "", err
	}
	a.removeLeftovers()
	if a.lock == "" {
		a.trimSelf()
	}
	tmp, err := os.MkdirTemp(a.dir, tempPrefix+name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // after the rename there is nothing left to remove
	if err := fill(tmp); err != nil {
		return "", err
	}
	if err := writeManifest(tmp); err != nil {
		return "", err
	}
	if a.lock != "" {
		unlock, err := lock(a.lock, false)
		if err != nil {
			return "", err
		}
		defer unlock()
	}
	if err := a.rename(tmp, dir, ok); err != nil {
		return "", err
	}
	return dir, nil
}

// usable says whether dir is a published directory that passes ok.
func (a *Area) usable(dir string, ok func(string) bool) bool {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false
	}
	if fi, err := os.Lstat(filepath.Join(dir, AreaMarker)); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return ok == nil || ok(dir)
}

// rename moves the finished tmp to dir. Linux says ENOTEMPTY (some systems
// EEXIST, ENOTDIR for a file) when something is there: a directory another
// run published meanwhile (use it), or something damaged (replace it).
func (a *Area) rename(tmp, dir string, ok func(string) bool) error {
	err := os.Rename(tmp, dir)
	if err == nil || !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) && !errors.Is(err, syscall.ENOTDIR) {
		return err
	}
	if a.usable(dir, ok) {
		return nil
	}
	// Move the damaged one aside under tmp's unique name, then rename.
	// Another run may win that last rename; its directory is as good.
	aside := tmp + "-damaged"
	if err := os.Rename(dir, aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	os.RemoveAll(aside)
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
		return err
	}
	return nil
}

// markUsed sets dir's mtime, its last use, at most once per mtimeInterval
// (as entries' index files), so a hit normally costs no write.
func (a *Area) markUsed(dir string) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return
	}
	now := a.now()
	if d := now.Sub(fi.ModTime()); d < mtimeInterval && d > -mtimeInterval {
		return
	}
	_ = os.Chtimes(dir, now, now)
}

// removeLeftovers removes the temporary directories killed processes left
// in the area.
func (a *Area) removeLeftovers() {
	for _, p := range a.leftovers(a.now()) {
		os.RemoveAll(p)
	}
}

// leftovers are the area's temporary directories older than leftoverAge.
func (a *Area) leftovers(now time.Time) []string {
	var out []string
	names, _ := readDirNames(a.dir)
	for _, n := range names {
		if !strings.HasPrefix(n, tempPrefix) {
			continue
		}
		p := filepath.Join(a.dir, n)
		if fi, err := os.Lstat(p); err == nil && now.Sub(fi.ModTime()) > leftoverAge {
			out = append(out, p)
		}
	}
	return out
}

// trimSelf removes the directories of an area outside a cache unused for
// AutoPolicy.OlderThan, at most once a day (areaStamp's mtime says when it
// last ran).
func (a *Area) trimSelf() {
	now := a.now()
	stamp := filepath.Join(a.dir, areaStamp)
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < trimInterval {
		return
	}
	if err := os.WriteFile(stamp, []byte(now.UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return
	}
	_ = os.Chtimes(stamp, now, now)
	dirs, _, _ := a.scan(false)
	for _, d := range dirs {
		if now.Sub(d.Used) > AutoPolicy.OlderThan {
			a.remove(d.Name)
		}
	}
}

// remove removes the area's directory name: moved aside first (under a
// temporary name that trimming removes if this process dies), so no run
// finds half of one.
func (a *Area) remove(name string) error {
	aside := filepath.Join(a.dir, tempPrefix+"rm-"+name+"-"+randomSuffix())
	if err := os.Rename(filepath.Join(a.dir, name), aside); err != nil {
		return err
	}
	return os.RemoveAll(aside)
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// AreaDir is one directory of an area, as Trim and Stats see it.
type AreaDir struct {
	Area string    `json:"area"` // "trees", "devlibs"
	Name string    `json:"name"`
	Size int64     `json:"size"` // bytes of its regular files
	Used time.Time `json:"used"` // last use: the directory's mtime
}

// AreaDirs lists the directories of the cache's areas, by area and name.
func (c *Cache) AreaDirs() []AreaDir { return c.scanAreas().dirs }

// AreaSize is the bytes of dirs' files together.
func AreaSize(dirs []AreaDir) int64 {
	var n int64
	for _, d := range dirs {
		n += d.Size
	}
	return n
}

// Path is the directory's path relative to the cache: trees/<name>.
func (d AreaDir) Path() string { return d.Area + "/" + d.Name }

// scan lists the area's directories, and, with strays, what else is at its
// top level that should not be (a file, a link, a FIFO where a directory
// should be). Temporary directories and the trim stamp are neither.
func (a *Area) scan(strays bool) (dirs []AreaDir, other []string, err error) {
	names, err := readDirNames(a.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return nil, nil, err
	}
	slices.Sort(names)
	for _, n := range names {
		if strings.HasPrefix(n, tempPrefix) || n == areaStamp {
			continue
		}
		p := filepath.Join(a.dir, n)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case !fi.IsDir():
			if strays {
				other = append(other, p)
			}
		default:
			dirs = append(dirs, AreaDir{Area: filepath.Base(a.dir), Name: n, Size: treeBytes(p), Used: fi.ModTime()})
		}
	}
	return dirs, other, nil
}

// treeBytes is the size of the regular files under dir; links are not
// followed.
func treeBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// manifest is the marker's content.
type manifest struct {
	V     int                     `json:"v"`
	Files map[string]manifestFile `json:"files"` // slash-separated path -> content
	Links map[string]string       `json:"links"` // path -> link target
	Dirs  []string                `json:"dirs"`
}

type manifestFile struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// maxManifest bounds what is read of a marker.
const maxManifest = 64 << 20

// writeManifest walks dir, a directory fill just wrote, and writes its
// marker. Anything but files, links and directories is refused.
func writeManifest(dir string) error {
	m := manifest{V: 1, Files: map[string]manifestFile{}, Links: map[string]string{}, Dirs: []string{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case rel == AreaMarker:
			return fmt.Errorf("%s: the name of the area's marker", p)
		case t.IsDir():
			m.Dirs = append(m.Dirs, rel)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m.Links[rel] = target
		case t.IsRegular():
			o, n, err := HashFile(p, MaxDataSize)
			if err != nil {
				return err
			}
			m.Files[rel] = manifestFile{Size: n, SHA256: o.String()}
		default:
			return fmt.Errorf("%s: not a regular file, link or directory (%s)", p, t)
		}
		return nil
	})
	if err != nil {
		return err
	}
	b, _ := json.Marshal(m)
	return os.WriteFile(filepath.Join(dir, AreaMarker), append(b, '\n'), 0o644)
}

// checkDir says what is wrong with dir, a directory of an area ("" when
// nothing is): no marker (half-published, or written by a rocmk before
// markers), or its content differs from the marker. It never opens
// anything but regular files, and never follows a link. bytes counts
// what it hashed.
func checkDir(dir string) (problem string, bytes int64) {
	b, err := safefile.Read(filepath.Join(dir, AreaMarker), maxManifest)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "incomplete: no " + AreaMarker + " (half-published, or written by an older rocmk)", 0
		}
		return fmt.Sprintf("unreadable %s: %v", AreaMarker, err), 0
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.V != 1 {
		return "unreadable " + AreaMarker, 0
	}
	seen := map[string]bool{}
	dirs := map[string]bool{}
	for _, d := range m.Dirs {
		dirs[d] = true
	}
	var bad string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			bad = err.Error()
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if p == dir || rel == AreaMarker {
			return nil
		}
		seen[rel] = true
		bad = checkPath(p, rel, d.Type(), m, dirs, &bytes)
		if bad != "" {
			return fs.SkipAll
		}
		return nil
	})
	if bad != "" {
		return bad, bytes
	}
	for _, group := range [][]string{mapKeys(m.Files), mapKeys(m.Links), m.Dirs} {
		for _, rel := range group {
			if !seen[rel] {
				return rel + ": missing", bytes
			}
		}
	}
	return "", bytes
}

// checkPath checks one path of an area directory against its manifest.
func checkPath(p, rel string, t fs.FileMode, m manifest, dirs map[string]bool, bytes *int64) string {
	switch {
	case t.IsDir():
		if !dirs[rel] {
			return rel + ": a directory the marker does not list"
		}
	case t&fs.ModeSymlink != 0:
		want, ok := m.Links[rel]
		if got, err := os.Readlink(p); !ok || err != nil || got != want {
			return rel + ": a link the marker does not list, or to another target"
		}
	case t.IsRegular():
		f, ok := m.Files[rel]
		if !ok {
			return rel + ": a file the marker does not list"
		}
		o, n, err := HashFile(p, f.Size)
		*bytes += n
		if err != nil || n != f.Size || o.String() != f.SHA256 {
			return rel + ": content does not match the marker (corrupt or truncated)"
		}
	default:
		return fmt.Sprintf("%s: not a regular file (%s)", rel, t.Type())
	}
	return ""
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
