package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/remote/remotetest"
)

// server is a real cache server for a test, with a way to plant bytes
// under a key behind rocmk's back.
type server struct {
	name  string
	srv   *remotetest.Server
	plant func(t *testing.T, key string, data []byte)
}

func startNginx(t testing.TB, location string) server {
	s := remotetest.StartNginx(t, location)
	return server{"nginx", s, func(t *testing.T, key string, data []byte) {
		p := filepath.Join(s.Root, filepath.FromSlash(key))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}}
}

func startRedis(t testing.TB, args ...string) server {
	s := remotetest.StartRedis(t, args...)
	return server{"redis", s, func(t *testing.T, key string, data []byte) {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: redisPassword(args)})
		defer c.Close()
		require.NoError(t, c.Set(context.Background(), DefaultPrefix+key, data, 0).Err())
	}}
}

func redisPassword(args []string) string {
	for i, a := range args {
		if a == "--requirepass" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// servers starts one of each kind.
func servers(t *testing.T) []server {
	return []server{startNginx(t, remotetest.DAVLocation), startRedis(t)}
}

// warnings collects a Tier's warnings.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) { w.mu.Lock(); w.msgs = append(w.msgs, m); w.mu.Unlock() }
func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// machine is one machine's local cache with a Tier in front of it.
type machine struct {
	*Tier
	warn *warnings
}

func newMachine(t *testing.T, url string, edit func(*Config), env map[string]string) machine {
	t.Helper()
	local, err := cache.Open(t.TempDir())
	require.NoError(t, err)
	cfg, err := Resolve(url, "", Settings{}, envOf(env))
	require.NoError(t, err)
	cfg.Timeout = 3 * time.Second
	if edit != nil {
		edit(cfg)
	}
	w := &warnings{}
	tier, err := Open(local, cfg, Options{Warn: w.add})
	require.NoError(t, err)
	t.Cleanup(func() { tier.Close(context.Background()) })
	return machine{tier, w}
}

// newWriter is a machine told to upload (read-write): the default is
// read-only.
func newWriter(t *testing.T, url string, edit func(*Config), env map[string]string) machine {
	t.Helper()
	return newMachine(t, url, func(c *Config) {
		c.Mode = ReadWrite
		if edit != nil {
			edit(c)
		}
	}, env)
}

// entry is one stored output.
type entry struct {
	id   cache.ActionID
	data []byte
	meta cache.Meta
}

func entries(n int, kind string) []entry {
	var out []entry
	for i := range n {
		data := bytes.Repeat([]byte(fmt.Sprintf("%s object %d\n", kind, i)), 200+i)
		out = append(out, entry{cache.ActionID(sha256.Sum256([]byte(fmt.Sprint(kind, i)))), data,
			cache.Meta{Kind: kind, Source: fmt.Sprintf("k%d.hip", i), Target: "gfx90a", Toolchain: "clang 15", ROCm: "5.2.3"}})
	}
	return out
}

// fill stores es through a machine's tier and flushes the uploads.
func fill(t *testing.T, m machine, es []entry) {
	t.Helper()
	for _, e := range es {
		_, err := m.PutBytes(e.id, e.data, e.meta)
		require.NoError(t, err)
	}
	require.NoError(t, m.Close(context.Background()))
}

// Machine A fills the server; machine B, with an empty local cache, gets
// every entry from it, verified and stored locally with its Meta.
func TestMachineAToB(t *testing.T) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			a := newWriter(t, s.srv.URL, nil, nil)
			objs, deps := entries(3, "object"), entries(3, "deps")
			fill(t, a, append(append([]entry{}, deps...), objs...))
			_, err := a.PutBytes(cache.ActionID{1}, []byte("toolchain id"), cache.Meta{Kind: "toolchain-id"})
			require.NoError(t, err)
			assert.Equal(t, int64(6), a.Counters().Uploads)
			assert.Empty(t, a.warn.list())

			b := newMachine(t, s.srv.URL, nil, nil)
			for _, e := range append(deps, objs...) {
				data, got, err := b.GetBytes(e.id)
				require.NoError(t, err)
				assert.Equal(t, e.data, data)
				assert.Equal(t, e.meta, got.Meta)
				assert.True(t, got.Remote, "fetched from the server")
				ld, le, err := b.Local().GetBytes(e.id)
				require.NoError(t, err, "a remote hit is stored locally")
				assert.Equal(t, e.data, ld)
				assert.Equal(t, e.meta, le.Meta)
			}
			_, _, err = b.GetBytes(cache.ActionID{1})
			assert.ErrorIs(t, err, cache.ErrNotFound, "toolchain IDs stay on their machine")
			c := b.Counters()
			assert.Equal(t, int64(6), c.Hits)
			assert.Equal(t, int64(1), c.Misses)
			assert.Zero(t, c.Errors)
			assert.Greater(t, c.BytesDown, int64(6*200*len("object 0\n")))

			sum := sha256.Sum256(objs[0].data)
			_, le, err := b.GetBytes(objs[0].id)
			require.NoError(t, err)
			assert.False(t, le.Remote, "a local hit is not a remote one")
			assert.Empty(t, b.warn.list())

			if s.name == "nginx" {
				files := s.srv.Files(t)
				assert.Contains(t, files, "ac/"+objs[0].id.String())
				assert.Contains(t, files, "cas/"+fmt.Sprintf("%x", sum))
				assert.Len(t, files, 12, "6 records, 6 outputs, no toolchain ID")
			}
		})
	}
}

