//go:build unix

package hipify

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The includer walk reads files beside the project: a FIFO and a link to
// /dev/zero with source names there neither hang it nor grow without bound,
// and the rule still keeps the CUDA branch.
func TestROCmBranchWalkSkipsSpecialFiles(t *testing.T) {
	root := writeKeptProject(t, nil)
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "cuda", "pipe.cuh"), 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "cuda", "zero.cuh")))
	out, rep := translatePath(t, filepath.Join(root, "cuda", "quant", "nvidia", "q.cuh"))
	assert.Contains(t, out, "#ifndef USE_ROCM\n__device__")
	assert.Len(t, keptHazards(rep), 1)
}
