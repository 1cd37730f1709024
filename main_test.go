package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ROCMK_CPUPROFILE writes a profile of the command (gzip-compressed
// protobuf, as go tool pprof reads it) and keeps its exit code.
func TestCPUProfileEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	t.Setenv("ROCMK_CPUPROFILE", path)
	code := profiled(func() int {
		x := 0
		for i := 0; i < 1e7; i++ {
			x += i % 7
		}
		if x == 0 {
			return 1
		}
		return 3
	})
	assert.Equal(t, 3, code)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(b), 2)
	assert.Equal(t, []byte{0x1f, 0x8b}, b[:2], "gzip header")

	t.Setenv("ROCMK_CPUPROFILE", filepath.Join(t.TempDir(), "missing-dir", "cpu.pprof"))
	assert.Equal(t, 5, profiled(func() int { return 5 }), "an unwritable profile does not stop the command")
}
