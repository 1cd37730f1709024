// Package cache is rocmk's build cache: a content-addressed store of
// compiler outputs, modelled on cmd/go/internal/cache.
//
// An ActionID names a computation (toolchain, target, flags, source and
// header contents, ...); an OutputID names the bytes it produced. The index
// file dir/<hh>/<action>-a maps one to the other and carries Meta for
// `rocmk cache ls`; the data lives once per content in dir/<hh>/<output>-d.
//
// Every file is written to a temporary file in its final directory, closed,
// then renamed into place, so a reader sees a whole file or none. A missing,
// truncated or corrupt entry is a miss (errors.Is(err, ErrNotFound)), never a
// wrong result.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rocmk/rocmk/cache/safefile"
)

// Version is the cache format version. It is written into every index entry,
// into the version file and into every ActionID (see NewHash): a format
// change makes every old entry a miss.
const Version = 1

// HashSize is the size of ActionID and OutputID.
const HashSize = 32

// An ActionID is the hash of everything that determines an output: the
// toolchain's identity, the target, the normalised flags, the environment
// that changes compiles, the source and every header it includes.
type ActionID [HashSize]byte

// An OutputID is the sha256 of an output's bytes.
type OutputID [HashSize]byte

func (id ActionID) String() string { return hex.EncodeToString(id[:]) }
func (id OutputID) String() string { return hex.EncodeToString(id[:]) }

// ParseActionID parses the hex form printed by String and `rocmk cache ls -q`.
func ParseActionID(s string) (ActionID, error) {
	var id ActionID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != HashSize {
		return id, fmt.Errorf("invalid cache key %q", s)
	}
	copy(id[:], b)
	return id, nil
}

// Meta describes an entry for people (`rocmk cache ls`) and for the
// --target and --toolchain filters of Trim. It never takes part in lookups.
type Meta struct {
	Kind      string `json:"kind,omitempty"` // "object", "bundle", "deps" (header manifest), ...
	Source    string `json:"source,omitempty"`
	Target    string `json:"target,omitempty"`    // target ID, e.g. gfx90a:xnack+
	Toolchain string `json:"toolchain,omitempty"` // e.g. "clang 15.0.7"
	ROCm      string `json:"rocm,omitempty"`      // e.g. "5.2.3"
}

// Entry is one index entry.
type Entry struct {
	Action  ActionID
	Output  OutputID
	Size    int64 // size of the data file
	Meta    Meta
	Created time.Time // when it was Put
	Used    time.Time // last use (mtime of the index file), precise to mtimeInterval
	// Remote is set by a remote tier's lookup that fetched the entry from
	// its server (cache/remote): where a hit came from.
	Remote bool
}

// ErrNotFound is the error of a miss. A corrupt, truncated or half-deleted
// entry is also a miss: the error wraps ErrNotFound and says why.
var ErrNotFound = errors.New("cache entry not found")

func miss(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, a...))
}

// Cache is a build cache in one directory. Its methods are safe for
// concurrent use by several goroutines and by several rocmk processes on
// one machine (not on a network file system, where rename and flock are not
// to be trusted).
type Cache struct {
	dir string
	now func() time.Time
}

// Dir returns the cache directory.
func (c *Cache) Dir() string { return c.dir }

// SetClock replaces the clock used for created/used times and trimming (tests,
// and commands that take the time from their environment). Call it before
// using c.
func (c *Cache) SetClock(now func() time.Time) { c.now = now }

// Open opens the cache in dir, creating it with a CACHEDIR.TAG, a README and
// a version file if needed.
//
// It is safe for several processes on one machine to use the same directory
// at once: they may duplicate work but never corrupt the cache or read a
// half-written entry. Do not share a cache directory between machines.
func Open(dir string) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("cache: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if !info.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: errors.New("not a directory")}
	}
	for name, content := range map[string]string{
		"CACHEDIR.TAG": cachedirTag,
		"README":       readme,
		"version":      fmt.Sprintf("%d\n", Version),
	} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := safefile.Write(p, []byte(content), ownFile(time.Time{})); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	return &Cache{dir: dir, now: time.Now}, nil
}

// cachedirTag follows https://bford.info/cachedir/ so backup tools skip the cache.
const cachedirTag = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file is a cache directory tag created by rocmk.\n" +
	"# For information about cache directory tags, see:\n" +
	"#\thttps://bford.info/cachedir/\n"

const readme = `This directory holds cached build artifacts from rocmk (GPU code objects
compiled for AMD ROCm targets). Everything here can be rebuilt: it is safe
to delete the whole directory at any time. Inspect it with 'rocmk cache ls',
check it with 'rocmk cache verify', and shrink it with 'rocmk cache prune'.
`

