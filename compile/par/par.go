// Package par holds Cache, the once-per-key memo (cmd/go's par.Cache):
// the toolchain's choices, probes and tool identities and the Builder's
// per-build lookups are each computed once per key, however many
// goroutines ask. It is a leaf of its own because both compile and
// compile/toolchain use it, and it belongs to neither's job (nor to
// compile/runner's, which runs programs).
package par

import (
	"sync"
	"sync/atomic"
)

// Cache runs a function once per key and remembers its result. The zero
// value is ready; a Cache must not be copied after first use.
type Cache[K comparable, V any] struct {
	m sync.Map // K -> *entry[V]
}

type entry[V any] struct {
	once sync.Once
	done atomic.Bool
	v    V
}

// Do returns the value for key, calling f to make it if this is the first
// call for key; concurrent callers for the same key wait for that one f.
func (c *Cache[K, V]) Do(key K, f func() V) V {
	v, ok := c.m.Load(key)
	if !ok {
		v, _ = c.m.LoadOrStore(key, new(entry[V]))
	}
	e := v.(*entry[V])
	e.once.Do(func() { e.v = f(); e.done.Store(true) })
	return e.v
}

// Get returns key's value if a Do for key has finished; it does not wait
// for one in progress (cmd/go's par.Cache.Get).
func (c *Cache[K, V]) Get(key K) (V, bool) {
	var zero V
	v, ok := c.m.Load(key)
	if !ok {
		return zero, false
	}
	e := v.(*entry[V])
	if !e.done.Load() {
		return zero, false
	}
	return e.v, true
}

// Forget drops key's value, so the next Do computes it again (a failure
// that should not be remembered). Callers already waiting keep theirs.
func (c *Cache[K, V]) Forget(key K) {
	c.m.Delete(key)
}

// Clear forgets every key (a Builder starts each build afresh).
func (c *Cache[K, V]) Clear() {
	c.m.Clear()
}
