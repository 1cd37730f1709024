package par

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCacheDoesEachKeyOnce(t *testing.T) {
	var c Cache[string, int]
	var calls atomic.Int32
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = c.Do("k", func() int { return int(calls.Add(1)) * 10 })
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), calls.Load(), "one call for one key")
	for _, g := range got {
		assert.Equal(t, 10, g, "every caller sees the one result")
	}
	assert.Equal(t, 20, c.Do("other", func() int { return 20 }), "another key computes its own")
}

func TestCacheForgetComputesAgain(t *testing.T) {
	var c Cache[string, int]
	assert.Equal(t, 1, c.Do("k", func() int { return 1 }))
	assert.Equal(t, 1, c.Do("k", func() int { return 2 }), "remembered")
	c.Forget("k")
	assert.Equal(t, 2, c.Do("k", func() int { return 2 }), "forgotten: computed again")
}

func TestCacheGetWaitsForNothing(t *testing.T) {
	var c Cache[string, int]
	_, ok := c.Get("k")
	assert.False(t, ok, "no Do yet")
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan int)
	go func() { done <- c.Do("k", func() int { close(started); <-release; return 7 }) }()
	<-started
	_, ok = c.Get("k")
	assert.False(t, ok, "a Do in progress: Get does not wait and says no")
	close(release)
	assert.Equal(t, 7, <-done)
	v, ok := c.Get("k")
	assert.True(t, ok, "after Do")
	assert.Equal(t, 7, v)
	c.Forget("k")
	_, ok = c.Get("k")
	assert.False(t, ok, "forgotten")
}
