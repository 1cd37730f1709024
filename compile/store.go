package compile

import (
	"encoding/hex"
	"fmt"

	"github.com/rocmk/rocmk/cache"
)

// Key is a cache action key (the hash of everything that determines an output).
type Key [32]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// StoreMeta describes an entry for `rocmk cache ls`.
type StoreMeta struct {
	Kind      string // "object" or "deps"
	Source    string
	Target    string
	Toolchain string
	ROCm      string
}

// Store is the cache as compile sees it (a consumer-side interface; the
// cache package implements it through a small adapter in commands/).
// Get must report a missing, truncated or corrupt entry as ErrCacheMiss
// (or any error: every error is treated as a miss).
type Store interface {
	Get(k Key) ([]byte, error)
	Put(k Key, data []byte, m StoreMeta) error
}

// ErrCacheMiss is what a Store returns for an absent entry (the cache
// package's ErrNotFound).
var ErrCacheMiss = cache.ErrNotFound

// CacheStore adapts a *cache.Cache to Store.
func CacheStore(c *cache.Cache) Store { return cacheStore{c} }

type cacheStore struct{ c *cache.Cache }

func (s cacheStore) Get(k Key) ([]byte, error) {
	b, _, err := s.c.GetBytes(cache.ActionID(k))
	return b, err
}

func (s cacheStore) Put(k Key, data []byte, m StoreMeta) error {
	_, err := s.c.PutBytes(cache.ActionID(k), data, cache.Meta{Kind: m.Kind, Source: m.Source, Target: m.Target, Toolchain: m.Toolchain, ROCm: m.ROCm})
	return err
}

// keyHash builds an action key from labelled lines (as cmd/go's
// buildActionID does) through cache.NewHash, which logs every line with
// ROCMK_DEBUG=cachehash=1.
type keyHash struct{ h *cache.Hash }

func newKeyHash(label string) *keyHash { return &keyHash{cache.NewHash(label)} }

func (k *keyHash) line(format string, a ...any) { fmt.Fprintf(k.h, format+"\n", a...) }

func (k *keyHash) Sum() Key { return Key(k.h.Sum()) }
