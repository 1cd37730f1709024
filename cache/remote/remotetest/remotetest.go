// Package remotetest starts real cache servers on 127.0.0.1 for tests:
// nginx with WebDAV PUT (the Bazel HTTP cache protocol) and redis-server,
// each in a temporary directory, stopped when the test ends. Tests that use
// them skip with -short and when the server binary is not installed
// (scripts/install-toolchain.sh installs both). The servers run through
// compile's Runner, rocmk's one way to run a program: each in its own
// process group, SIGKILLed when its context is cancelled.
package remotetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocmk/rocmk/compile/runner"
)

// Server is one running server process.
type Server struct {
	URL  string // http://127.0.0.1:PORT or redis://127.0.0.1:PORT
	Addr string // 127.0.0.1:PORT
	Root string // nginx: the directory it serves (plant files here)
	Dir  string // the server's temporary directory (config, logs, pid file)
	stop context.CancelFunc
	done chan struct{}
}

// Need skips t under -short or when bin is not installed, and returns
// bin's path.
func Need(t testing.TB, bin string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: not starting %s", bin)
	}
	p, err := exec.LookPath(bin)
	if err != nil {
		for _, d := range []string{"/usr/sbin", "/usr/bin"} { // not on every PATH
			if _, e := os.Stat(filepath.Join(d, bin)); e == nil {
				return filepath.Join(d, bin)
			}
		}
		t.Skipf("%s not installed (scripts/install-toolchain.sh installs it)", bin)
	}
	return p
}

// DAVLocation is the nginx location body of a Bazel HTTP cache: GET and
// HEAD serve files, PUT stores them (creating ac/ and cas/).
const DAVLocation = `dav_methods PUT DELETE;
      create_full_put_path on;
      dav_access user:rw group:r all:r;`

// StartNginx starts nginx serving a fresh directory with location (nginx
// directives inside "location / { }", e.g. DAVLocation, plus auth_basic or
// "return 500;" for fault tests).
func StartNginx(t testing.TB, location string) *Server {
	t.Helper()
	bin := Need(t, "nginx")
	dir := t.TempDir()
	s := &Server{Dir: dir, Root: filepath.Join(dir, "root")}
	for _, d := range []string{s.Root, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.start(t, func(port int) []string {
		conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s/tmp;
  proxy_temp_path %[1]s/tmp;
  fastcgi_temp_path %[1]s/tmp;
  uwsgi_temp_path %[1]s/tmp;
  scgi_temp_path %[1]s/tmp;
  client_max_body_size 1g;
  server {
    listen 127.0.0.1:%[2]d;
    root %[3]s;
    location / {
      %[4]s
    }
  }
}
`, dir, port, s.Root, location)
		name := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(name, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{bin, "-p", dir, "-c", name, "-e", filepath.Join(dir, "error.log")}
	})
	s.URL = "http://" + s.Addr
	return s
}

// StartRedis starts redis-server without persistence; args are extra
// options ("--requirepass", "secret").
func StartRedis(t testing.TB, args ...string) *Server {
	t.Helper()
	bin := Need(t, "redis-server")
	dir := t.TempDir()
	s := &Server{Dir: dir}
	s.start(t, func(port int) []string {
		return append([]string{bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", dir, "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"), "--pidfile", filepath.Join(dir, "redis.pid")}, args...)
	})
	s.URL = "redis://" + s.Addr
	return s
}

// start picks a free port, runs the command argv makes for it, and waits
// until the port accepts connections (a few tries: another process may
// take the port between the pick and the bind).
func (s *Server) start(t testing.TB, argv func(port int) []string) {
	t.Helper()
	var lastErr error
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		var out runner.Output
		var runErr error
		cmd := runner.Cmd{Argv: argv(port)}
		go func() {
			out, runErr = (&runner.ExecRunner{}).Run(ctx, cmd)
			close(done)
		}()
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if waitPort(addr, done) {
			s.Addr, s.stop, s.done = addr, stop, done
			t.Cleanup(s.Kill)
			return
		}
		stop()
		<-done
		lastErr = fmt.Errorf("%s did not start (%v): %s%s%s", filepath.Base(cmd.Argv[0]), runErr, out.Stdout, out.Stderr, s.logs())
	}
	t.Fatal(lastErr)
}

func waitPort(addr string, exited chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func (s *Server) logs() string {
	var b strings.Builder
	for _, n := range []string{"error.log", "redis.log"} {
		if d, err := os.ReadFile(filepath.Join(s.Dir, n)); err == nil {
			b.Write(d)
		}
	}
	return b.String()
}

// Kill sends SIGKILL to the server (and anything it started: the Runner
// kills the process group on cancel) and waits for it to exit: a server
// that dies mid-build.
func (s *Server) Kill() {
	if s.stop == nil {
		return
	}
	s.stop()
	<-s.done
}

// Pid is the server's process ID, from its pid file (to SIGSTOP it: a
// hung server).
func (s *Server) Pid(t testing.TB) int {
	t.Helper()
	for _, n := range []string{"nginx.pid", "redis.pid"} {
		if b, err := os.ReadFile(filepath.Join(s.Dir, n)); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			return pid
		}
	}
	t.Fatal("no pid file")
	return 0
}

// Files lists the files the nginx server stores, relative to Root.
func (s *Server) Files(t testing.TB) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(s.Root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			rel, _ := filepath.Rel(s.Root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
