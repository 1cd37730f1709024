//go:build unix

package safefile

import "syscall"

// oNonblock makes opening a named pipe return at once instead of waiting
// for the other end (a reader finds no data, a writer no reader); it
// changes nothing for regular files.
const oNonblock = syscall.O_NONBLOCK

// ID identifies a file by device and inode: two names with one ID are one
// file (hard links, or a symbolic link and its target).
type ID struct{ Dev, Ino uint64 }

// IDOf returns fi's ID, if the system gives one.
func IDOf(fi interface{ Sys() any }) (ID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ID{}, false
	}
	return ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, true
}
