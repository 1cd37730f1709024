package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBufferPoolReusesAndBounds(t *testing.T) {
	b := AllocBuffer(F32, 1<<19) // 2 MiB
	b[0] = 42
	Recycle(b)
	c := AllocBuffer(F32, 1<<19)
	assert.Equal(t, &b[0], &c[0], "a recycled buffer of the same size is handed out again")
	Recycle(c)

	bufPool.Lock()
	n0, bytes0 := bufPool.n, bufPool.bytes
	bufPool.bytes = poolMaxBytes - 1<<20 // pretend the pool is nearly full
	bufPool.Unlock()
	Recycle(make([]byte, 2<<20))
	bufPool.Lock()
	assert.Equal(t, n0, bufPool.n, "over the byte bound: not kept")
	bufPool.bytes = bytes0
	bufPool.Unlock()
	d := AllocBuffer(F32, 1<<19)
	assert.Equal(t, &b[0], &d[0])
}