func TestModes(t *testing.T) {
	s := startRedis(t)
	es := entries(2, "object")
	ro := newMachine(t, s.srv.URL, func(c *Config) { c.Mode = ReadOnly }, nil)
	fill(t, ro, es)
	assert.Zero(t, ro.Counters().Uploads)
	def := newMachine(t, s.srv.URL, nil, nil)
	assert.Equal(t, ReadOnly, def.Config().Mode, "read-only unless told to write")
	assert.Empty(t, def.Config().ModeFrom)
	fill(t, def, es)
	assert.Zero(t, def.Counters().Uploads)
	probe := newMachine(t, s.srv.URL, nil, nil)
	_, _, err := probe.GetBytes(es[0].id)
	assert.ErrorIs(t, err, cache.ErrNotFound, "read-only uploads nothing")

	wo := newMachine(t, s.srv.URL, func(c *Config) { c.Mode = WriteOnly }, nil)
	fill(t, wo, es)
	assert.Equal(t, int64(2), wo.Counters().Uploads)
	wo2 := newMachine(t, s.srv.URL, func(c *Config) { c.Mode = WriteOnly }, nil)
	_, _, err = wo2.GetBytes(es[0].id)
	assert.ErrorIs(t, err, cache.ErrNotFound, "write-only never looks up")
	assert.Zero(t, wo2.Counters().Hits+wo2.Counters().Misses)

	rd := newMachine(t, s.srv.URL, func(c *Config) { c.Mode = ReadOnly }, nil)
	data, _, err := rd.GetBytes(es[1].id)
	require.NoError(t, err)
	assert.Equal(t, es[1].data, data)
}

func TestMaxSize(t *testing.T) {
	s := startNginx(t, remotetest.DAVLocation)
	es := entries(2, "object")
	a := newWriter(t, s.srv.URL, func(c *Config) { c.MaxSize = int64(len(es[0].data)) }, nil)
	fill(t, a, es) // es[1] is one line longer
	assert.Equal(t, int64(1), a.Counters().Uploads)
	b := newMachine(t, s.srv.URL, nil, nil)
	_, _, err := b.GetBytes(es[1].id)
	assert.ErrorIs(t, err, cache.ErrNotFound)
	// A record over the reader's limit is a miss, not a download.
	small := newMachine(t, s.srv.URL, func(c *Config) { c.MaxSize = 10 }, nil)
	_, _, err = small.GetBytes(es[0].id)
	assert.ErrorIs(t, err, cache.ErrNotFound)
	assert.Zero(t, small.Counters().Errors)
}

// assertMissNothingStored checks the fault contract: the lookup was a miss,
// nothing was stored locally, and exactly one warning names the failure.
func assertMissNothingStored(t *testing.T, m machine, id cache.ActionID) {
	t.Helper()
	assertMissNothingStoredFor(t, m, id)
	ents, err := m.Local().List()
	require.NoError(t, err)
	assert.Empty(t, ents)
}

func assertOneWarning(t *testing.T, m machine, want string) {
	t.Helper()
	w := m.warn.list()
	if assert.Len(t, w, 1) {
		assert.Contains(t, w[0], want)
		assert.Contains(t, w[0], "127.0.0.1")
	}
}

