//go:build linux && cgo

package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Each binding's symbol list fills a C table by index: a list entry added or
// removed without its enum entry would shift every function after it.
func TestSymbolTablesMatchTheirEnums(t *testing.T) {
	assert.Equal(t, hipTableSize(), len(hipSyms), "hipSyms vs the H_* enum")
	assert.Equal(t, cudaTableSize(), len(cudaSyms), "cudaSyms vs the CU_* enum")
	assert.Equal(t, nvrtcTableSize(), len(nvrtcSyms), "nvrtcSyms vs the N_* enum")
}
