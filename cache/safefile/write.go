package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrReadOnly is wrapped by the error of a Write to an existing file that
// has no write permission: rocmk never replaces it, even as root.
var ErrReadOnly = errors.New("file is read-only; not modified")

// Options tune Write.
type Options struct {
	// Perm is the permission of a new file (0 means 0o644). A replaced
	// file keeps its own.
	Perm fs.FileMode
	// Sync flushes the data to disk before the rename, for a file whose old
	// content must survive a crash (a source rewritten in place).
	Sync bool
	// SkipIfSame leaves a regular file that already holds the data
	// untouched, mtime included (no-op rebuilds).
	SkipIfSame bool
	// Owned is for files rocmk alone writes (the cache's): whatever is at
	// name, a symbolic link, a named pipe or a read-only file, is replaced
	// by the rename, never followed, written into or refused.
	Owned bool
	// TempPrefix starts the temporary file's name instead of ".NAME.rocmk-"
	// (the cache uses ".tmp-", which its trimming removes when a killed
	// process leaves one).
	TempPrefix string
	// MTime, when set, is the file's modification time.
	MTime time.Time
}

// Write writes data to name:
//   - an existing regular file, or a new one, is replaced atomically: the
//     data goes to a temporary file in the same directory (missing parent
//     directories are created), which is renamed over name, so readers see
//     the old content or the new, never a part;
//   - a symbolic link is followed: its target is written and the link kept;
//   - an existing file without write permission is refused (ErrReadOnly);
//   - an existing device, named pipe or socket, or a name under /dev/fd,
//     /proc/self/fd, /dev/stdout or /dev/stderr (the caller's descriptors,
//     as in `-o >(cmd)`), is opened and written directly, never renamed
//     over. A named pipe with no reader is an error, not a wait.
//
// With o.Owned, name is always replaced atomically (see Options.Owned).
func Write(name string, data []byte, o Options) error {
	return write(name, data, o, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom is Write for data produced by fill as it is written (a copy
// hashed on the way). An error from fill removes the temporary file and
// leaves name as it was; a special file written directly may have
// received part of the data.
func WriteFrom(name string, o Options, fill func(w io.Writer) error) error {
	o.SkipIfSame = false
	return write(name, nil, o, fill)
}

func write(name string, data []byte, o Options, fill func(io.Writer) error) error {
	if o.Owned {
		if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
			return err
		}
		return replace(name, o, perm(o), fill)
	}
	if isDescriptor(name) {
		return writeDirect(name, fill, os.O_APPEND|oNonblock)
	}
	fi, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		target, err := linkTarget(name)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
			return err
		}
		return replace(target, o, perm(o), fill)
	case err != nil:
		return err
	case fi.IsDir():
		return &fs.PathError{Op: "write", Path: name, Err: syscall.EISDIR}
	case fi.Mode()&fs.ModeNamedPipe != 0:
		return writeDirect(name, fill, oNonblock)
	case !fi.Mode().IsRegular():
		return writeDirect(name, fill, 0)
	}
	if fi.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s: %w", name, ErrReadOnly)
	}
	target, err := filepath.EvalSymlinks(name)
	if err != nil {
		return err
	}
	if o.SkipIfSame && fi.Size() == int64(len(data)) {
		if old, err := Read(target, fi.Size()); err == nil && bytes.Equal(old, data) {
			return nil
		}
	}
	return replace(target, o, fi.Mode().Perm(), fill)
}

// perm is the permission of a new file.
func perm(o Options) fs.FileMode {
	if o.Perm == 0 {
		return 0o644
	}
	return o.Perm
}

// CheckWritable returns the error Write would give for a read-only name, so
// a caller can refuse before it writes anything else (a backup).
func CheckWritable(name string) error {
	if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s: %w", name, ErrReadOnly)
	}
	return nil
}

// isDescriptor reports whether name is one of the process's open files.
func isDescriptor(name string) bool {
	for _, p := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return name == "/dev/stdout" || name == "/dev/stderr"
}

