//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package cache

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockWait bounds how long lock waits for another process.
var lockWait = 30 * time.Second

// lock takes a shared or exclusive flock on name (created if needed) and
// returns the function that releases it. Each call opens its own file
// description, so goroutines of one process exclude each other as processes
// do. It waits at most lockWait.
func lock(name string, exclusive bool) (func(), error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(lockWait)
	sleep := 200 * time.Microsecond
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: still held by another process after %v", name, lockWait)
		}
		time.Sleep(sleep)
		if sleep < 20*time.Millisecond {
			sleep *= 2
		}
	}
}
