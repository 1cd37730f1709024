package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// A deps entry (ccache's "manifest") is stored under the base key of a job:
// the inputs the last compile of that job depended on besides the source
// and the command line. Each record names a path as the compiler named it:
// relative to the build's base directory (resolved against the current
// base directory when read back, so a copy of a project reads its own
// files) or absolute. The object's key is the base key plus every record
// with its current value: a file's content hash, a probe's state.
type depRecord struct {
	Kind byte   // recFile, recProbe, recSearchDir or recInstall
	Path string // relative to the base directory, or absolute

	// recFile: stat data and content hash when recorded.
	Size, MTime, CTime int64
	Ino                uint64
	Hash               string

	// The other kinds: the state the key holds (see pathInfo).
	State string
}

const (
	recFile      = 'f' // a file the compiler read: its content
	recProbe     = 'p' // a header candidate the compiler tried: absent, present or a special file
	recSearchDir = 'd' // a search directory the compiler dropped because it did not exist
	recInstall   = 's' // a directory whose entries chose the toolchain's directories: their names
)

// depsEntry is the "deps" cache entry of a job: the record sets of its
// last compiles, newest first (ccache's manifest keeps several results too:
// two copies of a project with different headers, or a header switched back
// and forth, each find their object). It is text (a version line, then per
// record set an "@ <record time>" line and one record per line) because
// every cached job reads one.
type depsEntry struct {
	Alts []depsAlt
}

// maxAlts bounds the record sets a deps entry keeps.
const maxAlts = 8

// depsAlt is one compile's record set. Groups name shared record sets
// (stored as their own entries): the records of lookups made outside the
// base directory (in system headers, on the command line) are the same for
// every source with the same flags, so they are stored once and checked
// once per build, not once per job.
type depsAlt struct {
	Recorded int64 // unix ns when recorded
	Groups   []string
	Files    []depRecord
}

// depsMagic heads a job's deps entry, groupMagic a shared group (one record set).
const (
	depsMagic  = "rocmk-deps v2"
	groupMagic = "rocmk-deps-group v1"
)

func (d depsEntry) marshal(magic string) []byte {
	var b bytes.Buffer
	b.WriteString(magic + "\n")
	for _, a := range d.Alts {
		fmt.Fprintf(&b, "@ %d\n", a.Recorded)
		for _, g := range a.Groups {
			fmt.Fprintf(&b, "g %s\n", g)
		}
		for _, r := range a.Files {
			if r.Kind == recFile {
				fmt.Fprintf(&b, "f %d %d %d %d %s %s\n", r.Size, r.MTime, r.CTime, r.Ino, r.Hash, r.Path)
			} else {
				fmt.Fprintf(&b, "%c %s %s\n", r.Kind, r.State, r.Path)
			}
		}
	}
	return b.Bytes()
}

func parseDepsEntry(data []byte, magic string) (depsEntry, error) {
	var d depsEntry
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) < 2 || lines[0] != magic {
		return d, errors.New("bad deps entry")
	}
	var a *depsAlt
	for _, l := range lines[1:] {
		if len(l) < 2 || l[1] != ' ' || (a == nil && l[0] != '@') {
			return d, errors.New("bad deps record")
		}
		r := depRecord{Kind: l[0]}
		switch r.Kind {
		case '@':
			t, err := strconv.ParseInt(l[2:], 10, 64)
			if err != nil {
				return d, err
			}
			d.Alts = append(d.Alts, depsAlt{Recorded: t})
			a = &d.Alts[len(d.Alts)-1]
			continue
		case 'g':
			if len(l) != 2+64 || len(a.Files) > 0 {
				return d, errors.New("bad deps group")
			}
			a.Groups = append(a.Groups, l[2:])
			continue
		case recFile:
			f := strings.SplitN(l[2:], " ", 6)
			if len(f) != 6 || len(f[4]) != 64 || f[5] == "" {
				return d, errors.New("bad deps record")
			}
			var e1, e2, e3, e4 error
			r.Size, e1 = strconv.ParseInt(f[0], 10, 64)
			r.MTime, e2 = strconv.ParseInt(f[1], 10, 64)
			r.CTime, e3 = strconv.ParseInt(f[2], 10, 64)
			r.Ino, e4 = strconv.ParseUint(f[3], 10, 64)
			if err := errors.Join(e1, e2, e3, e4); err != nil {
				return d, err
			}
			r.Hash, r.Path = f[4], f[5]
		case recProbe, recSearchDir, recInstall:
			state, path, ok := strings.Cut(l[2:], " ")
			if !ok || state == "" || path == "" {
				return d, errors.New("bad deps record")
			}
			r.State, r.Path = state, path
		default:
			return d, errors.New("bad deps record kind")
		}
		a.Files = append(a.Files, r)
	}
	return d, nil
}

