package verify

import "sync"

// sharing computes each shared reference once and uploads each shared input
// once per Run. Cases declare what they share (Case.RefKey, Buffer.Set);
// the counts of uses, taken up front, say when a shared item can go.
type sharing struct {
	mu      sync.Mutex // refs is used by the producer and the device side
	refs    map[string]*sharedRef
	refUses map[string]int

	// Device side only.
	dev     map[string]DevPtr // pristine device copy of a shared input
	devSize map[string]int
	devUses map[string]int
}

type sharedRef struct {
	data [][]byte
	uses int // cases still to finish with it
}

func newSharing(cases []*Case) *sharing {
	s := &sharing{refs: map[string]*sharedRef{}, refUses: map[string]int{}, dev: map[string]DevPtr{},
		devSize: map[string]int{}, devUses: map[string]int{}}
	for _, c := range cases {
		if c.RefKey != "" {
			s.refUses[c.RefKey]++
		}
		for _, b := range c.Buffers {
			if b.Set != "" && !b.Out {
				s.devUses[b.Set]++
			}
		}
	}
	return s
}

// reference returns c's reference, computing it unless a case with the
// same RefKey already did.
func (s *sharing) reference(c *Case) (refs [][]byte, reused bool) {
	if c.Ref == nil {
		return nil, false
	}
	if c.RefKey == "" {
		return c.Ref(c.Buffers), false
	}
	s.mu.Lock()
	r := s.refs[c.RefKey]
	s.mu.Unlock()
	if r != nil {
		return r.data, true
	}
	refs = c.Ref(c.Buffers)
	s.mu.Lock()
	s.refs[c.RefKey] = &sharedRef{data: refs, uses: s.refUses[c.RefKey]}
	s.mu.Unlock()
	return refs, false
}

// release is called once per case when the device side is done with it:
// unshared references and inputs go back to the host pool, shared ones
// when their last case is done.
func (s *sharing) release(c *Case, refs [][]byte, pool *devPool) {
	if c.RefKey == "" {
		Recycle(refs...)
	} else {
		s.mu.Lock()
		if r := s.refs[c.RefKey]; r != nil {
			if r.uses--; r.uses <= 0 {
				Recycle(r.data...)
				delete(s.refs, c.RefKey)
			}
		}
		s.mu.Unlock()
	}
	for i, b := range c.Buffers {
		if b.Out {
			continue
		}
		if b.Set != "" {
			if s.devUses[b.Set]--; s.devUses[b.Set] <= 0 {
				if p, ok := s.dev[b.Set]; ok {
					pool.put(s.devSize[b.Set], p)
					delete(s.dev, b.Set)
				}
			}
		}
		if c.Gen != nil { // inputs Run generated: drop them (and reuse unshared ones)
			if b.Set == "" {
				Recycle(b.Data)
			}
			c.Buffers[i].Data = nil
		}
	}
}

// deviceCopier is implemented by runtimes with device-to-device copies.
type deviceCopier interface {
	CopyDevice(dst, src DevPtr, n int) error
}

// upload fills the device buffer dst (n bytes) with input b: from the
// pristine device copy when b is shared with a later case (a device copy is
// far faster than a host one; the kernel may scribble on dst, never on the
// pristine copy), else from the host.
func (s *sharing) upload(rt Runtime, pool *devPool, b Buffer, dst DevPtr, n int) error {
	dc, ok := rt.(deviceCopier)
	src, have := s.dev[b.Set]
	if b.Set == "" || !ok || (have && s.devSize[b.Set] != n) || (!have && s.devUses[b.Set] <= 1) {
		return rt.CopyIn(dst, b.Data)
	}
	if !have {
		p, err := pool.alloc(n)
		if err != nil {
			return err
		}
		if err := rt.CopyIn(p, b.Data); err != nil {
			pool.put(n, p)
			return err
		}
		s.dev[b.Set], s.devSize[b.Set], src = p, n, p
	}
	return dc.CopyDevice(dst, src, n)
}

// forgetDevice drops the pristine copies after a context reset (their
// memory went with the context).
func (s *sharing) forgetDevice() {
	s.dev = map[string]DevPtr{}
}
