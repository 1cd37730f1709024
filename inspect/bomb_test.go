package inspect

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Decompression and extraction bombs, generated here and kept (small) in
// testdata/inspect/bombs for the command tests and for measuring memory
// (docs/inspect.md). After changing a generator:
//
//	go test ./inspect -run TestBombFiles -update-bombs
var updateBombs = flag.Bool("update-bombs", false, "rewrite testdata/inspect/bombs")

var bombDir = filepath.Join("..", "testdata", "inspect", "bombs")

const gib = 1 << 30

// bombFiles are the generated inputs, by file name.
func bombFiles(t testing.TB) map[string][]byte {
	zeros := ccob(3, 1, gib, zstdFrame(nil, gib, 17))
	var dupes [][]byte
	for _, name := range []string{"co/vadd.gfx90a.co", "co/vadd.gfx906.co", "co/vadd.gfx1030.co"} {
		b, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			t.Fatal(err)
		}
		dupes = append(dupes, b)
	}
	// A bundle header whose one entry spans 1 GiB of zeros.
	head := bundleHeader(1, func(int) (int64, int64, string) { return 0, gib, "hipv4-amdgcn-amd-amdhsa--gfx90a" })
	bundle1g := ccob(3, 1, gib, zstdFrame(head, gib, 17))
	var fatbin [][]byte
	for range 6 {
		fatbin = append(fatbin, bundle1g)
	}
	return map[string][]byte{
		// 33 KB of zstd that decompress to 1 GiB of zeros (issue 11's bomb).
		"zeros-1g.ccob": zeros,
		// 1 GiB that starts like a bundle: only a budget stops it.
		"bundle-1g.ccob": bundle1g,
		// Six of those in the .hip_fatbin of a host object (225 KB).
		"host-6x1g.o": hostObject(alignedFatbin(fatbin)),
		// Says 64 KiB, decompresses to 64 MiB.
		"overclaim.ccob": ccob(3, 1, 64<<10, zstdFrame(head, 64<<20, 15)),
		// 3,791 entries, each spanning the whole bundle (104 KB).
		"extract-overlap.hipfb": overlapBundle(3791),
		// Three code objects under one entry ID.
		"extract-dupes.hipfb": bundle("hipv4-amdgcn-amd-amdhsa--gfx90a", dupes...),
	}
}

// TestBombFiles checks that testdata/inspect/bombs holds what the generators
// make, and that the files are small.
func TestBombFiles(t *testing.T) {
	for name, want := range bombFiles(t) {
		path := filepath.Join(bombDir, name)
		if *updateBombs {
			if err := os.MkdirAll(bombDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./inspect -run TestBombFiles -update-bombs)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its generator (go test ./inspect -run TestBombFiles -update-bombs)", path)
		}
		if len(got) > 256<<10 {
			t.Errorf("%s: %d bytes", name, len(got))
		}
	}
}

// allocated returns the bytes fn allocates on the Go heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Zeros are refused after their first bytes, not after 1 GiB each.
func TestZeroBombFailsFast(t *testing.T) {
	files := bombFiles(t)
	var err error
	n := allocated(func() { _, err = Parse("zeros-1g.ccob", files["zeros-1g.ccob"]) })
	if err == nil || !strings.Contains(err.Error(), "decompressed data is not an offload bundle") {
		t.Error(err)
	}
	if n > 16<<20 {
		t.Errorf("%d bytes allocated", n)
	}
	// zlib too (1032:1 at most, so a smaller one).
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	if _, err := io.CopyN(zw, zeroReader{}, 8<<20); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	n = allocated(func() { _, err = Parse("zlib", ccob(2, 0, 8<<20, z.Bytes())) })
	if err == nil || !strings.Contains(err.Error(), "not an offload bundle") || n > 2<<20 {
		t.Errorf("zlib: %v, %d bytes allocated", err, n)
	}
}

// A stream longer than its header says stops one byte past the claim.
func TestOverclaimStops(t *testing.T) {
	data := bombFiles(t)["overclaim.ccob"]
	var err error
	n := allocated(func() { _, err = Parse("overclaim.ccob", data) })
	if err == nil || !strings.Contains(err.Error(), "header says 65536, data decompresses to more than that") {
		t.Errorf("%v", err)
	}
	if n > 8<<20 {
		t.Errorf("%d bytes allocated for a 64 KiB claim", n)
	}
}

