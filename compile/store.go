package compile

import "github.com/rocmk/rocmk/cache"

// Store is the cache as compile uses it: a *cache.Cache, or a
// *remote.Tier (the local cache with a shared server behind it), whose
// methods these are. Every error of GetBytes is a miss; a missing,
// truncated or corrupt entry is one.
type Store interface {
	GetBytes(id cache.ActionID) ([]byte, cache.Entry, error)
	PutBytes(id cache.ActionID, data []byte, m cache.Meta) (cache.Entry, error)
}

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