// Bodies planted through the server's files or Redis: short, corrupt,
// a garbage record. Each is a miss, nothing is stored, one warning says why.
func TestFaultPlantedBodies(t *testing.T) {
	for _, s := range servers(t) {
		e := entries(1, "object")[0]
		out := fmt.Sprintf("%x", sha256.Sum256(e.data))
		for _, tc := range []struct {
			name, key string
			data      []byte
			want      string
		}{
			{"truncated", "cas/" + out, e.data[:len(e.data)/2], "short body"},
			{"wrong content", "cas/" + out, append([]byte("X"), e.data[1:]...), "does not match its sha256"},
			{"garbage record", "ac/" + e.id.String(), []byte("<html>oops</html>"), "bad action record"},
			{"record of another action", "ac/" + e.id.String(), record{Action: cache.ActionID{9}, Output: cache.OutputID(sha256.Sum256(e.data)), Size: int64(len(e.data))}.marshal(), "names another action"},
			{"empty body", "cas/" + out, []byte{}, map[string]string{"nginx": "short body: 0 of"}[s.name]},
			{"too long", "cas/" + out, append(append([]byte{}, e.data...), 'x'), "more than"},
		} {
			t.Run(s.name+"/"+tc.name, func(t *testing.T) {
				fill(t, newWriter(t, s.srv.URL, nil, nil), []entry{e})
				s.plant(t, tc.key, tc.data)
				b := newMachine(t, s.srv.URL, nil, nil)
				assertMissNothingStored(t, b, e.id)
				if tc.want == "" { // Redis: an empty value reads as no value, a plain miss
					assert.Empty(t, b.warn.list())
					return
				}
				assertOneWarning(t, b, tc.want)
				assert.Equal(t, int64(1), b.Counters().Errors)
				assertMissNothingStored(t, b, e.id) // again: still one warning
				assert.Len(t, b.warn.list(), 1)
			})
		}
	}
}

