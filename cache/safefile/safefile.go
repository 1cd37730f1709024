// Package safefile reads and writes the files rocmk's users name, and the
// files of its cache, so that no input can hang rocmk or exhaust its memory
// and no output is ever seen half-written or replaces something that is not
// a plain file.
//
// Reads (Read, Open, ReadAll) accept regular files only, opened with
// O_NONBLOCK so that a named pipe cannot block the open, and stop at a size
// limit that the caller chooses. Write replaces a regular file atomically (a
// temporary file in the same directory, renamed over it), writes straight
// into a device, a pipe or /dev/fd/N, writes the target of a symbolic link
// and keeps the link, and refuses a read-only file.
//
// The name says why a caller picks it over os.ReadFile and os.WriteFile. It
// lives under cache/ only because the module's top level is fixed; it
// imports nothing but the standard library, so every package can use it.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by the error of a read that met something other
// than a regular file (a named pipe, a device, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error of a read over its size limit.
var ErrTooLarge = errors.New("file too large")

// NotRegularError is the error of a read of a file that is not regular.
type NotRegularError struct {
	Name string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s)", e.Name, kind(e.Mode))
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// kind names a file type for people.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.String()
}

// TooLargeError is the error of a read over its limit. Size is the file's
// size, or -1 for a stream that went past Max.
type TooLargeError struct {
	Name      string
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s: more than %d bytes, the limit", e.Name, e.Max)
	}
	return fmt.Sprintf("%s: %d bytes, over the limit of %d", e.Name, e.Size, e.Max)
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Open opens name for reading and checks that it is a regular file. The
// open never blocks: a named pipe is refused, not waited on.
func Open(name string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Name: name, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// Read reads the regular file name, of at most limit bytes.
func Read(name string, limit int64) ([]byte, error) {
	f, fi, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &TooLargeError{Name: name, Size: fi.Size(), Max: limit}
	}
	return readAll(name, f, fi.Size(), limit)
}

// ReadAll reads r (standard input, a pipe) to its end, at most limit
// bytes; name is used in errors.
func ReadAll(name string, r io.Reader, limit int64) ([]byte, error) {
	return readAll(name, r, 512, limit)
}

// readAll reads r to EOF into a buffer sized for hint bytes (one more, to
// see the end without growing), failing past limit bytes: a file may grow
// after it was measured.
func readAll(name string, r io.Reader, hint, limit int64) ([]byte, error) {
	b := make([]byte, 0, min(hint, limit)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, &TooLargeError{Name: name, Size: -1, Max: limit}
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
	}
}
