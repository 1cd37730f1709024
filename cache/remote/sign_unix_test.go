//go:build unix

package remote

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key file that is a named pipe or a device is refused at once (a pipe
// nobody writes would block the open), naming the file.
func TestLoadKeyRefusesFIFOAndDevice(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "key")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	t0 := time.Now()
	_, err := Resolve("http://h", "", Settings{}, envOf(map[string]string{EnvKeyFile: fifo}))
	assert.ErrorContains(t, err, EnvKeyFile+": "+fifo+": not a regular file (a named pipe)")
	assert.Less(t, time.Since(t0), time.Second)
	_, err = Resolve("http://h", "", Settings{}, envOf(map[string]string{EnvKeyFile: "/dev/zero"}))
	assert.ErrorContains(t, err, "/dev/zero: not a regular file (a character device)")
}