// One budget serves every bundle of every file parsed with it; a claim that
// does not fit is refused before anything is decompressed.
func TestDecompressBudget(t *testing.T) {
	small := ccob(3, 1, 1<<20, zstdFrame(bundleHeader(1, func(int) (int64, int64, string) {
		return 0, 1 << 20, "hipv4-amdgcn-amd-amdhsa--gfx90a"
	}), 1<<20, 17))
	host := hostObject(alignedFatbin([][]byte{small, small, small}))
	b := NewBudget(5 << 20)
	f, err := ParseWith("host.o", host, b) // 3 MiB of 5
	var hm *HashMismatchError
	if !errors.As(err, &hm) || len(f.Bundles) != 3 {
		t.Fatalf("first file: %v", err) // the generated hash is not the MD5
	}
	n := allocated(func() { _, err = ParseWith("host2.o", host, b) }) // 2 MiB fit, the third does not
	var le *DecompressLimitError
	if !errors.As(err, &le) || le.Left != 0 || le.Limit != 5<<20 || le.Size != 1<<20 {
		t.Fatalf("second file: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "host2.o: section .hip_fatbin: compressed bundle at offset 0x") ||
		!strings.Contains(err.Error(), "would pass the decompression limit of 5242880 bytes") {
		t.Error(err)
	}
	if n > 3<<20 {
		t.Errorf("%d bytes allocated for 2 MiB", n)
	}
	// A claim over the budget costs nothing.
	n = allocated(func() { _, err = ParseWith("huge", ccob(3, 1, 1<<40, zstdFrame(nil, 1<<20, 17)), NewBudget(gib)) })
	if !errors.As(err, &le) || n > 1<<20 {
		t.Errorf("%v, %d bytes", err, n)
	}
}

func TestExtractDuplicateIDs(t *testing.T) {
	f, err := Parse("dupes.hipfb", bombFiles(t)["extract-dupes.hipfb"])
	if err != nil {
		t.Fatal(err)
	}
	x := &Extractor{Dir: t.TempDir(), MaxRatio: DefaultMaxExtractRatio}
	ex, err := x.Extract(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Paths) != 3 || len(ex.Renamed) != 2 {
		t.Fatalf("%v %v", ex.Paths, ex.Renamed)
	}
	seen := map[string]bool{}
	for _, p := range ex.Paths {
		g, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		seen[g.Objects[0].Target.String()] = true
	}
	if len(seen) != 3 {
		t.Errorf("targets read back: %v", seen)
	}
	// Another file of the same base name does not overwrite the first.
	ex2, err := x.Extract(f)
	if err != nil || len(ex2.Paths) != 3 || len(ex2.Renamed) != 3 || ex2.Paths[0] == ex.Paths[0] {
		t.Errorf("second file: %v %v %v", ex2.Paths, ex2.Renamed, err)
	}
}

func TestExtractRatio(t *testing.T) {
	data := bombFiles(t)["extract-overlap.hipfb"]
	f, err := Parse("overlap.hipfb", data)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ex, err := (&Extractor{Dir: dir, MaxRatio: 2}).Extract(f)
	var le *ExtractLimitError
	if !errors.As(err, &le) || len(ex.Paths) != 2 || le.Input != int64(len(data)) {
		t.Fatalf("%v: %d files", err, len(ex.Paths))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d files written", len(entries))
	}
	// Well-formed files fit in 1x: entries do not overlap.
	for _, name := range []string{"host/app2tu", "bundle/reduce.multi.ccob-v1-zlib.hipfb", "host/vadd.rdc.o", "co/vadd.gfx90a.co", "newllvm/raw.host-ccob.o"} {
		f := openCorpus(t, name)
		if _, err := (&Extractor{Dir: t.TempDir(), MaxRatio: 1}).Extract(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// zstdFrame is a zstd frame holding prefix, then zeros up to size bytes,
// written as RLE blocks (4 bytes per block), with a window of 1<<windowLog.
func zstdFrame(prefix []byte, size int64, windowLog int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xc0, byte(windowLog-10) << 3} // 8-byte content size, window descriptor
	b = binary.LittleEndian.AppendUint64(b, uint64(size))
	block := int64(min(1<<windowLog, 128<<10))
	blockHeader := func(last bool, typ, n int64) {
		h := typ<<1 | n<<3
		if last {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
	}
	for len(prefix) > 0 { // raw blocks
		n := min(int64(len(prefix)), block)
		blockHeader(n == size, 0, n)
		b = append(b, prefix[:n]...)
		prefix, size = prefix[n:], size-n
	}
	for size > 0 {
		n := min(size, block)
		blockHeader(n == size, 1, n)
		b = append(b, 0)
		size -= n
	}
	return b
}

// ccob wraps compressed data in a CCOB header (version 2 or 3; method 0
// zlib, 1 zstd). The hash field is left zero: the bombs are not meant to pass.
func ccob(version, method int, usize int64, comp []byte) []byte {
	le := binary.LittleEndian
	b := []byte("CCOB")
	b = le.AppendUint16(b, uint16(version))
	b = le.AppendUint16(b, uint16(method))
	if version == 2 {
		b = le.AppendUint32(b, uint32(24+len(comp)))
		b = le.AppendUint32(b, uint32(usize))
	} else {
		b = le.AppendUint64(b, uint64(32+len(comp)))
		b = le.AppendUint64(b, uint64(usize))
	}
	b = le.AppendUint64(b, 0)
	return append(b, comp...)
}

// bundleHeader is an offload bundle's magic and entry table.
func bundleHeader(n int, entry func(i int) (off, size int64, id string)) []byte {
	le := binary.LittleEndian
	b := le.AppendUint64([]byte(bundleMagic), uint64(n))
	for i := range n {
		off, size, id := entry(i)
		b = le.AppendUint64(b, uint64(off))
		b = le.AppendUint64(b, uint64(size))
		b = le.AppendUint64(b, uint64(len(id)))
		b = append(b, id...)
	}
	return b
}

// bundle is an offload bundle of payloads, all under one entry ID.
func bundle(id string, payloads ...[]byte) []byte {
	headLen := len(bundleHeader(len(payloads), func(int) (int64, int64, string) { return 0, 0, id }))
	off := int64(headLen)
	b := bundleHeader(len(payloads), func(i int) (int64, int64, string) {
		o := off
		off += int64(len(payloads[i]))
		return o, int64(len(payloads[i])), id
	})
	for _, p := range payloads {
		b = append(b, p...)
	}
	return b
}

// overlapBundle has n entries ("e0", "e1"...), each spanning the whole bundle.
func overlapBundle(n int) []byte {
	size := int64(len(bundleHeader(n, func(i int) (int64, int64, string) { return 0, 0, "e" + strconv.Itoa(i) })))
	return bundleHeader(n, func(i int) (int64, int64, string) { return 0, size, "e" + strconv.Itoa(i) })
}

// alignedFatbin lays bundles out as .hip_fatbin does: each at a 4096-aligned offset.
func alignedFatbin(bundles [][]byte) []byte {
	var b []byte
	for _, x := range bundles {
		b = append(b, x...)
		b = append(b, make([]byte, (4096-len(b)%4096)%4096)...)
	}
	return b
}

// hostObject is a minimal x86-64 relocatable ELF whose .hip_fatbin holds fatbin.
func hostObject(fatbin []byte) []byte {
	le := binary.LittleEndian
	shstrtab := []byte("\x00.hip_fatbin\x00.shstrtab\x00")
	const fatOff = 4096
	strOff := fatOff + len(fatbin)
	shOff := (strOff + len(shstrtab) + 7) &^ 7
	b := make([]byte, shOff, shOff+3*64)
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[16:], 1)  // ET_REL
	le.PutUint16(b[18:], 62) // EM_X86_64
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[40:], uint64(shOff))
	le.PutUint16(b[52:], 64) // e_ehsize
	le.PutUint16(b[58:], 64) // e_shentsize
	le.PutUint16(b[60:], 3)  // e_shnum
	le.PutUint16(b[62:], 2)  // e_shstrndx
	copy(b[fatOff:], fatbin)
	copy(b[strOff:], shstrtab)
	section := func(name, typ uint32, flags, off, size, align uint64) {
		s := make([]byte, 64)
		le.PutUint32(s[0:], name)
		le.PutUint32(s[4:], typ)
		le.PutUint64(s[8:], flags)
		le.PutUint64(s[24:], off)
		le.PutUint64(s[32:], size)
		le.PutUint64(s[48:], align)
		b = append(b, s...)
	}
	section(0, 0, 0, 0, 0, 0)
	section(1, 1, 2, fatOff, uint64(len(fatbin)), 4096) // .hip_fatbin: PROGBITS, ALLOC
	section(13, 3, 0, uint64(strOff), uint64(len(shstrtab)), 1)
	return b
}
