package outcmp

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// isBinary: a NUL byte or bytes that are not UTF-8 make a file binary (an
// image, a raw array); binary files are compared byte for byte.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

// firstByteDiff is the offset of the first byte that differs, -1 if none.
func firstByteDiff(a, b []byte) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func byteDiffDetail(a, b []byte, i int) string {
	if i >= len(a) || i >= len(b) {
		return fmt.Sprintf("binary files differ in size (%d vs %d bytes)", len(a), len(b))
	}
	return fmt.Sprintf("binary files differ at byte %d (0x%02x vs 0x%02x)", i, a[i], b[i])
}
