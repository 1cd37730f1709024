package main

import (
	"errors"
	"testing"

	"github.com/rocmk/rocmk/verify"
	"github.com/stretchr/testify/assert"
)

// TestRunWithoutGPU: where no GPU runtime opens, run says why with verify's
// sentinels and loads nothing (the H100 run is in docs/runtime.md).
func TestRunWithoutGPU(t *testing.T) {
	err := run("cuda", "", 16)
	if err == nil {
		t.Skip("an NVIDIA GPU is here: the example ran")
	}
	assert.True(t, errors.Is(err, verify.ErrRuntimeUnavailable) || errors.Is(err, verify.ErrNoDevice), "%v", err)
	assert.Contains(t, err.Error(), "cuda")
	assert.Error(t, run("nonsense", "", 16))
}