// writeDirect writes data into an existing file that is not replaced.
// flag has O_NONBLOCK for what may be a pipe: opening one with no reader
// then fails (ENXIO) instead of waiting for a reader.
func writeDirect(name string, fill func(io.Writer) error, flag int) error {
	f, err := os.OpenFile(name, os.O_WRONLY|flag, 0)
	if errors.Is(err, syscall.ENXIO) {
		return fmt.Errorf("%s: named pipe has no reader", name)
	}
	if err != nil {
		return err
	}
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// linkTarget follows name through symbolic links that end nowhere (a link
// to a file not yet written) to the path to create.
func linkTarget(name string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(name)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return name, nil
		}
		link, err := os.Readlink(name)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(name), link)
		}
		name = link
	}
	return "", &fs.PathError{Op: "write", Path: name, Err: syscall.ELOOP}
}

// replace writes fill's data to a temporary file beside name and renames
// it over name. The temporary file is removed on any failure, and by
// RemoveTemps. (Close before rename: Windows cannot rename an open file,
// and the data must be complete before the name appears.)
func replace(name string, o Options, perm fs.FileMode, fill func(io.Writer) error) (err error) {
	prefix := o.TempPrefix
	if prefix == "" {
		prefix = "." + filepath.Base(name) + ".rocmk-"
	}
	f, err := temps.create(filepath.Dir(name), prefix)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
		temps.done(tmp)
	}()
	err = fill(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && o.Sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && !o.MTime.IsZero() {
		err = os.Chtimes(tmp, o.MTime, o.MTime)
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	return err
}

// tempSet is the set of temporary files being written.
type tempSet struct {
	sync.Mutex
	names  map[string]bool
	closed bool
}

// temps holds the temporary files of this process's writes, for RemoveTemps.
var temps tempSet

// ErrInterrupted is the error of a Write that starts after RemoveTemps.
var ErrInterrupted = errors.New("interrupted")

// create makes a temporary file in dir whose name starts with prefix
// (".NAME.rocmk-123456" for Write: hidden, and named after the file it
// will become).
func (s *tempSet) create(dir, prefix string) (*os.File, error) {
	s.Lock()
	defer s.Unlock()
	if s.closed {
		return nil, ErrInterrupted
	}
	f, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return nil, err
	}
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[f.Name()] = true
	return f, nil
}

// done forgets a temporary file that was renamed or removed.
func (s *tempSet) done(tmp string) {
	s.Lock()
	delete(s.names, tmp)
	s.Unlock()
}

// removeAll removes every temporary file and directory still listed and
// refuses new ones.
func (s *tempSet) removeAll() {
	s.Lock()
	defer s.Unlock()
	s.closed = true
	for n := range s.names {
		os.RemoveAll(n)
	}
}

// RemoveTemps removes the temporary files of the writes in progress and
// the temporary directories of the work in progress (MkdirTemp), and makes
// later writes fail with ErrInterrupted. A process that exits on a signal
// without waiting for its writers calls it last, so that it leaves every
// output whole and no temporary file behind.
func RemoveTemps() { temps.removeAll() }

// MkdirTemp makes a temporary directory (os.MkdirTemp in the system's
// temporary directory) that RemoveTemps removes too, and returns a
// function that removes it when the work is done.
func MkdirTemp(pattern string) (dir string, remove func(), err error) {
	return temps.mkdirTemp(pattern)
}

func (s *tempSet) mkdirTemp(pattern string) (dir string, remove func(), err error) {
	s.Lock()
	defer s.Unlock()
	if s.closed {
		return "", nil, ErrInterrupted
	}
	if dir, err = os.MkdirTemp("", pattern); err != nil {
		return "", nil, err
	}
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[dir] = true
	return dir, func() {
		os.RemoveAll(dir)
		s.done(dir)
	}, nil
}
