package compile

import (
	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/toolchain"
)

// Store is the cache as builds use it (toolchain.Store: a *cache.Cache or a
// *remote.Tier).
type Store = toolchain.Store

// get is s.GetBytes without the entry.
func get(s Store, id cache.ActionID) ([]byte, error) {
	b, _, err := s.GetBytes(id)
	return b, err
}

// put is s.PutBytes without the entry.
func put(s Store, id cache.ActionID, data []byte, m cache.Meta) error {
	_, err := s.PutBytes(id, data, m)
	return err
}
