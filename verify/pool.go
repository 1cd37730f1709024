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
	d, err := p.rt.Alloc(n)
	if err != nil && len(p.free) > 0 {
		// Buffers of other sizes (a spec's sweep) may hold the memory.
		p.drain(false)
		d, err = p.rt.Alloc(n)
	}
	return d, err
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

// hostAllocator is implemented by runtimes that give page-locked host
// memory: copies to and from it run at the bus's speed instead of being
// staged through the driver's own buffers.
type hostAllocator interface {
	HostAlloc(n int) ([]byte, error)
	HostFree(b []byte) error
}

// outPool keeps the page-locked host buffers that outputs are copied back
// into during one Run (a case's outputs, until its comparison is done).
// Without a hostAllocator, or when pinning fails, it hands out ordinary
// buffers.
type outPool struct {
	rt     Runtime
	free   map[int][][]byte
	pinned map[*byte]bool
}

func (p *outPool) get(d DType, n int) []byte {
	size := n * d.Size()
	if l := p.free[size]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[size] = l[:len(l)-1]
		return b
	}
	if ha, ok := p.rt.(hostAllocator); ok && size >= 1<<20 {
		if b, err := ha.HostAlloc(size); err == nil {
			if p.pinned == nil {
				p.pinned = map[*byte]bool{}
			}
			p.pinned[&b[0]] = true
			return b
		}
	}
	return AllocBuffer(d, n)
}

func (p *outPool) put(bufs ...[]byte) {
	for _, b := range bufs {
		if len(b) == 0 || !p.pinned[&b[0]] {
			Recycle(b)
			continue
		}
		if p.free == nil {
			p.free = map[int][][]byte{}
		}
		p.free[len(b)] = append(p.free[len(b)], b)
	}
}

// drain frees the pinned buffers (forget: a context reset took them). Every
// buffer must be back.
func (p *outPool) drain(forget bool) {
	if ha, ok := p.rt.(hostAllocator); ok && !forget {
		for _, l := range p.free {
			for _, b := range l {
				ha.HostFree(b)
			}
		}
	}
	p.free, p.pinned = nil, nil
}