// sameInputs reports whether two record sets name the same inputs with the
// same values (the stat data of files aside).
func (a depsAlt) sameInputs(b depsAlt) bool {
	if len(a.Files) != len(b.Files) || !slices.Equal(a.Groups, b.Groups) {
		return false
	}
	for i := range a.Files {
		if a.Files[i].keyLine() != b.Files[i].keyLine() {
			return false
		}
	}
	return true
}

// keyLine is what a record adds to the object's key.
func (r depRecord) keyLine() string {
	switch r.Kind {
	case recFile:
		return "dep " + r.Path + " " + r.Hash
	case recProbe:
		return "header " + r.Path + " " + r.State
	case recSearchDir:
		return "searchdir " + r.Path + " " + r.State
	}
	return "install " + r.Path + " " + r.State
}

// sortRecords orders records by path then kind, without duplicates, so the
// same inputs always give the same key.
func sortRecords(recs []depRecord) []depRecord {
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].Path != recs[j].Path {
			return recs[i].Path < recs[j].Path
		}
		return recs[i].Kind < recs[j].Kind
	})
	out := recs[:0]
	for i, r := range recs {
		if i > 0 && r.Path == recs[i-1].Path && r.Kind == recs[i-1].Kind {
			continue
		}
		out = append(out, r)
	}
	return out
}

// pathInfo is what one stat (and, for a regular file, one access check)
// says about a path.
type pathInfo struct {
	Err                error // from stat
	Mode               fs.FileMode
	Size, MTime, CTime int64
	Ino, Dev           uint64
	Readable           bool // a regular file the compiler can open
}

func statPath(p string) pathInfo {
	fi, err := os.Stat(p)
	if err != nil {
		return pathInfo{Err: err}
	}
	pi := pathInfo{Mode: fi.Mode(), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	pi.CTime, pi.Dev, pi.Ino = sysStat(fi)
	if pi.regular() {
		pi.Readable = readable(p)
	}
	return pi
}

func (p pathInfo) regular() bool { return p.Err == nil && p.Mode.IsRegular() }
func (p pathInfo) isDir() bool   { return p.Err == nil && p.Mode.IsDir() }
func (p pathInfo) id() fileID    { return fileID{p.Dev, p.Ino} }

// sameFile reports whether two stats saw the same file, unchanged: a file
// renamed or linked into the path keeps its own ctime, so only its inode
// and device tell it from the one it replaced.
func (p pathInfo) sameFile(q pathInfo) bool {
	return p.Err == nil && q.Err == nil && p.Dev == q.Dev && p.Ino == q.Ino &&
		p.Size == q.Size && p.MTime == q.MTime && p.CTime == q.CTime
}

// headerState is how a header lookup sees a candidate path. clang skips a
// path that does not exist, is a directory or cannot be opened, and uses
// anything else: a regular file, or a FIFO or device that would block or
// never end (rocmk refuses those before compiling).
func (p pathInfo) headerState() string {
	switch {
	case p.Err != nil || p.isDir():
		return "absent"
	case p.regular():
		if p.Readable {
			return "present"
		}
		return "absent"
	case p.Mode&fs.ModeNamedPipe != 0:
		return "fifo"
	case p.Mode&fs.ModeCharDevice != 0:
		return "chardev"
	case p.Mode&fs.ModeDevice != 0:
		return "blockdev"
	}
	return "absent" // a socket: open fails
}

// dirState is how the compiler's search-list setup sees a directory.
func (p pathInfo) dirState() string {
	if p.isDir() {
		return "dir"
	}
	return "none"
}

// dirListing identifies a directory's entries by their names (not by stat
// data, so two machines with the same installations agree, and a remote
// cache's records hold on both).
func dirListing(p string) string {
	ents, err := os.ReadDir(p)
	if err != nil {
		return "none"
	}
	h := sha256.New()
	for _, e := range ents {
		h.Write([]byte(e.Name() + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fileID identifies a file whatever its name.
type fileID struct{ dev, ino uint64 }

// pathMemo remembers one stat per path for one Build, so a header shared by
// many jobs is stat'ed once and every job sees the tree as it was when the
// build first looked.
type pathMemo struct {
	mu    sync.Mutex
	m     map[string]pathInfo
	lists map[string]string // dirListing
}

func (s *pathMemo) reset() {
	s.mu.Lock()
	s.m, s.lists = nil, nil
	s.mu.Unlock()
}

// listing is dirListing, once per path per build.
func (s *pathMemo) listing(p string) string { return memoized(&s.mu, &s.lists, p, dirListing) }

func (s *pathMemo) stat(p string) pathInfo { return memoized(&s.mu, &s.m, p, statPath) }

// memoized is (*m)[p], computed by f outside the lock the first time.
func memoized[V any](mu *sync.Mutex, m *map[string]V, p string, f func(string) V) V {
	mu.Lock()
	v, ok := (*m)[p]
	mu.Unlock()
	if ok {
		return v
	}
	v = f(p)
	mu.Lock()
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[p] = v
	mu.Unlock()
	return v
}
