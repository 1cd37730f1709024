package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// WalkedFile is the one rule for a file of interest (a source, by its
// extension) met in a directory walk (filepath.WalkDir), for hipify's
// trees, build's kernel directories and the translated trees alike:
//
//   - a regular file is read (true);
//   - a symbolic link is followed: to a regular file it is read as one, to a
//     directory it is not a file (false; walks do not follow directory links);
//   - a link that leads nowhere, or to a named pipe, device or socket, and a
//     named pipe, device or socket in the tree, are errors naming the path
//     (and the link's target): a source that silently drops out of a build
//     is worse than an error.
func WalkedFile(path string, d fs.DirEntry) (bool, error) {
	switch {
	case d.Type().IsRegular():
		return true, nil
	case d.IsDir():
		return false, nil
	case d.Type()&fs.ModeSymlink == 0:
		return false, &NotRegularError{Name: path, Mode: d.Type()}
	}
	target, _ := os.Readlink(path)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("%s: a symbolic link to %s, which does not exist", path, target)
	case err != nil:
		return false, err
	case fi.Mode().IsRegular():
		return true, nil
	case fi.IsDir():
		return false, nil
	}
	return false, fmt.Errorf("%s: a symbolic link to %s, which is not a regular file (%s)", path, target, kind(fi.Mode()))
}