// fileName returns the path of the file for id with suffix "a" or "d".
func (c *Cache) fileName(id [HashSize]byte, suffix string) string {
	h := hex.EncodeToString(id[:])
	return filepath.Join(c.dir, h[:2], h+"-"+suffix)
}

// OutputFile returns the path of the data file for o. It does not check that
// the file exists or is intact (GetBytes and GetFile do).
func (c *Cache) OutputFile(o OutputID) string { return c.fileName(o, "d") }

// indexEntry is the JSON form of an index (-a) file.
type indexEntry struct {
	V       int       `json:"v"`
	Action  string    `json:"action"`
	Output  string    `json:"output"`
	Size    int64     `json:"size"`
	Meta    Meta      `json:"meta"`
	Created time.Time `json:"created"`
}

// maxIndexSize bounds what Get reads from an index file.
const maxIndexSize = 64 << 10

// MaxDataSize is the largest output the cache stores (and so reads back).
const MaxDataSize = 4 << 30

// decodeIndex parses an index file's bytes; want, if non-nil, must match.
func decodeIndex(b []byte, want *ActionID) (Entry, error) {
	var ie indexEntry
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ie); err != nil {
		return Entry{}, miss("bad index entry: %v", err)
	}
	if dec.More() {
		return Entry{}, miss("bad index entry: trailing data")
	}
	if ie.V != Version {
		return Entry{}, miss("index entry has format version %d, want %d", ie.V, Version)
	}
	var e Entry
	a, err1 := hex.DecodeString(ie.Action)
	o, err2 := hex.DecodeString(ie.Output)
	if err1 != nil || err2 != nil || len(a) != HashSize || len(o) != HashSize {
		return Entry{}, miss("bad index entry: bad id")
	}
	copy(e.Action[:], a)
	copy(e.Output[:], o)
	if want != nil && e.Action != *want {
		return Entry{}, miss("index entry names another action")
	}
	if ie.Size < 0 || ie.Size > MaxDataSize {
		return Entry{}, miss("bad index entry: size %d", ie.Size)
	}
	e.Size, e.Meta, e.Created = ie.Size, ie.Meta, ie.Created
	return e, nil
}

func encodeIndex(e Entry) []byte {
	b, _ := json.Marshal(indexEntry{
		V: Version, Action: e.Action.String(), Output: e.Output.String(),
		Size: e.Size, Meta: e.Meta, Created: e.Created.UTC(),
	})
	return append(b, '\n')
}

// Get looks up id. It checks that the index entry is well formed and that
// the data file exists with the recorded size, but does not hash the data:
// use GetBytes or GetFile for that. A successful Get marks the entry used.
func (c *Cache) Get(id ActionID) (Entry, error) {
	e, err := c.readIndex(id)
	if err != nil {
		return Entry{}, err
	}
	info, err := os.Stat(c.OutputFile(e.Output))
	if err != nil {
		return Entry{}, miss("data file: %v", errors.Unwrap(err))
	}
	if !info.Mode().IsRegular() {
		c.drop(e.Action, e.Output)
		return Entry{}, miss("data file is not a regular file (removed)")
	}
	if info.Size() != e.Size {
		return Entry{}, miss("data file has %d bytes, want %d", info.Size(), e.Size)
	}
	c.used(c.fileName(id, "a"), &e)
	return e, nil
}

func (c *Cache) readIndex(id ActionID) (Entry, error) {
	return readIndexFile(c.fileName(id, "a"), id)
}

// readIndexFile reads the index file name, which must be about id. Only a
// regular file of at most maxIndexSize bytes is read: a named pipe or a
// device planted there is a corrupt entry, not a wait.
func readIndexFile(name string, id ActionID) (Entry, error) {
	f, info, err := safefile.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Entry{}, ErrNotFound
		}
		return Entry{}, miss("%v", err)
	}
	defer f.Close()
	if info.Size() > maxIndexSize {
		return Entry{}, miss("index entry too long")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIndexSize+1))
	if err != nil {
		return Entry{}, miss("%v", err)
	}
	if len(b) > maxIndexSize {
		return Entry{}, miss("index entry too long")
	}
	e, err := decodeIndex(b, &id)
	if err != nil {
		return Entry{}, err
	}
	e.Used = info.ModTime()
	return e, nil
}

// GetBytes looks up id and returns the output bytes, checking their sha256.
// A mismatch is a miss, and the bad entry is removed.
func (c *Cache) GetBytes(id ActionID) ([]byte, Entry, error) {
	e, err := c.readIndex(id)
	if err != nil {
		return nil, Entry{}, err
	}
	data, err := safefile.Read(c.OutputFile(e.Output), e.Size)
	if notData(err) {
		c.drop(id, e.Output)
		return nil, Entry{}, miss("data file: %v (removed)", err)
	}
	if err != nil {
		return nil, Entry{}, miss("data file: %v", errors.Unwrap(err))
	}
	if int64(len(data)) != e.Size || OutputID(sha256.Sum256(data)) != e.Output {
		c.drop(id, e.Output)
		return nil, Entry{}, miss("data file is corrupt (removed)")
	}
	c.used(c.fileName(id, "a"), &e)
	return data, e, nil
}

