package outcmp

import (
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestExitStatusOfProcesses runs real processes (a shell) that exit and that crash.
func TestExitStatusOfProcesses(t *testing.T) {
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
		cmd := exec.Command(sh, "-c", c.script)
		_ = cmd.Run()
		code, signal := ExitStatus(cmd.ProcessState)
		assert.Equal(t, c.code, code, c.script)
		assert.Equal(t, c.signal, signal, c.script)
		if signal != "" {
			assert.Equal(t, Run{ExitCode: code, Signal: signal}.Status(), Run{ExitCode: -1, Signal: signal}.Status())
		}
	}
	cmd := exec.Command("/nonexistent/program")
	assert.Error(t, cmd.Run())
	code, signal := ExitStatus(cmd.ProcessState)
	assert.Equal(t, -1, code)
	assert.Equal(t, "", signal)
	assert.Equal(t, "signal 64", signalName(64))
}
