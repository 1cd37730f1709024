//go:build !linux && !darwin

package compile

import "io/fs"

// sysStat: this system gives no change time or file ID.
func sysStat(fi fs.FileInfo) (ctime int64, dev, ino uint64) {
	return fi.ModTime().UnixNano(), 0, 0
}

// readable is true: clang's open is the test here.
func readable(string) bool { return true }

// recordsSupported: without change times and file IDs a deps entry's
// records could not be checked, so builds on this system compile every
// job (cache hits need Linux or macOS).
const recordsSupported = false
