package kernels

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/rocmk/rocmk/verify"
)

// Input sets: the cases of a family that run different ops over the same
// input (add, sub, ... of one dtype; a contiguous op and its strided twin)
// share one generated input, named by a set key. Generating it once saves
// CPU time, and verify.Run uploads it to the device once (Buffer.Set).

// setCache keeps the most recently used input sets of one Select. Cases
// come grouped by set, so a few entries suffice; an evicted set is simply
// generated again (generation is deterministic).
type setCache struct {
	mu      sync.Mutex
	entries []setEntry // most recent first
}

type setEntry struct {
	key  string
	data []byte
}

// setCacheSize covers the sets one group of cases uses at once (binary: a,
// b, a transposed, the broadcast row).
const setCacheSize = 4

// set returns the input set key, from o's cache or made by mk.
func (o Options) set(key string, mk func() []byte) []byte {
	s := o.sets
	if s == nil {
		return mk()
	}
	s.mu.Lock()
	for i, e := range s.entries {
		if e.key == key {
			copy(s.entries[1:i+1], s.entries[:i])
			s.entries[0] = e
			s.mu.Unlock()
			return e.data
		}
	}
	s.mu.Unlock()
	data := mk() // outside the lock: mk may ask for another set
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append([]setEntry{{key, data}}, s.entries...)
	if len(s.entries) > setCacheSize {
		s.entries = s.entries[:setCacheSize]
	}
	return data
}

// setKey names an input set: what it is, its dtype, length and seed.
func setKey(what string, dt verify.DType, n int, seed uint64) string {
	return fmt.Sprintf("%s/%s/%d/%d", what, dt, n, seed)
}

// transpose returns x (rows x cols, row-major) stored column-major: element
// (r, c) at c*rows + r, the layout strided kernels read with strides (1, rows).
func transpose(dt verify.DType, x []byte, rows, cols int) []byte {
	sz := dt.Size()
	out := verify.AllocBuffer(dt, rows*cols)
	const tile = 64 // both sides of a tile stay in cache
	tilesR := (rows + tile - 1) / tile
	verify.Parallel(tilesR, func(lo, hi int) {
		for tr := lo; tr < hi; tr++ {
			r0, r1 := tr*tile, min((tr+1)*tile, rows)
			for c0 := 0; c0 < cols; c0 += tile {
				c1 := min(c0+tile, cols)
				for r := r0; r < r1; r++ {
					switch sz {
					case 4:
						for c := c0; c < c1; c++ {
							binary.LittleEndian.PutUint32(out[4*(c*rows+r):], binary.LittleEndian.Uint32(x[4*(r*cols+c):]))
						}
					case 2:
						for c := c0; c < c1; c++ {
							binary.LittleEndian.PutUint16(out[2*(c*rows+r):], binary.LittleEndian.Uint16(x[2*(r*cols+c):]))
						}
					default:
						for c := c0; c < c1; c++ {
							copy(out[(c*rows+r)*sz:(c*rows+r+1)*sz], x[(r*cols+c)*sz:])
						}
					}
				}
			}
		}
	})
	return out
}