// cutProxy forwards to addr but cuts every response after half its bytes:
// a body short of its Content-Length, as from a server that dies mid-answer.
func cutProxy(t *testing.T, addr string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { buf := make([]byte, 64<<10); n, _ := c.Read(buf); up.Write(buf[:n]) }()
				var resp bytes.Buffer
				up.SetReadDeadline(time.Now().Add(2 * time.Second))
				buf := make([]byte, 64<<10)
				for {
					n, err := up.Read(buf)
					resp.Write(buf[:n])
					if err != nil {
						break
					}
				}
				c.Write(resp.Bytes()[:resp.Len()*2/3])
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

func TestFaultBodyCutOnTheWire(t *testing.T) {
	s := startNginx(t, remotetest.DAVLocation+"\n      keepalive_timeout 0;")
	e := entries(1, "object")[0]
	e.data = bytes.Repeat(e.data, 20)
	fill(t, newWriter(t, s.srv.URL, nil, nil), []entry{e})
	b := newMachine(t, cutProxy(t, s.srv.Addr), nil, nil)
	assertMissNothingStored(t, b, e.id)
	assertOneWarning(t, b, "body cut short")
	assert.Contains(t, b.warn.list()[0], "unexpected EOF")
}

func TestFaultStatus500(t *testing.T) {
	s := startNginx(t, "return 500;")
	m := newWriter(t, s.srv.URL, nil, nil)
	e := entries(1, "object")[0]
	assertMissNothingStored(t, m, e.id)
	assertOneWarning(t, m, "HTTP 500 Internal Server Error")
	_, err := m.PutBytes(e.id, e.data, e.meta)
	require.NoError(t, err, "a failed upload never fails the store")
	require.NoError(t, m.Close(context.Background()))
	assert.Len(t, m.warn.list(), 1)
	assert.Equal(t, int64(2), m.Counters().Errors)
	_, _, err = m.Local().GetBytes(e.id)
	assert.NoError(t, err)
}

// Basic auth against nginx's auth_basic, a bearer token against a header
// check: the right credentials work, missing or wrong ones are a 401 with
// one warning that never shows them.
func TestAuthHTTP(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	require.NoError(t, os.WriteFile(users, []byte("ci:{PLAIN}s3cret-pw\n"), 0o644))
	basic := startNginx(t, remotetest.DAVLocation+"\n      auth_basic cache;\n      auth_basic_user_file "+users+";")
	bearer := startNginx(t, remotetest.DAVLocation+"\n      if ($http_authorization != \"Bearer t0ken-value\") { return 401; }")
	e := entries(1, "object")[0]
	for _, tc := range []struct {
		name string
		srv  server
		good map[string]string
		bad  map[string]string
	}{
		{"basic", basic, map[string]string{EnvUser: "ci", EnvPassword: "s3cret-pw"}, map[string]string{EnvUser: "ci", EnvPassword: "wrong-pw"}},
		{"bearer", bearer, map[string]string{EnvToken: "t0ken-value"}, map[string]string{EnvToken: "wrong-t0ken"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, env := range []map[string]string{nil, tc.bad} {
				m := newMachine(t, tc.srv.srv.URL, nil, env)
				assertMissNothingStored(t, m, e.id)
				assertOneWarning(t, m, "HTTP 401 Unauthorized")
				for _, secret := range []string{"s3cret-pw", "wrong-pw", "t0ken-value", "wrong-t0ken"} {
					assert.NotContains(t, m.warn.list()[0], secret)
				}
			}
			fill(t, newWriter(t, tc.srv.srv.URL, nil, tc.good), []entry{e})
			m := newMachine(t, tc.srv.srv.URL, nil, tc.good)
			data, _, err := m.GetBytes(e.id)
			require.NoError(t, err)
			assert.Equal(t, e.data, data)
			assert.Empty(t, m.warn.list())
		})
	}
}

func TestAuthRedis(t *testing.T) {
	s := startRedis(t, "--requirepass", "s3cret-pw")
	e := entries(1, "object")[0]
	for _, env := range []map[string]string{nil, {EnvPassword: "wrong-pw"}} {
		m := newMachine(t, s.srv.URL, nil, env)
		assertMissNothingStored(t, m, e.id)
		w := m.warn.list()
		require.Len(t, w, 1)
		assert.Regexp(t, "NOAUTH|WRONGPASS", w[0])
		assert.Contains(t, w[0], EnvPassword)
		assert.NotContains(t, w[0], "s3cret-pw")
		assert.NotContains(t, w[0], "wrong-pw")
	}
	good := map[string]string{EnvPassword: "s3cret-pw"}
	fill(t, newWriter(t, s.srv.URL, nil, good), []entry{e})
	data, _, err := newMachine(t, s.srv.URL, nil, good).GetBytes(e.id)
	require.NoError(t, err)
	assert.Equal(t, e.data, data)
}

// A server SIGKILLed while lookups and stores run: every lookup returns the
// right bytes or a miss, one warning names the failure, and the circuit
// breaker stops asking after breakerTrips failures.
func TestFaultServerKilledMidRun(t *testing.T) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			es := entries(40, "object")
			fill(t, newWriter(t, s.srv.URL, nil, nil), es)
			b := newWriter(t, s.srv.URL, nil, nil)
			var wg sync.WaitGroup
			killed := make(chan struct{})
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; i < len(es); i += 4 {
						if i == 12 {
							s.srv.Kill()
							close(killed)
						}
						data, _, err := b.GetBytes(es[i].id)
						if err == nil {
							assert.Equal(t, es[i].data, data, "never a wrong byte")
						} else {
							assert.ErrorIs(t, err, cache.ErrNotFound)
						}
						_, err = b.PutBytes(cache.ActionID(sha256.Sum256(es[i].data)), es[i].data, es[i].meta)
						assert.NoError(t, err)
					}
				}()
			}
			wg.Wait()
			<-killed
			t0 := time.Now()
			for _, e := range es {
				b.GetBytes(e.id)
			}
			assert.Less(t, time.Since(t0), 2*time.Second, "the open breaker does not ask the dead server")
			require.NoError(t, b.Close(context.Background()))
			w := b.warn.list()
			require.Len(t, w, 1, "one warning")
			assert.Regexp(t, "connection refused|connection reset|EOF|broken pipe|server closed idle connection", w[0]) // whichever the kill meets
			// At most the trips and the requests already in flight when the
			// breaker opened (4 lookups, 2 uploads).
			assert.LessOrEqual(t, b.Counters().Errors, int64(breakerTrips+6))
			assert.Greater(t, b.Counters().Hits, int64(0))
		})
	}
}

