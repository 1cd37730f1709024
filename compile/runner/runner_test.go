package runner

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A program that prints more than MaxOutput is read to its end (it does not
// block on a full pipe) and only the first MaxOutput bytes are kept.
func TestRunCapsOutput(t *testing.T) {
	out, err := ExecRunner{}.Run(context.Background(), Cmd{
		Argv:      []string{"sh", "-c", "head -c 300000 /dev/zero; echo done >&2"},
		MaxOutput: 1000,
	})
	require.NoError(t, err)
	assert.Len(t, out.Stdout, 1000)
	assert.Equal(t, "done\n", string(out.Stderr))
	assert.True(t, out.Truncated)

	out, err = ExecRunner{}.Run(context.Background(), Cmd{Argv: []string{"sh", "-c", "echo hi"}, MaxOutput: 1000})
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(out.Stdout))
	assert.False(t, out.Truncated)
}
