package inspect

import (
	"bytes"
	"crypto/md5"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rocmk/rocmk/cache/safefile"
)

// File is everything rocmk found in one input file.
type File struct {
	Name string `json:"file"`
	// Kind: "code-object", "bundle", "compressed-bundle", "host-executable",
	// "host-object", "rdc-object".
	Kind    string        `json:"kind"`
	Objects []*CodeObject `json:"code_objects"`
	// Bundles lists the bundles read (one per .hip_fatbin slot, or the file itself).
	Bundles []Bundle `json:"bundles,omitempty"`
	// Images lists device images that are not code objects (bitcode).
	Images []Image  `json:"images,omitempty"`
	Notes  []string `json:"notes,omitempty"`

	budget *Budget
	// size and inflated are the bytes read and the bytes decompressed, the
	// input size Extract measures what it writes against.
	size, inflated int64
}

// Bundle describes one clang offload bundle.
type Bundle struct {
	Container  string        `json:"container,omitempty"` // ".hip_fatbin[0]" in a host file
	Offset     int64         `json:"offset"`
	Compressed *Compression  `json:"compressed,omitempty"`
	Entries    []BundleEntry `json:"entries"`
}

// BundleEntry is one entry of a bundle's table.
type BundleEntry struct {
	ID     string `json:"id"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
}

// Compression describes a CCOB header.
type Compression struct {
	Version          int    `json:"version"`
	Method           string `json:"method"` // "zlib" or "zstd"
	TotalSize        int64  `json:"total_size,omitempty"`
	UncompressedSize int64  `json:"uncompressed_size"`
	Hash             string `json:"hash"`
}

// Image is a device image that is not a finished code object.
type Image struct {
	Where  string `json:"where"` // section or bundle entry
	Kind   string `json:"kind"`  // "llvm-bitcode", "elf", ...
	Arch   string `json:"arch,omitempty"`
	Triple string `json:"triple,omitempty"`
	Size   int64  `json:"size"`
	Data   []byte `json:"-"`
}

// HashMismatchError reports a compressed bundle whose MD5 does not match.
type HashMismatchError struct {
	Offset     int64
	Want, Have uint64
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("compressed bundle at offset 0x%x: hash mismatch: header says 0x%016x, MD5 of the decompressed bundle gives 0x%016x", e.Offset, e.Want, e.Have)
}

const (
	bundleMagic  = "__CLANG_OFFLOAD_BUNDLE__"
	ccobMagic    = "CCOB"
	offloadMagic = "\x10\xff\x10\xad"
	fatbinSegMag = 0x48495046
)

// ErrNoDeviceCode is returned for a host ELF without any offload section.
var ErrNoDeviceCode = errors.New("no .hip_fatbin, .llvm.offloading or offload bundle sections: no device code")

// NoteBitcode is the note for inputs that hold device bitcode only.
const NoteBitcode = "device bitcode, link first"

// MaxFileSize is the size limit of Open and OpenWith, and the default of
// `rocmk inspect` (ROCMK_MAX_INPUT replaces it there): files are read whole
// into memory. It is 4 GiB, not the 1 GiB of the decompression budget,
// because a host library with device code for many targets (a framework
// built for every GPU) can pass 1 GiB, and reading a file costs its size,
// no more. README ("Reliability") and docs/inspect.md ("Limits") say so.
const MaxFileSize = 4 << 30

// Open reads path and parses it with a budget of its own
// (DefaultMaxDecompress).
func Open(path string) (*File, error) { return OpenWith(path, nil) }

// OpenWith reads path, a regular file of at most MaxFileSize bytes, and
// parses it; b (nil: a budget of its own) bounds what its compressed
// bundles may decompress to. A named pipe or a device is refused
// (safefile.ErrNotRegular), never waited on or read without end.
func OpenWith(path string, b *Budget) (*File, error) {
	data, err := safefile.Read(path, MaxFileSize)
	if err != nil {
		return nil, err
	}
	return ParseWith(path, data, b)
}

// Parse recognises the container and reads every code object in it, with a
// decompression budget of its own (DefaultMaxDecompress). It never panics. For
// a compressed bundle whose hash does not match, it returns the file as read
// and a *HashMismatchError.
func Parse(name string, data []byte) (*File, error) { return ParseWith(name, data, nil) }

// ParseWith is Parse drawing decompressed bytes from b, which the files of
// one command share (nil: a budget of DefaultMaxDecompress of its own).
func ParseWith(name string, data []byte, b *Budget) (f *File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("%s: malformed input (%v)", name, r)
		}
	}()
	f = &File{Name: name, budget: b, size: int64(len(data))}
	err = f.parse(data)
	if err != nil {
		var hm *HashMismatchError
		if !errors.As(err, &hm) {
			f = nil
		}
		return f, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

func (f *File) parse(data []byte) error {
	switch {
	case bytes.HasPrefix(data, []byte(elf.ELFMAG)):
		if len(data) >= 20 && binary.LittleEndian.Uint16(data[18:]) == emAMDGPU {
			f.Kind = "code-object"
			co, err := readCodeObject(data)
			if err != nil {
				return err
			}
			if co.Version == 2 {
				f.Notes = append(f.Notes, "code object v2 (legacy): metadata read from the YAML note, no kernel descriptors")
			}
			f.Objects = append(f.Objects, co)
			return nil
		}
		return f.parseHost(data)
	case bytes.HasPrefix(data, []byte(bundleMagic)):
		f.Kind = "bundle"
		_, err := f.parseBundle(data, "", 0)
		return err
	case bytes.HasPrefix(data, []byte(ccobMagic)):
		f.Kind = "compressed-bundle"
		_, err := f.parseCCOB(data, "", 0)
		return err
	case bytes.HasPrefix(data, []byte("BC\xc0\xde")), bytes.HasPrefix(data, []byte{0xde, 0xc0, 0x17, 0x0b}):
		f.Kind = "bitcode"
		f.Images = append(f.Images, Image{Where: "file", Kind: "llvm-bitcode", Size: int64(len(data))})
		f.Notes = append(f.Notes, NoteBitcode)
		return nil
	case bytes.HasPrefix(data, []byte(offloadMagic)):
		f.Kind = "offload-binary"
		return f.parseOffloading(data, "file", 0)
	}
	if len(data) == 0 {
		return perr(-1, "file", "empty")
	}
	return perr(0, "magic", "not an ELF file, offload bundle or compressed bundle (starts with % x)", data[:min(len(data), 8)])
}

// parseBundle reads an uncompressed bundle at data[0:] and returns the number
// of bytes it spans. base is its offset in the file, for messages.
func (f *File) parseBundle(data []byte, container string, base int64) (int64, error) {
	le := binary.LittleEndian
	if len(data) < 32 {
		return 0, perr(base, "bundle header", "%d bytes, too short", len(data))
	}
	n := le.Uint64(data[24:])
	if n > uint64(len(data))/24 {
		return 0, perr(base+24, "bundle entry count", "%d entries cannot fit in %d bytes", n, len(data))
	}
	b := Bundle{Container: container, Offset: base}
	pos := 32
	end := int64(pos)
	for i := uint64(0); i < n; i++ {
		if pos+24 > len(data) {
			return 0, perr(base+int64(pos), fmt.Sprintf("bundle entry %d", i), "table runs past the end (%d bytes)", len(data))
		}
		off, size, idLen := le.Uint64(data[pos:]), le.Uint64(data[pos+8:]), le.Uint64(data[pos+16:])
		pos += 24
		if idLen > uint64(len(data)-pos) {
			return 0, perr(base+int64(pos-8), fmt.Sprintf("bundle entry %d ID length", i), "%d runs past the end of the bundle (%d bytes)", idLen, len(data))
		}
		id := string(data[pos : pos+int(idLen)])
		pos += int(idLen)
		if off > uint64(len(data)) || size > uint64(len(data))-off {
			return 0, perr(base+int64(pos-int(idLen)-24), fmt.Sprintf("bundle entry %q", id), "offset 0x%x + size %d runs past the end of the bundle (%d bytes)", off, size, len(data))
		}
		b.Entries = append(b.Entries, BundleEntry{ID: id, Offset: int64(off), Size: int64(size)})
		if e := int64(off + size); e > end {
			end = e
		}
		if int64(pos) > end {
			end = int64(pos)
		}
	}
	f.Bundles = append(f.Bundles, b)
	// Stable output: entries in table order would differ between tools, sort by ID.
	entries := append([]BundleEntry(nil), b.Entries...)
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].ID < entries[j].ID })
	for _, e := range entries {
		payload := data[e.Offset : e.Offset+e.Size]
		if err := f.addPayload(payload, container, e.ID, base+e.Offset); err != nil {
			return 0, err
		}
	}
	return end, nil
}

// addPayload classifies one bundle entry's bytes.
func (f *File) addPayload(payload []byte, container, id string, off int64) error {
	where := id
	if container != "" {
		where = container + "#" + id
	}
	switch {
	case len(payload) == 0:
		return nil
	case strings.HasPrefix(id, "host-"):
		return nil
	case bytes.HasPrefix(payload, []byte(elf.ELFMAG)) && len(payload) >= 20 && binary.LittleEndian.Uint16(payload[18:]) == emAMDGPU:
		co, err := readCodeObject(payload)
		if err != nil {
			return fmt.Errorf("bundle entry %s at offset 0x%x: %w", where, off, err)
		}
		co.Container, co.Entry, co.Offset = container, id, off
		f.Objects = append(f.Objects, co)
	case bytes.HasPrefix(payload, []byte("BC\xc0\xde")), bytes.HasPrefix(payload, []byte{0xde, 0xc0, 0x17, 0x0b}):
		f.Images = append(f.Images, Image{Where: where, Kind: "llvm-bitcode", Arch: archOfID(id), Size: int64(len(payload)), Data: payload})
		f.addNote(NoteBitcode)
	default:
		f.Images = append(f.Images, Image{Where: where, Kind: "unknown", Arch: archOfID(id), Size: int64(len(payload)), Data: payload})
	}
	return nil
}

func (f *File) addNote(s string) {
	for _, n := range f.Notes {
		if n == s {
			return
		}
	}
	f.Notes = append(f.Notes, s)
}

// archOfID extracts the target ID from a bundle entry ID:
// "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+" -> "gfx90a:xnack+",
// "hip-amdgcn-amd-amdhsa-gfx90a" -> "gfx90a".
func archOfID(id string) string {
	parts := strings.SplitN(id, "-", 6)
	if len(parts) < 5 {
		return ""
	}
	if len(parts) == 6 && parts[4] == "" {
		return parts[5]
	}
	return strings.Join(parts[4:], "-")
}

// parseCCOB reads a compressed bundle and returns the bytes it spans.
func (f *File) parseCCOB(data []byte, container string, base int64) (int64, error) {
	le := binary.LittleEndian
	if len(data) < 8 {
		return 0, perr(base, "CCOB header", "%d bytes, too short", len(data))
	}
	c := &Compression{Version: int(le.Uint16(data[4:]))}
	method := le.Uint16(data[6:])
	var hdr int
	var total, usize uint64
	switch c.Version {
	case 1:
		hdr = 20
		if len(data) < hdr {
			return 0, perr(base, "CCOB v1 header", "%d bytes, want 20", len(data))
		}
		usize = uint64(le.Uint32(data[8:]))
		total = uint64(len(data))
	case 2:
		hdr = 24
		if len(data) < hdr {
			return 0, perr(base, "CCOB v2 header", "%d bytes, want 24", len(data))
		}
		total, usize = uint64(le.Uint32(data[8:])), uint64(le.Uint32(data[12:]))
	case 3:
		hdr = 32
		if len(data) < hdr {
			return 0, perr(base, "CCOB v3 header", "%d bytes, want 32", len(data))
		}
		total, usize = le.Uint64(data[8:]), le.Uint64(data[16:])
	default:
		return 0, perr(base+4, "CCOB version", "%d is not 1, 2 or 3", c.Version)
	}
	hash := le.Uint64(data[hdr-8:])
	c.Hash = fmt.Sprintf("0x%016x", hash)
	if c.Version > 1 {
		c.TotalSize = int64(total)
	}
	c.UncompressedSize = int64(usize)
	if total < uint64(hdr) || total > uint64(len(data)) {
		return 0, perr(base+8, "CCOB total size", "%d, but %d bytes are there (header %d)", total, len(data), hdr)
	}
	switch method {
	case 0:
		c.Method = "zlib"
	case 1:
		c.Method = "zstd"
	default:
		return 0, perr(base+6, "CCOB method", "%d is neither zlib (0) nor zstd (1)", method)
	}
	raw, err := inflate(f.budgetOrDefault(), method, data[hdr:total], usize, base, int64(hdr))
	if err != nil {
		return 0, err
	}
	f.inflated += int64(len(raw))
	sum := md5.Sum(raw)
	have := le.Uint64(sum[:8])
	// The payload offsets are relative to the decompressed bundle.
	nb := len(f.Bundles)
	if _, err := f.parseBundle(raw, container, 0); err != nil {
		return 0, fmt.Errorf("compressed bundle at offset 0x%x: decompressed %w", base, err)
	}
	f.Bundles[nb].Offset = base
	f.Bundles[nb].Compressed = c
	if have != hash {
		return int64(total), &HashMismatchError{Offset: base, Want: hash, Have: have}
	}
	return int64(total), nil
}

// parseHost reads a host ELF (executable or object) for embedded device code.
func (f *File) parseHost(data []byte) error {
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return perr(0, "ELF", "%v", err)
	}
	if ef.Type == elf.ET_REL {
		f.Kind = "host-object"
	} else {
		f.Kind = "host-executable"
	}
	var hashErr error
	found := false
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL {
			continue
		}
		if s.Offset > uint64(len(data)) || s.Size > uint64(len(data))-s.Offset {
			if s.Name == ".hip_fatbin" || s.Name == ".hipFatBinSegment" || s.Name == ".llvm.offloading" || strings.HasPrefix(s.Name, bundleMagic) {
				return perr(int64(s.Offset), "section "+s.Name, "%d bytes at 0x%x run past the end of the file (%d bytes)", s.Size, s.Offset, len(data))
			}
			continue
		}
		sd := data[s.Offset : s.Offset+s.Size]
		switch {
		case s.Name == ".hip_fatbin":
			found = true
			if err := f.walkFatbin(sd, int64(s.Offset)); err != nil {
				var hm *HashMismatchError
				if !errors.As(err, &hm) {
					return fmt.Errorf("section .hip_fatbin: %w", err)
				}
				hashErr = err
			}
		case s.Name == ".hipFatBinSegment":
			found = true
			if len(sd) < 8 || binary.LittleEndian.Uint32(sd) != fatbinSegMag {
				f.addNote(".hipFatBinSegment without the HIPF magic")
			}
		case s.Name == ".llvm.offloading":
			found = true
			if f.Kind == "host-object" {
				f.Kind = "rdc-object"
			}
			if err := f.parseOffloading(sd, ".llvm.offloading", int64(s.Offset)); err != nil {
				return fmt.Errorf("section .llvm.offloading: %w", err)
			}
		case strings.HasPrefix(s.Name, bundleMagic):
			found = true
			f.Kind = "rdc-object"
			id := strings.TrimPrefix(s.Name, bundleMagic)
			f.Bundles = append(f.Bundles, Bundle{Container: s.Name, Offset: int64(s.Offset), Entries: []BundleEntry{{ID: id, Offset: int64(s.Offset), Size: int64(s.Size)}}})
			if err := f.addPayload(sd, "", id, int64(s.Offset)); err != nil {
				return err
			}
		}
	}
	if !found {
		return fmt.Errorf("host ELF: %w", ErrNoDeviceCode)
	}
	return hashErr
}

// walkFatbin reads the bundles of a .hip_fatbin section, each at a
// 4096-aligned offset, until the rest is zero padding.
func (f *File) walkFatbin(sd []byte, base int64) error {
	var hashErr error
	for i, pos := 0, int64(0); pos < int64(len(sd)); i++ {
		rest := sd[pos:]
		if allZero(rest) {
			break
		}
		container := fmt.Sprintf(".hip_fatbin[%d]", i)
		var n int64
		var err error
		switch {
		case bytes.HasPrefix(rest, []byte(bundleMagic)):
			n, err = f.parseBundle(rest, container, base+pos)
		case bytes.HasPrefix(rest, []byte(ccobMagic)):
			n, err = f.parseCCOB(rest, container, base+pos)
			var hm *HashMismatchError
			if errors.As(err, &hm) {
				hashErr, err = err, nil
			}
		default:
			return perr(base+pos, container, "neither an offload bundle nor a compressed bundle (starts with % x)", rest[:min(8, len(rest))])
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			n = 1
		}
		pos += (n + 4095) &^ 4095
	}
	return hashErr
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// parseOffloading reads LLVM OffloadBinary blobs (.llvm.offloading).
func (f *File) parseOffloading(sd []byte, where string, base int64) error {
	le := binary.LittleEndian
	for pos := 0; pos < len(sd); {
		b := sd[pos:]
		if allZero(b) {
			break
		}
		if len(b) < 32 || !bytes.HasPrefix(b, []byte(offloadMagic)) {
			return perr(base+int64(pos), "offload binary", "bad magic or header")
		}
		size := le.Uint64(b[8:])
		entOff, entSize := le.Uint64(b[16:]), le.Uint64(b[24:])
		if size < 32 || size > uint64(len(b)) {
			return perr(base+int64(pos)+8, "offload binary size", "%d does not fit in %d bytes", size, len(b))
		}
		b = b[:size]
		if entOff > size || entSize > size-entOff || entSize < 40 {
			return perr(base+int64(pos)+16, "offload binary entry", "offset %d size %d outside %d bytes", entOff, entSize, size)
		}
		e := b[entOff:]
		imageKind := le.Uint16(e[0:])
		offloadKind := le.Uint16(e[2:])
		strOff, nStr := le.Uint64(e[8:]), le.Uint64(e[16:])
		imgOff, imgSize := le.Uint64(e[24:]), le.Uint64(e[32:])
		strs := map[string]string{}
		if strOff <= size && nStr <= (size-strOff)/16 {
			for i := uint64(0); i < nStr; i++ {
				ko, vo := le.Uint64(b[strOff+16*i:]), le.Uint64(b[strOff+16*i+8:])
				strs[cstr(b, ko)] = cstr(b, vo)
			}
		}
		if imgOff > size || imgSize > size-imgOff {
			return perr(base+int64(pos)+int64(entOff)+24, "offload image", "offset %d size %d outside %d bytes", imgOff, imgSize, size)
		}
		img := b[imgOff : imgOff+imgSize]
		_ = offloadKind
		kind := map[uint16]string{1: "object", 2: "llvm-bitcode", 3: "cubin", 4: "fatbinary", 5: "ptx"}[imageKind]
		if kind == "" {
			kind = fmt.Sprintf("image kind %d", imageKind)
		}
		if kind == "object" && bytes.HasPrefix(img, []byte(elf.ELFMAG)) && len(img) >= 20 && le.Uint16(img[18:]) == emAMDGPU {
			co, err := readCodeObject(img)
			if err != nil {
				return fmt.Errorf("offload image %s at offset 0x%x: %w", strs["arch"], base+int64(pos)+int64(imgOff), err)
			}
			co.Container, co.Entry, co.Offset = where, strs["triple"]+"--"+strs["arch"], base+int64(pos)+int64(imgOff)
			f.Objects = append(f.Objects, co)
		} else {
			f.Images = append(f.Images, Image{Where: where, Kind: kind, Arch: strs["arch"], Triple: strs["triple"], Size: int64(imgSize), Data: img})
			if kind == "llvm-bitcode" {
				f.addNote(NoteBitcode)
			}
		}
		pos += int((size + 7) &^ 7)
	}
	return nil
}

func cstr(b []byte, off uint64) string {
	if off >= uint64(len(b)) {
		return ""
	}
	s := b[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return string(s)
}