// A hung server (SIGSTOP: connections accepted, never answered) costs one
// timeout, then the tier never asks it again in this run, even after
// RetryAfter and with the server back (SIGCONT). Close gives up on uploads
// after FlushTimeout.
func TestFaultHungServerBreakerAndFlushDeadline(t *testing.T) {
	s := startNginx(t, remotetest.DAVLocation)
	es := entries(8, "object")
	fill(t, newWriter(t, s.srv.URL, nil, nil), es)
	b := newMachine(t, s.srv.URL, func(c *Config) {
		c.Timeout, c.RetryAfter, c.FlushTimeout = 300*time.Millisecond, 100*time.Millisecond, 500*time.Millisecond
	}, nil)
	pid := s.srv.Pid(t)
	require.NoError(t, signal(pid, "STOP"))
	stopped := true
	defer func() {
		if stopped {
			signal(pid, "CONT")
		}
	}()
	t0 := time.Now()
	for _, e := range es[:6] {
		_, _, err := b.GetBytes(e.id)
		assert.ErrorIs(t, err, cache.ErrNotFound)
	}
	assert.Less(t, time.Since(t0), 2*300*time.Millisecond, "one timeout, then the breaker answers")
	assert.Equal(t, int64(1), b.Counters().Errors)
	assertOneWarning(t, b, "no answer within 300ms (remote timeout)")

	require.NoError(t, signal(pid, "CONT"))
	stopped = false
	time.Sleep(200 * time.Millisecond)
	_, _, err := b.GetBytes(es[7].id)
	assert.ErrorIs(t, err, cache.ErrNotFound, "after a timeout the server is not asked again in this run")
	assert.Zero(t, b.Counters().Hits)

	// Uploads to a hung server are abandoned at the flush deadline.
	c := newWriter(t, s.srv.URL, func(c *Config) { c.Timeout, c.FlushTimeout = 10*time.Second, 300*time.Millisecond }, nil)
	require.NoError(t, signal(pid, "STOP"))
	stopped = true
	for _, e := range es[:3] {
		_, err = c.PutBytes(cache.ActionID(sha256.Sum256(e.id[:])), e.data, e.meta)
		require.NoError(t, err)
	}
	t0 = time.Now()
	assert.ErrorContains(t, c.Close(context.Background()), "3 uploads abandoned after 300ms")
	assert.Less(t, time.Since(t0), 2*time.Second)
	assert.Zero(t, c.Counters().Errors, "abandoned uploads are not server errors")
	assert.Empty(t, c.warn.list())
}

func TestPush(t *testing.T) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			a := newWriter(t, s.srv.URL, nil, nil)
			es := append(entries(5, "object"), entries(5, "deps")...)
			for _, e := range es {
				_, err := a.Local().PutBytes(e.id, e.data, e.meta)
				require.NoError(t, err)
			}
			_, err := a.Local().PutBytes(cache.ActionID{3}, []byte("id"), cache.Meta{Kind: "toolchain-id"})
			require.NoError(t, err)
			rep, err := a.Push(context.Background(), 3, nil)
			require.NoError(t, err)
			assert.Equal(t, 10, rep.Entries)
			assert.Equal(t, 10, rep.Uploaded)
			rep, err = a.Push(context.Background(), 3, nil)
			require.NoError(t, err)
			assert.Equal(t, 10, rep.Present)
			assert.Zero(t, rep.Uploaded)

			b := newMachine(t, s.srv.URL, nil, nil)
			for _, e := range es {
				data, _, err := b.GetBytes(e.id)
				require.NoError(t, err)
				assert.Equal(t, e.data, data)
			}
			ro := newMachine(t, s.srv.URL, func(c *Config) { c.Mode = ReadOnly }, nil)
			_, err = ro.Push(context.Background(), 1, nil)
			assert.ErrorIs(t, err, ErrReadOnly)
		})
	}
}

