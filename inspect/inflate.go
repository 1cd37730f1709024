package inspect

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// DefaultMaxDecompress is the decompression budget of Parse and Open, and the
// default of `rocmk inspect --max-decompress`.
const DefaultMaxDecompress = 1 << 30

// A Budget bounds the bytes that compressed bundles decompress to, over every
// file parsed with it: one command shares one budget, so neither one bomb nor
// many small ones can take more memory or time than it allows. Each CCOB's
// uncompressed size is taken from the budget, as its header states it, before
// anything is allocated. A Budget is safe for concurrent use.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// take reserves n bytes for the compressed bundle at offset off.
func (b *Budget) take(off int64, n uint64) error {
	for {
		used := b.used.Load()
		if n > uint64(b.limit-used) {
			return &DecompressLimitError{Offset: off, Size: n, Limit: b.limit, Left: b.limit - used}
		}
		if b.used.CompareAndSwap(used, used+int64(n)) {
			return nil
		}
	}
}

// giveBack returns n reserved bytes that were not decompressed after all.
func (b *Budget) giveBack(n uint64) { b.used.Add(-int64(n)) }

// DecompressLimitError reports a compressed bundle whose uncompressed size
// does not fit in what is left of the budget.
type DecompressLimitError struct {
	Offset      int64  // of the compressed bundle
	Size        uint64 // uncompressed size, as its header states it
	Limit, Left int64
}

func (e *DecompressLimitError) Error() string {
	return fmt.Sprintf("compressed bundle at offset 0x%x: decompressing it to %d bytes would pass the decompression limit of %d bytes for all inputs (%d left)", e.Offset, e.Size, e.Limit, e.Left)
}

func (f *File) budgetOrDefault() *Budget {
	if f.budget == nil {
		f.budget = NewBudget(DefaultMaxDecompress)
	}
	return f.budget
}

// inflate decompresses the data of a CCOB whose header says it holds usize
// bytes, taking them from b first; what is not decompressed in the end goes
// back. It streams: data that does not start like an offload bundle is
// refused after its first bytes, and no more than usize+1 bytes are ever
// decompressed. base and hdr place errors.
func inflate(b *Budget, method uint16, comp []byte, usize uint64, base, hdr int64) ([]byte, error) {
	if err := b.take(base, usize); err != nil {
		return nil, err
	}
	n := 0 // bytes decompressed
	defer func() { b.giveBack(usize - min(uint64(n), usize)) }()
	name := map[uint16]string{0: "zlib", 1: "zstd"}[method]
	r, release, err := decompressor(method, comp, usize)
	if err != nil {
		return nil, perr(base+hdr, "CCOB "+name+" data", "%v", err)
	}
	defer release()
	// The first bytes decide whether the rest is worth decompressing; only
	// then is the whole claimed size allocated.
	head := make([]byte, min(uint64(len(bundleMagic)), usize+1))
	n, err = fill(r, head)
	if err == nil && n == len(head) && string(head) != bundleMagic[:n] {
		return nil, perr(base+hdr, "CCOB payload", "decompressed data is not an offload bundle")
	}
	raw := head[:n]
	if err == nil && n == len(head) {
		raw = make([]byte, usize+1) // +1: a stream longer than its claim shows
		copy(raw, head)
		var m int
		m, err = fill(r, raw[n:])
		n += m
	}
	switch {
	case err != nil:
		return nil, perr(base+hdr, "CCOB "+name+" data", "%v", err)
	case uint64(n) > usize:
		return nil, perr(base+8, "CCOB uncompressed size", "header says %d, data decompresses to more than that", usize)
	case uint64(n) < usize:
		return nil, perr(base+8, "CCOB uncompressed size", "header says %d, data decompresses to %d bytes", usize, n)
	case !bytes.HasPrefix(raw[:n], []byte(bundleMagic)):
		return nil, perr(base+hdr, "CCOB payload", "decompressed data is not an offload bundle")
	}
	return raw[:n:n], nil
}

// fill reads from r until buf is full or r ends, and returns the bytes read
// and r's error other than io.EOF.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// zstdDecoders keeps streaming decoders for reuse; each serves one CCOB at a time.
var zstdDecoders sync.Pool

// decompressor returns a reader of comp's uncompressed bytes (method 0 zlib,
// 1 zstd) and a function that releases it.
func decompressor(method uint16, comp []byte, usize uint64) (io.Reader, func(), error) {
	if method == 0 {
		zr, err := zlib.NewReader(bytes.NewReader(comp))
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { zr.Close() }, nil
	}
	d, _ := zstdDecoders.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		if d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true)); err != nil {
			return nil, nil, err
		}
	}
	// A frame needs no window larger than its content: this keeps the
	// decoder's own buffers within the size taken from the budget.
	window := min(max(usize, zstd.MinWindowSize), 1<<41)
	if err := d.ResetWithOptions(bytes.NewReader(comp), zstd.WithDecoderMaxWindow(window)); err != nil {
		return nil, nil, err
	}
	return d, func() {
		_ = d.Reset(nil) // drop the reference to comp
		zstdDecoders.Put(d)
	}, nil
}
