package hipify

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// --in-place replaces each file by a new one (a temporary file renamed over
// it, so a crash never leaves half a source). A new file is a new inode,
// so two things the old one had must be dealt with here:
//   - its owner and group: the new file gets the old one's (chown), and a
//     file whose owner this process could not give is refused up front,
//     as a read-only file is;
//   - its other hard links: they would keep the CUDA source, silently.
//     Writing through the inode instead is not atomic, so such a file is
//     refused: the user decides what the other names should hold.

// owner is the owner and group a rewritten file must keep.
type owner struct {
	name     string
	uid, gid int
	ok       bool // the system has owners (not Windows)
}

// checkInPlace returns what the file at name (fi: its os.Stat) must keep,
// or why it cannot be rewritten in place.
func checkInPlace(name string, fi fs.FileInfo) (owner, error) {
	if fi == nil {
		return owner{}, nil // not a file (standard input): nothing to keep
	}
	st, ok := statOf(fi)
	if !ok {
		return owner{}, nil
	}
	if st.nlink > 1 {
		return owner{}, fmt.Errorf("%s: file has %d hard links, which rewriting it in place would break (the other names would keep the CUDA source); not modified",
			name, st.nlink)
	}
	o := owner{name: name, uid: st.uid, gid: st.gid, ok: true}
	dir := filepath.Dir(name)
	if p, err := filepath.EvalSymlinks(name); err == nil {
		dir = filepath.Dir(p) // where the new file is created: beside a link's target
	}
	if !o.settable(dir) {
		return o, o.refused()
	}
	return o, nil
}

// settable reports whether this process can give a new file in dir the
// owner and group: root can; another user only their own uid, with their
// group, a group they are in, or the one a set-group-ID dir gives.
func (o owner) settable(dir string) bool {
	euid := os.Geteuid()
	if euid == 0 {
		return true
	}
	if o.uid != euid {
		return false
	}
	if o.gid == os.Getegid() {
		return true
	}
	if groups, err := os.Getgroups(); err == nil && slices.Contains(groups, o.gid) {
		return true
	}
	if di, err := os.Stat(dir); err == nil && di.Mode()&fs.ModeSetgid != 0 {
		st, ok := statOf(di)
		return ok && st.gid == o.gid
	}
	return false
}

func (o owner) refused() error {
	return fmt.Errorf("%s: owned by uid %d, gid %d, which a rewritten file could not keep (rocmk runs as uid %d); not modified",
		o.name, o.uid, o.gid, os.Geteuid())
}

// fill returns a safefile.WriteFrom fill that writes data, then gives the
// new file the owner. safefile hands fill the temporary file it renames
// over the old one, so the file appears with its owner, never without.
// (A special file written directly keeps its own owner: not chowned.)
func (o owner) fill(data []byte) func(w io.Writer) error {
	return func(w io.Writer) error {
		if _, err := w.Write(data); err != nil {
			return err
		}
		if !o.ok {
			return nil
		}
		f, isFile := w.(*os.File)
		if !isFile {
			if o.uid == os.Geteuid() && o.gid == os.Getegid() {
				return nil // what a new file gets anyway
			}
			return o.refused()
		}
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		st, ok := statOf(fi)
		if !fi.Mode().IsRegular() || !ok || st.uid == o.uid && st.gid == o.gid {
			return nil
		}
		if err := f.Chown(o.uid, o.gid); err != nil {
			return fmt.Errorf("%w (%v)", o.refused(), err)
		}
		return nil
	}
}