func TestPushToDeadServer(t *testing.T) {
	s := startNginx(t, remotetest.DAVLocation)
	a := newWriter(t, s.srv.URL, nil, nil)
	for _, e := range entries(20, "object") {
		_, err := a.Local().PutBytes(e.id, e.data, e.meta)
		require.NoError(t, err)
	}
	s.srv.Kill()
	rep, err := a.Push(context.Background(), 2, nil)
	assert.ErrorContains(t, err, "20 of 20 uploads failed")
	assert.ErrorContains(t, err, "connection refused")
	assert.Equal(t, 20, rep.Failed)
	assert.LessOrEqual(t, a.Counters().Errors, int64(breakerTrips+1))
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	require.NoError(t, os.WriteFile(users, []byte("ci:{PLAIN}pw\n"), 0o644))
	ok := startNginx(t, remotetest.DAVLocation)
	auth := startNginx(t, remotetest.DAVLocation+"\n      auth_basic cache;\n      auth_basic_user_file "+users+";")
	readOnly := startNginx(t, "limit_except GET HEAD { deny all; }")
	rds := startRedis(t)
	dead := startRedis(t)
	dead.srv.Kill()
	cfg := func(url string) *Config {
		c, err := Resolve(url, "read-write", Settings{}, envOf(nil))
		require.NoError(t, err)
		return c
	}
	for _, s := range []server{ok, rds} {
		r := Check(context.Background(), cfg(s.srv.URL))
		assert.True(t, r.Reachable && r.Authorized, "%+v", r)
		require.NotNil(t, r.Writable)
		assert.True(t, *r.Writable)
		assert.Greater(t, r.RTTms, 0.0)
		assert.Empty(t, r.Error)
	}
	r := Check(context.Background(), cfg(auth.srv.URL))
	assert.True(t, r.Reachable)
	assert.False(t, r.Authorized)
	assert.Contains(t, r.Error, "401")
	r = Check(context.Background(), cfg(readOnly.srv.URL))
	assert.True(t, r.Authorized)
	require.NotNil(t, r.Writable)
	assert.False(t, *r.Writable)
	assert.Contains(t, r.Error, "403")
	r = Check(context.Background(), cfg(dead.srv.URL))
	assert.False(t, r.Reachable)
	assert.Contains(t, r.Error, "connection refused")
}

// silentServer accepts connections and never answers; it counts them.
func silentServer(t *testing.T) (string, *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns atomic.Int64
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	return l.Addr().String(), &conns
}

// A server that accepts connections and never answers costs one timeout in
// a run, not one per request: a 1-job build looks up its deps entry, its
// group, uploads its object and looks the deps entry up again (33 s of
// timeouts for 0.6 s of compile before the fix). RetryAfter passes in
// between: no probe either.
func TestHungServerCostsOneTimeout(t *testing.T) {
	for _, scheme := range []string{"http", "redis"} {
		t.Run(scheme, func(t *testing.T) {
			addr, conns := silentServer(t)
			const timeout = 500 * time.Millisecond
			m := newWriter(t, scheme+"://"+addr, func(c *Config) { c.Timeout, c.RetryAfter = timeout, 50*time.Millisecond }, nil)
			deps, group, obj := entries(1, "deps")[0], entries(2, "deps")[1], entries(1, "object")[0]
			t0 := time.Now()
			assertMissNothingStored(t, m, deps.id)
			_, _, err := m.GetBytes(group.id)
			assert.ErrorIs(t, err, cache.ErrNotFound)
			_, err = m.PutBytes(obj.id, obj.data, obj.meta)
			require.NoError(t, err)
			time.Sleep(100 * time.Millisecond) // past RetryAfter
			_, _, err = m.GetBytes(deps.id)
			assert.ErrorIs(t, err, cache.ErrNotFound)
			require.NoError(t, m.Close(context.Background()))
			elapsed := time.Since(t0)
			t.Logf("%s: %v, %d connections", scheme, elapsed, conns.Load())
			assert.Equal(t, int64(1), m.Counters().Errors, "one timeout")
			assert.Less(t, elapsed, 2*timeout+100*time.Millisecond, "one timeout's wait")
			assert.Equal(t, int64(1), conns.Load(), "one connection, then none")
			assertOneWarning(t, m, "no answer within 500ms (remote timeout)")
		})
	}
}

// Failures that are answers (HTTP 500) open the breaker after breakerTrips
// in a row; after RetryAfter one request probes the server and finds it back.
func TestBreakerProbesAfterRetryAfter(t *testing.T) {
	var failing atomic.Bool
	var requests atomic.Int64
	failing.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	m := newMachine(t, srv.URL, func(c *Config) { c.RetryAfter = 200 * time.Millisecond }, nil)
	es := entries(6, "object")
	for _, e := range es {
		m.GetBytes(e.id)
	}
	assert.Equal(t, int64(breakerTrips), requests.Load(), "the open breaker does not ask")
	assert.Equal(t, int64(breakerTrips), m.Counters().Errors)
	failing.Store(false)
	time.Sleep(300 * time.Millisecond)
	_, _, err := m.GetBytes(es[0].id)
	assert.ErrorIs(t, err, cache.ErrNotFound)
	assert.Equal(t, int64(breakerTrips+1), requests.Load(), "one probe")
	assert.Equal(t, int64(1), m.Counters().Misses, "the probe was answered")
}
