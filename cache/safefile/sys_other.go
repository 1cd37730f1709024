//go:build !unix

package safefile

const oNonblock = 0

// ID identifies a file by device and inode; this system gives neither.
type ID struct{ Dev, Ino uint64 }

// IDOf reports that this system gives no file IDs.
func IDOf(fi interface{ Sys() any }) (ID, bool) { return ID{}, false }