// GetFile is GetBytes for callers that want a path: it checks the data
// file's sha256 and returns its path. The file must be treated as read-only
// and may be removed by a concurrent prune once GetFile returns; open it
// promptly or copy it.
func (c *Cache) GetFile(id ActionID) (string, Entry, error) {
	e, err := c.readIndex(id)
	if err != nil {
		return "", Entry{}, err
	}
	name := c.OutputFile(e.Output)
	out, size, err := hashFile(name)
	if notData(err) {
		c.drop(id, e.Output)
		return "", Entry{}, miss("data file: %v (removed)", err)
	}
	if err != nil {
		return "", Entry{}, miss("data file: %v", errors.Unwrap(err))
	}
	if size != e.Size || out != e.Output {
		c.drop(id, e.Output)
		return "", Entry{}, miss("data file is corrupt (removed)")
	}
	c.used(c.fileName(id, "a"), &e)
	return name, e, nil
}

// hashFile hashes a data file: a regular file of at most MaxDataSize bytes.
func hashFile(name string) (OutputID, int64, error) { return HashFile(name, MaxDataSize) }

// HashFile returns the sha256 of the regular file name, of at most limit
// bytes, and its size: how rocmk hashes a file's content, in the cache and
// for cache keys. Anything else (a named pipe, a device) is refused
// (safefile.ErrNotRegular), never read.
func HashFile(name string, limit int64) (OutputID, int64, error) {
	f, info, err := safefile.Open(name)
	if err != nil {
		return OutputID{}, 0, err
	}
	defer f.Close()
	if info.Size() > limit {
		return OutputID{}, 0, &safefile.TooLargeError{Name: name, Size: info.Size(), Max: limit}
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, limit+1))
	if err != nil {
		return OutputID{}, 0, err
	}
	if n > limit {
		return OutputID{}, 0, &safefile.TooLargeError{Name: name, Size: -1, Max: limit}
	}
	var o OutputID
	h.Sum(o[:0])
	return o, n, nil
}

// notData reports whether a read of a data file failed because the file
// cannot be one: not a regular file (a named pipe, a device, a link to
// /dev/zero), or larger than its entry or any entry. A missing file, or one
// that cannot be read for another reason, is not known to be bad.
func notData(err error) bool {
	return errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge)
}

// badData reports whether the data file name cannot hold o: its content
// hashes to something else, or notData.
func badData(name string, o OutputID) bool {
	got, _, err := hashFile(name)
	if err != nil {
		return notData(err)
	}
	return got != o
}

// drop removes a bad entry: its index file, and its data file if the data
// file is itself bad (another entry may share a good one).
func (c *Cache) drop(id ActionID, o OutputID) {
	os.Remove(c.fileName(id, "a"))
	if name := c.OutputFile(o); badData(name, o) {
		os.Remove(name)
	}
}

// Time constants, as in cmd/go: the used time (mtime of the index file) is
// bumped at most once per mtimeInterval, so that a hit costs no write in
// the common case.
const mtimeInterval = time.Hour

// used bumps the mtime of an index file if it is more than mtimeInterval old.
func (c *Cache) used(name string, e *Entry) {
	now := c.now()
	if d := now.Sub(e.Used); d < mtimeInterval && d > -mtimeInterval {
		return
	}
	if os.Chtimes(name, now, now) == nil {
		e.Used = now
	}
}

// Put stores the output read from r as the result of id and returns the new
// entry. It reads r twice (to hash it, then to copy it); r must not change
// in between. An identical data file already present is reused after its
// hash is checked; a corrupt one is replaced.
func (c *Cache) Put(id ActionID, r io.ReadSeeker, m Meta) (Entry, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return Entry{}, err
	}
	h := sha256.New()
	size, err := io.Copy(h, r)
	if err != nil {
		return Entry{}, err
	}
	if size > MaxDataSize {
		return Entry{}, fmt.Errorf("cache: %d bytes is over the %d-byte limit of an entry", size, int64(MaxDataSize))
	}
	var out OutputID
	h.Sum(out[:0])

	unlock, err := lock(c.lockFile(), false)
	if err != nil {
		return Entry{}, fmt.Errorf("cache: %w", err)
	}
	defer unlock()

	if err := c.putData(r, out, size); err != nil {
		return Entry{}, fmt.Errorf("cache: %w", err)
	}
	now := c.now()
	e := Entry{Action: id, Output: out, Size: size, Meta: m, Created: now, Used: now}
	if err := safefile.Write(c.fileName(id, "a"), encodeIndex(e), ownFile(now)); err != nil {
		return Entry{}, fmt.Errorf("cache: %w", err)
	}
	e.Created = e.Created.UTC()
	return e, nil
}

