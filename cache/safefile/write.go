package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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
func Write(name string, data []byte, o Options) error {
	if isDescriptor(name) {
		return writeDirect(name, data, os.O_APPEND|oNonblock)
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
		perm := o.Perm
		if perm == 0 {
			perm = 0o644
		}
		return replace(target, data, perm, o.Sync)
	case err != nil:
		return err
	case fi.IsDir():
		return &fs.PathError{Op: "write", Path: name, Err: syscall.EISDIR}
	case fi.Mode()&fs.ModeNamedPipe != 0:
		return writeDirect(name, data, oNonblock)
	case !fi.Mode().IsRegular():
		return writeDirect(name, data, 0)
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
	return replace(target, data, fi.Mode().Perm(), o.Sync)
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
func writeDirect(name string, data []byte, flag int) error {
	f, err := os.OpenFile(name, os.O_WRONLY|flag, 0)
	if errors.Is(err, syscall.ENXIO) {
		return fmt.Errorf("%s: named pipe has no reader", name)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
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

// replace writes data to a temporary file beside name and renames it over
// name. The temporary file is removed on any failure, and by RemoveTemps.
func replace(name string, data []byte, perm fs.FileMode, sync bool) (err error) {
	f, err := temps.create(name)
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
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
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

// create makes a temporary file beside name, ".NAME.rocmk-123456": hidden,
// and named after the file it will become.
func (s *tempSet) create(name string) (*os.File, error) {
	s.Lock()
	defer s.Unlock()
	if s.closed {
		return nil, ErrInterrupted
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".rocmk-*")
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

// removeAll removes every temporary file still listed and refuses new ones.
func (s *tempSet) removeAll() {
	s.Lock()
	defer s.Unlock()
	s.closed = true
	for n := range s.names {
		os.Remove(n)
	}
}

// RemoveTemps removes the temporary files of the writes in progress and
// makes later writes fail with ErrInterrupted. A process that exits on a
// signal without waiting for its writers calls it last, so that it leaves
// every output whole and no temporary file behind.
func RemoveTemps() { temps.removeAll() }
