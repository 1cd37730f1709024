package verify

import (
	"context"
	"fmt"
	"sync"
)

// Store is rocmk's one module cache and the one place a module is loaded
// (Runtime.Load is called nowhere else; TestOneLoader keeps it so): a
// module, named by its caller, is loaded once per runtime, and later calls
// only look it up. verify's suite runner, the port checker and verify/gpu's
// Device all get their modules here. A Store is safe for concurrent use; the
// runtime underneath is not, so loads and [Store.Do] hold one lock.
type Store struct {
	rt  Runtime
	rmu sync.Mutex // the runtime's lock

	mu   sync.Mutex
	mods map[string]*storeEntry
}

// Image is what a module is loaded from: the bytes, why they were chosen
// (for messages and Explain) and, when known, the kernels in it.
type Image struct {
	Data    []byte
	Explain string
	Kernels map[string]bool // nil: unknown
}

// Loaded is a module in the store.
type Loaded struct {
	Module  Module
	Explain string
	Kernels map[string]bool
}

type storeEntry struct {
	once sync.Once
	l    *Loaded
	err  error
	done bool // set under Store.mu once the load finished
}

// NewStore makes the module store of rt.
func NewStore(rt Runtime) *Store { return &Store{rt: rt, mods: map[string]*storeEntry{}} }

// Runtime is the runtime the store loads into.
func (s *Store) Runtime() Runtime { return s.rt }

// Get returns module name, calling image and loading its result the first
// time only; concurrent callers wait for that one load. A failure is kept
// too: the module is not built or loaded again.
func (s *Store) Get(ctx context.Context, name string, image func(context.Context) (Image, error)) (*Loaded, error) {
	s.mu.Lock()
	e := s.mods[name]
	if e == nil {
		e = &storeEntry{}
		s.mods[name] = e
	}
	s.mu.Unlock()
	e.once.Do(func() {
		img, err := image(ctx)
		if err != nil {
			e.err = err
			return
		}
		s.rmu.Lock()
		mod, err := s.rt.Load(img.Data)
		s.rmu.Unlock()
		if err != nil {
			e.err = fmt.Errorf("module %q: loading: %w", name, err)
			if img.Explain != "" {
				e.err = fmt.Errorf("module %q: %s: %w", name, img.Explain, err)
			}
			return
		}
		e.l = &Loaded{Module: mod, Explain: img.Explain, Kernels: img.Kernels}
	})
	s.mu.Lock()
	e.done = true
	s.mu.Unlock()
	return e.l, e.err
}

// Loaded returns module name if it was loaded (nil otherwise), without loading it.
func (s *Store) Loaded(name string) *Loaded {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.mods[name]; e != nil && e.done {
		return e.l
	}
	return nil
}

// Do runs fn with the runtime's lock held: callers that share the store
// across goroutines launch and copy through it.
func (s *Store) Do(fn func(Runtime) error) error {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return fn(s.rt)
}

// Close unloads every module; the runtime stays open.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rmu.Lock()
	defer s.rmu.Unlock()
	var first error
	for _, e := range s.mods {
		if e.done && e.l != nil {
			if err := e.l.Module.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	s.mods = map[string]*storeEntry{}
	return first
}