// PutBytes is Put for data in memory.
func (c *Cache) PutBytes(id ActionID, b []byte, m Meta) (Entry, error) {
	return c.Put(id, bytes.NewReader(b), m)
}

// putData writes the data file for out unless an intact one is there. The
// copy is hashed while it is written and renamed into place only if it
// matches out (r may have changed since it was hashed).
func (c *Cache) putData(r io.ReadSeeker, out OutputID, size int64) error {
	name := c.OutputFile(out)
	if info, err := os.Stat(name); err == nil && info.Size() == size {
		if got, n, err := hashFile(name); err == nil && got == out && n == size {
			return nil
		}
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return safefile.WriteFrom(name, ownFile(time.Time{}), func(w io.Writer) error {
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(w, h), r)
		if err == nil && (n != size || OutputID(h.Sum(nil)) != out) {
			err = errors.New("data changed while it was being stored")
		}
		return err
	})
}

// tempPrefix starts the name of every temporary file; Trim removes old ones
// (left by a killed process) and everything else ignores them.
const tempPrefix = ".tmp-"

// ownFile is how the cache writes its files: replaced whole whatever is
// there, through a temporary file named tempPrefix*, with mtime as the
// modification time unless it is zero.
func ownFile(mtime time.Time) safefile.Options {
	return safefile.Options{Owned: true, TempPrefix: tempPrefix, MTime: mtime}
}

func (c *Cache) lockFile() string { return filepath.Join(c.dir, "lock") }

// isSubdir reports whether name is one of the 256 "hh" subdirectories.
func isSubdir(name string) bool {
	if len(name) != 2 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil && strings.ToLower(name) == name
}

// List returns every well-formed index entry, sorted by key. It does not
// check data files (Verify does).
func (c *Cache) List() ([]Entry, error) {
	ents, _, err := c.scan()
	return ents, err
}

// scanResult is what a walk of the cache found besides good index entries.
type scanInfo struct {
	badIndex  []string            // index files that do not parse
	data      map[OutputID]int64  // data files and their sizes
	dataPath  map[OutputID]string // their paths
	temps     []string            // temporary files
	indexSize map[ActionID]int64  // size of each good index file
}

func (c *Cache) scan() ([]Entry, scanInfo, error) {
	si := scanInfo{data: map[OutputID]int64{}, dataPath: map[OutputID]string{}, indexSize: map[ActionID]int64{}}
	top, err := os.ReadDir(c.dir)
	if err != nil {
		return nil, si, fmt.Errorf("cache: %w", err)
	}
	var ents []Entry
	for _, d := range top {
		if !d.IsDir() || !isSubdir(d.Name()) {
			continue
		}
		sub := filepath.Join(c.dir, d.Name())
		names, err := readDirNames(sub)
		if err != nil {
			continue
		}
		for _, n := range names {
			p := filepath.Join(sub, n)
			switch {
			case strings.HasPrefix(n, tempPrefix):
				si.temps = append(si.temps, p)
			case strings.HasSuffix(n, "-a"):
				id, err := ParseActionID(strings.TrimSuffix(n, "-a"))
				if err != nil {
					continue
				}
				e, err := readIndexFile(p, id)
				if err == nil && p != c.fileName(id, "a") {
					err = miss("index entry in the wrong directory")
				}
				if err != nil {
					if !errors.Is(err, fs.ErrNotExist) && err != ErrNotFound {
						si.badIndex = append(si.badIndex, p)
					}
					continue
				}
				if info, err := os.Stat(p); err == nil {
					si.indexSize[id] = info.Size()
				}
				ents = append(ents, e)
			case strings.HasSuffix(n, "-d"):
				id, err := ParseActionID(strings.TrimSuffix(n, "-d"))
				if err != nil {
					continue
				}
				if info, err := os.Stat(p); err == nil {
					si.data[OutputID(id)] = info.Size()
					si.dataPath[OutputID(id)] = p
				}
			}
		}
	}
	slices.SortFunc(ents, func(a, b Entry) int { return bytes.Compare(a.Action[:], b.Action[:]) })
	return ents, si, nil
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	// Keep what was read before an error.
	if len(names) > 0 {
		err = nil
	}
	return names, err
}

// EntriesSize is the bytes of ents' data together.
func EntriesSize(ents []Entry) int64 {
	var n int64
	for _, e := range ents {
		n += e.Size
	}
	return n
}
