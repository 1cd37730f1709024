package verify

import "sync"

// Host buffers of a suite are large (16M elements) and many; allocating
// fresh ones for every case costs page faults and GC work that exceed the
// useful CPU work. AllocBuffer and Recycle keep a bounded free list.

// The free list keeps at most poolMax buffers and poolMaxBytes in all:
// enough for the cases Run keeps in flight (inputs, references and outputs
// of up to 2+lookahead cases) without faulting in fresh pages per case.
const (
	poolMax      = 48
	poolMaxBytes = 3 << 30
)

var bufPool struct {
	sync.Mutex
	free  map[int][][]byte
	n     int
	bytes int
}

// AllocBuffer returns n elements of d whose contents are undefined (the
// caller writes every element). Use NewBuffer for zeroed memory.
func AllocBuffer(d DType, n int) []byte {
	size := n * d.Size()
	if size < 1<<20 {
		return make([]byte, size)
	}
	bufPool.Lock()
	defer bufPool.Unlock()
	if l := bufPool.free[size]; len(l) > 0 {
		b := l[len(l)-1]
		bufPool.free[size] = l[:len(l)-1]
		bufPool.n--
		bufPool.bytes -= len(b)
		return b
	}
	return make([]byte, size)
}

// Recycle hands buffers back for reuse; they must not be used afterwards.
func Recycle(bufs ...[]byte) {
	bufPool.Lock()
	defer bufPool.Unlock()
	if bufPool.free == nil {
		bufPool.free = map[int][][]byte{}
	}
	for _, b := range bufs {
		if len(b) < 1<<20 || bufPool.n >= poolMax || bufPool.bytes+len(b) > poolMaxBytes {
			continue
		}
		bufPool.free[len(b)] = append(bufPool.free[len(b)], b[:len(b):len(b)])
		bufPool.n++
		bufPool.bytes += len(b)
	}
}

// devPool reuses device allocations across the cases of one Run.
type devPool struct {
	rt   Runtime
	free map[int][]DevPtr
}

func (p *devPool) alloc(n int) (DevPtr, error) {
	if l := p.free[n]; len(l) > 0 {
		d := l[len(l)-1]
		p.free[n] = l[:len(l)-1]
		return d, nil
	}
	return p.rt.Alloc(n)
}

func (p *devPool) put(n int, d DevPtr) {
	if p.free == nil {
		p.free = map[int][]DevPtr{}
	}
	p.free[n] = append(p.free[n], d)
}

// drain frees everything (forget: after a context reset the pointers are gone).
func (p *devPool) drain(forget bool) {
	for _, l := range p.free {
		for _, d := range l {
			if !forget {
				p.rt.Free(d)
			}
		}
	}
	p.free = nil
}
