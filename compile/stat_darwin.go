package compile

import (
	"io/fs"
	"syscall"
)

// sysStat is the change time and file ID stat gave for fi.
func sysStat(fi fs.FileInfo) (ctime int64, dev, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fi.ModTime().UnixNano(), 0, 0
	}
	return st.Ctimespec.Nano(), uint64(st.Dev), st.Ino
}

// readable reports whether the compiler could open p for reading.
func readable(p string) bool { return syscall.Access(p, 4 /* R_OK */) == nil }

// recordsSupported: the include records of a deps entry need change times
// and file IDs, which this system gives.
const recordsSupported = true
