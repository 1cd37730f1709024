//go:build unix

package hipify

import (
	"io/fs"
	"syscall"
)

type fileStat struct {
	uid, gid int
	nlink    uint64
}

// statOf returns fi's owner, group and link count.
func statOf(fi fs.FileInfo) (fileStat, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}, false
	}
	return fileStat{uid: int(st.Uid), gid: int(st.Gid), nlink: uint64(st.Nlink)}, true
}
