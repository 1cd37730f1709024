package outcmp

import (
	"errors"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestExitOf runs real processes (a shell) that exit and that crash.
func TestExitOf(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX signals on windows")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	for _, c := range []struct {
		script string
		code   int
		signal string
	}{
		{"exit 0", 0, ""},
		{"exit 3", 3, ""},
		{"kill -SEGV $$", 139, "SIGSEGV"},
		{"kill -ABRT $$", 134, "SIGABRT"},
		{"kill -KILL $$", 137, "SIGKILL"},
	} {
		code, signal, ok := ExitOf(exec.Command(sh, "-c", c.script).Run())
		assert.True(t, ok, c.script)
		assert.Equal(t, c.code, code, c.script)
		assert.Equal(t, c.signal, signal, c.script)
		if signal != "" {
			assert.Equal(t, Run{ExitCode: code, Signal: signal}.Status(), Run{ExitCode: -1, Signal: signal}.Status())
		}
	}
	_, _, ok := ExitOf(exec.Command("/nonexistent/program").Run())
	assert.False(t, ok)
	_, _, ok = ExitOf(errors.New("other"))
	assert.False(t, ok)
	assert.Equal(t, "signal 64", signalName(64))
}
