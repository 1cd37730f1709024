//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package cache

import (
	"sync"
	"time"
)

var lockWait = 30 * time.Second

// Without flock, lock only excludes goroutines of this process.
var locks sync.Map // name -> *sync.RWMutex

func lock(name string, exclusive bool) (func(), error) {
	v, _ := locks.LoadOrStore(name, new(sync.RWMutex))
	mu := v.(*sync.RWMutex)
	if exclusive {
		mu.Lock()
		return mu.Unlock, nil
	}
	mu.RLock()
	return mu.RUnlock, nil
}
