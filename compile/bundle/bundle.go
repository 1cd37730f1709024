// Package bundle writes and reads clang offload bundles (.hipfb, formats.md
// 1.6): the fat binaries `rocmk build --bundle` writes, byte-identical to
// clang-offload-bundler's, which hipModuleLoadData accepts.
package bundle

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/rocmk/rocmk/inspect"
)

// Magic starts every uncompressed clang offload bundle.
const Magic = "__CLANG_OFFLOAD_BUNDLE__"

// HostID is the (empty) host entry clang-15's bundler writes.
const HostID = "host-x86_64-unknown-linux"

// bundleAlign is hipcc's --bundle-align: every payload starts on a 4096 boundary.
const bundleAlign = 4096

// Entry is one code object of a bundle.
type Entry struct {
	Target inspect.Target
	Data   []byte
}

// ID is an entry's ID: "hipv4-amdgcn-amd-amdhsa--<target ID>".
func ID(t inspect.Target) string { return "hipv4-" + inspect.TargetPrefix + t.String() }

// Write lays out an uncompressed clang offload bundle (formats.md
// 1.6) the way `clang-offload-bundler --type=o --bundle-align=4096` does:
// magic, entry count, then per entry offset/size/ID length/ID; an empty host
// entry first; payloads in entry order, each at a 4096-aligned offset. The
// result is what hipModuleLoadData accepts as a fat binary. Written in Go
// (rather than by running the bundler) because it is 40 lines and saves one
// process per source; a test checks it byte for byte against the bundler.
func Write(entries []Entry) []byte {
	ids := []string{HostID}
	payloads := [][]byte{nil}
	for _, e := range entries {
		ids = append(ids, ID(e.Target))
		payloads = append(payloads, e.Data)
	}
	hdr := len(Magic) + 8
	for _, id := range ids {
		hdr += 8 + 8 + 8 + len(id)
	}
	offsets := make([]uint64, len(ids))
	off := uint64(hdr)
	for i, p := range payloads {
		off = alignUp(off, bundleAlign)
		offsets[i] = off
		off += uint64(len(p))
	}
	var b bytes.Buffer
	b.Grow(int(off))
	b.WriteString(Magic)
	put := func(v uint64) { binary.Write(&b, binary.LittleEndian, v) }
	put(uint64(len(ids)))
	for i, id := range ids {
		put(offsets[i])
		put(uint64(len(payloads[i])))
		put(uint64(len(id)))
		b.WriteString(id)
	}
	for i, p := range payloads {
		if pad := int(offsets[i]) - b.Len(); pad > 0 {
			b.Write(make([]byte, pad))
		}
		b.Write(p)
	}
	return b.Bytes()
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) / a * a }

// ReadIDs returns the entry IDs of an uncompressed bundle, for tests
// and checks.
func ReadIDs(data []byte) ([]string, error) {
	if !bytes.HasPrefix(data, []byte(Magic)) {
		return nil, fmt.Errorf("not a clang offload bundle")
	}
	p := len(Magic)
	u64 := func() (uint64, error) {
		if p+8 > len(data) {
			return 0, fmt.Errorf("truncated bundle")
		}
		v := binary.LittleEndian.Uint64(data[p:])
		p += 8
		return v, nil
	}
	n, err := u64()
	if err != nil || n > 1<<16 {
		return nil, fmt.Errorf("bad bundle entry count")
	}
	var ids []string
	for i := uint64(0); i < n; i++ {
		_, _ = u64()
		_, _ = u64()
		l, err := u64()
		if err != nil || uint64(p)+l > uint64(len(data)) {
			return nil, fmt.Errorf("truncated bundle")
		}
		ids = append(ids, string(data[p:p+int(l)]))
		p += int(l)
	}
	return ids, nil
}
