package port

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/verify"
)

type namedRuntime struct {
	verify.Runtime
	name string
}

func (r namedRuntime) Name() string { return r.name }

func TestPlatformOf(t *testing.T) {
	for name, want := range map[string]compile.Platform{"hip": compile.AMD, "cuda": compile.NVIDIA, "fake": compile.Host} {
		assert.Equal(t, want, PlatformOf(namedRuntime{name: name}), name)
	}
}
