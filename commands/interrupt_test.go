//go:build unix

package commands

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/toolchain"
)

// Issue 11 item 6 with real processes: the built rocmk on inputs that
// never end, and on commands blocked where no context reaches.

func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the built rocmk; full lane only")
	}
}

// runLimited runs the built rocmk under a 4 GiB address-space limit (the
// old code read /dev/zero until Go's fatal out of memory) and kills it
// after timeout. It returns the exit code (-1 when killed) and the start of
// stderr (a crash's goroutine dump is long).
func runLimited(t *testing.T, timeout time.Duration, args ...string) (int, string) {
	t.Helper()
	bin := rocmkBinary(t)
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -v 4194304; exec "$0" "$@"`, bin}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	head := func() string { return string(stderr.Bytes()[:min(stderr.Len(), 2000)]) }
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), head()
		}
		require.NoError(t, err)
		return 0, head()
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		t.Errorf("rocmk %s: still running after %v", strings.Join(args, " "), timeout)
		return -1, head()
	}
}

func TestFaultInputsThatNeverEnd(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.cu")
	mkfifo(t, fifo)
	zero := filepath.Join(dir, "zero.cu")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hipify", fifo}, fifo + ": not a regular file (a named pipe)"},
		{[]string{"hipify", "/dev/zero"}, "/dev/zero: not a regular file (a character device)"},
		{[]string{"hipify", zero}, zero + ": not a regular file (a character device)"},
		{[]string{"inspect", fifo}, fifo + ": not a regular file (a named pipe)"},
		{[]string{"inspect", "/dev/zero"}, "/dev/zero: not a regular file (a character device)"},
	} {
		code, stderr := runLimited(t, 10*time.Second, c.args...)
		assert.Equal(t, ExitFailure, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, c.args)
		assert.NotContains(t, stderr, "fatal error", c.args)
	}
}

func TestFaultSpecialCacheFilesAreRemoved(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	c, err := cache.Open(dir)
	require.NoError(t, err)
	var planted []string
	for _, what := range []string{"fifo", "zero"} {
		id := cache.ActionID(sha256.Sum256([]byte(what)))
		e, err := c.PutBytes(id, []byte("object "+what), cache.Meta{Kind: "object"})
		require.NoError(t, err)
		p := c.OutputFile(e.Output)
		require.NoError(t, os.Remove(p))
		if what == "fifo" {
			mkfifo(t, p)
		} else {
			require.NoError(t, os.Symlink("/dev/zero", p))
		}
		planted = append(planted, p)
	}
	code, stderr := runLimited(t, 20*time.Second, "cache", "verify", "--cache-dir", dir)
	assert.Equal(t, ExitFailure, code, "problems found (and fixed) exit 1: %s", stderr)
	for _, p := range planted {
		_, err := os.Lstat(p)
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s removed", p)
	}
	code, stderr = runLimited(t, 20*time.Second, "cache", "verify", "--cache-dir", dir)
	assert.Equal(t, 0, code, stderr)
}

// signalWhenReady starts cmd, sends sig once ready is closed, and returns
// rocmk's exit code and how long it took to exit after the signal.
func signalWhenReady(t *testing.T, cmd *exec.Cmd, ready <-chan struct{}, sig syscall.Signal) (int, time.Duration) {
	t.Helper()
	var stderr bytes.Buffer
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("rocmk exited before it was ready: %v %s", err, stderr.String())
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("rocmk never got ready: %s", stderr.String())
	}
	sent := time.Now()
	require.NoError(t, cmd.Process.Signal(sig))
	select {
	case err := <-done:
		took := time.Since(sent)
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, stderr.String())
		return ee.ExitCode(), took
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("rocmk still running 10s after %v", sig)
		return -1, 0
	}
}

// readyOnStderr captures cmd's stderr and returns a channel closed when
// it contains s.
func readyOnStderr(cmd *exec.Cmd, s string) <-chan struct{} {
	w := &watchWriter{want: s, ready: make(chan struct{})}
	cmd.Stderr = w
	return w.ready
}

// watchWriter keeps what is written and closes ready once it contains want.
type watchWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	want  string
	ready chan struct{}
	seen  bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && strings.Contains(w.buf.String(), w.want) {
		w.seen = true
		close(w.ready)
	}
	return len(p), nil
}

// readyOnFile returns a channel closed when path exists.
func readyOnFile(t *testing.T, path string) <-chan struct{} {
	ready := make(chan struct{})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			if _, err := os.Stat(path); err == nil {
				close(ready)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return ready
}

// TestFaultInterruptBlockedRead: rocmk blocked reading a pipe that never
// ends (no context reaches a read) still exits 130 within a second of
// SIGINT or SIGTERM, leaving no file behind.
func TestFaultInterruptBlockedRead(t *testing.T) {
	skipShort(t)
	bin := rocmkBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer w.Close()
			cmd := exec.Command(bin, "hipify", "-v", "-", "-o", filepath.Join(dir, "out.hip"))
			cmd.Stdin = r
			cmd.Env = append(os.Environ(), "ROCM_PATH="+filepath.Join(dir, "none"))
			code, took := signalWhenReady(t, cmd, readyOnStderr(cmd, "hipify: target HIP"), sig)
			r.Close()
			assert.Equal(t, ExitInterrupted, code)
			assert.Less(t, took, time.Second)
			left, _ := os.ReadDir(dir)
			assert.Empty(t, left)
		})
	}
}

// realDeviceLibs is the device-library directory of the installed toolchain.
func realDeviceLibs(t *testing.T) string {
	t.Helper()
	in, err := toolchain.FindInstallation(toolchain.FindOptions{})
	require.NoError(t, err)
	return in.DeviceLibDir
}

// fakeCompiler writes a clang++ that answers --version and otherwise
// records its pid and sleeps, ignoring SIGINT and SIGTERM.
func fakeCompiler(t *testing.T) (dir, pidFile string) {
	t.Helper()
	dir = t.TempDir()
	pidFile = filepath.Join(dir, "pid")
	script := "#!/bin/sh\n" +
		"case \"$*\" in *--version*) echo 'clang version 15.0.7'; echo 'Target: x86_64-pc-linux-gnu'; exit 0;; esac\n" +
		"echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\n" +
		"trap '' INT TERM\nexec sleep 120\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "clang++"), []byte(script), 0o755))
	return dir, pidFile
}

// TestFaultInterruptHungCompiler: a build whose compiler hangs and ignores
// signals exits 130 within a second; the compiler is killed and the output
// directory holds nothing.
func TestFaultInterruptHungCompiler(t *testing.T) {
	skipShort(t)
	requireToolchain(t)
	bin := rocmkBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			clangDir, pidFile := fakeCompiler(t)
			dir := copyCompileFiles(t, "vadd.hip", "scale.h")
			out := filepath.Join(dir, "out")
			cmd := exec.Command(bin, "build", "--no-cache", "-a", "gfx90a", "-o", out, filepath.Join(dir, "vadd.hip"))
			// The fake clang has no device libraries beside it: the real
			// install's (wherever this lane keeps them) are named.
			cmd.Env = append(os.Environ(), "HIP_CLANG_PATH="+clangDir, "HIP_DEVICE_LIB_PATH="+realDeviceLibs(t))
			code, took := signalWhenReady(t, cmd, readyOnFile(t, pidFile), sig)
			assert.Equal(t, ExitInterrupted, code)
			assert.Less(t, took, time.Second)
			b, err := os.ReadFile(pidFile)
			require.NoError(t, err)
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			require.NoError(t, err)
			assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the compiler was killed")
			left, _ := os.ReadDir(out)
			assert.Empty(t, left, "nothing half-written in the output directory")
		})
	}
}
