package cache

import (
	"fmt"
	"testing"
)

// A typical code object for one target is 10-200 KiB.
const benchSize = 64 << 10

// BenchmarkGetHit is the cache-hit cost for one object: index read, data
// read and sha256 check (GetBytes), as a build pays it per (source, target).
func BenchmarkGetHit(b *testing.B) {
	c, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	data := content(3)[:1024]
	for len(data) < benchSize {
		data = append(data, data...)
	}
	ids := make([]ActionID, 64)
	for i := range ids {
		ids[i] = aid(fmt.Sprint("bench ", i))
		if _, err := c.PutBytes(ids[i], data, Meta{Kind: "object", Target: "gfx90a"}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, _, err := c.GetBytes(ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetHitIndexOnly is Get (index entry + stat of the data file).
func BenchmarkGetHitIndexOnly(b *testing.B) {
	c, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	id := aid("bench")
	if _, err := c.PutBytes(id, content(3), Meta{Kind: "object"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.Get(id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPut stores a new 64 KiB object per iteration.
func BenchmarkPut(b *testing.B) {
	c, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, benchSize)
	b.SetBytes(benchSize)
	for i := 0; b.Loop(); i++ {
		data[0], data[1], data[2], data[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
		if _, err := c.PutBytes(aid(fmt.Sprint("put ", i)), data, Meta{Kind: "object"}); err != nil {
			b.Fatal(err)
		}
	}
}
