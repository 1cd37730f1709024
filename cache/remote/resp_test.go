package remote

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
)

// fakeRedis is a TCP server that speaks just enough RESP for go-redis: it
// refuses HELLO (so the client falls back to RESP2) unless hello is set,
// answers GET and GETRANGE with getrange, and everything else with +OK. A
// reply function writes raw bytes and may stream until the client hangs up.
func fakeRedis(t *testing.T, hello, getrange func(w io.Writer)) string {
	t.Helper()
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
				rd := bufio.NewReader(c)
				for {
					args, err := readCommand(rd)
					if err != nil {
						return
					}
					switch cmd := strings.ToUpper(args[0]); {
					case cmd == "HELLO" && hello != nil:
						hello(c)
					case cmd == "HELLO":
						io.WriteString(c, "-ERR unknown command 'HELLO'\r\n")
					case cmd == "GET" || cmd == "GETRANGE":
						getrange(c)
					default:
						io.WriteString(c, "+OK\r\n")
					}
				}
			}()
		}
	}()
	return "redis://" + l.Addr().String()
}

// readCommand reads one client command: an array of bulk strings.
func readCommand(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "*") {
		return nil, io.ErrUnexpectedEOF
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	var args []string
	for range n {
		if line, err = rd.ReadString('\n'); err != nil {
			return nil, err
		}
		size, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		b := make([]byte, size+2)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		args = append(args, string(b[:size]))
	}
	if len(args) == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	return args, nil
}

// reply writes s once.
func reply(s string) func(io.Writer) {
	return func(w io.Writer) { io.WriteString(w, s) }
}

// endless writes head, then chunk over and over until the client hangs up
// (the same buffer each time: the server allocates nothing per write).
func endless(head, chunk string) func(io.Writer) {
	return func(w io.Writer) {
		if _, err := io.WriteString(w, head); err != nil {
			return
		}
		b := bytes.Repeat([]byte(chunk), 64<<10/len(chunk))
		for sent := 0; sent < 1<<30; sent += len(b) {
			if _, err := w.Write(b); err != nil {
				return
			}
		}
	}
}

// bigStrings writes an array of 1000 strings of n bytes each.
func bigStrings(n int) func(io.Writer) {
	return func(w io.Writer) {
		data := make([]byte, n+2)
		if _, err := io.WriteString(w, "*1000\r\n"); err != nil {
			return
		}
		for range 1000 {
			if _, err := fmt.Fprintf(w, "$%d\r\n", n); err != nil {
				return
			}
			if _, err := w.Write(data); err != nil {
				return
			}
		}
	}
}

// A Redis server that lies about lengths (go-redis allocates what a reply
// announces before reading it: `$4611686018427387904` was a makeslice panic,
// `$100000000000` a fatal out of memory), sends an endless line or nests
// arrays without end costs a miss and one warning, within bounded memory.
func TestRedisLyingServer(t *testing.T) {
	for _, tc := range []struct {
		name            string
		hello, getrange func(io.Writer)
		want            string
		maxSize         int64 // 0: the default, 64 MiB
	}{
		{name: "huge length", getrange: reply("$4611686018427387904\r\n"), want: "more than"},
		{name: "100 GB length", getrange: reply("$100000000000\r\n"), want: "more than"},
		{name: "negative length", getrange: reply("$-5\r\n"), want: "bad length"},
		{name: "non-numeric length", getrange: reply("$12abc\r\n"), want: "bad length"},
		{name: "empty length", getrange: reply("$\r\n"), want: "bad length"},
		{name: "huge array", getrange: reply("*4611686018427387904\r\n"), want: "more than"},
		{name: "huge array in HELLO", hello: reply("*4611686018427387904\r\n"), want: "more than"},
		{name: "huge map in HELLO", hello: reply("%4611686018427387904\r\n"), want: "more than"},
		{name: "huge set in HELLO", hello: reply("~100000000000\r\n"), want: "more than"},
		{name: "huge push in HELLO", hello: reply(">100000000000\r\n"), want: "more than"},
		{name: "huge verbatim string", getrange: reply("=100000000000\r\n"), want: "more than"},
		{name: "huge blob error", getrange: reply("!100000000000\r\n"), want: "more than"},
		// strings each under the size limit, more than it together: at most
		// the limit is allocated
		{name: "many big strings", hello: bigStrings(3 << 20), want: "more than", maxSize: 8 << 20},
		{name: "many arrays", hello: endless("*4000\r\n", "*4\r\n:1\r\n:1\r\n:1\r\n:1\r\n"), want: "more than"},
		{name: "endless nesting", hello: endless("", "*1\r\n"), want: "nested deeper"},
		{name: "endless line", getrange: endless("+", "AAAAAAAA"), want: "line longer"},
		{name: "unknown type", getrange: reply("@5\r\n"), want: "unknown reply type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.getrange == nil {
				tc.getrange = reply("$0\r\n\r\n")
			}
			url := fakeRedis(t, tc.hello, tc.getrange)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			m := newMachine(t, url, func(c *Config) {
				c.Timeout = 5 * time.Second
				if tc.maxSize > 0 {
					c.MaxSize = tc.maxSize
				}
			}, nil)
			t0 := time.Now()
			e := entries(1, "object")[0]
			assertMissNothingStored(t, m, e.id)
			require.NoError(t, m.Close(context.Background()))
			runtime.ReadMemStats(&after)
			assert.Less(t, time.Since(t0), 4*time.Second, "refused at once, not at the timeout")
			assertOneWarning(t, m, tc.want)
			assert.Equal(t, int64(1), m.Counters().Errors)
			grown := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %.1f MiB; %s", float64(grown)/(1<<20), m.warn.list())
			assert.Less(t, grown, uint64(64<<20), "memory stays bounded")
			assert.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(64<<20))
		})
	}
}

// The guard passes what a real server says: every reply type, nil
// strings and arrays, attributes, and strings split across reads.
func TestRESPGuardPassesValidReplies(t *testing.T) {
	stream := "+OK\r\n-ERR x\r\n:12\r\n_\r\n,1.5\r\n#t\r\n(123\r\n$-1\r\n*-1\r\n$0\r\n\r\n" +
		"$5\r\nhe\nlo\r\n=7\r\ntxt:abc\r\n!3\r\nERR\r\n*2\r\n$1\r\na\r\n*1\r\n:1\r\n" +
		"%2\r\n+a\r\n:1\r\n+b\r\n~1\r\n+x\r\n|1\r\n+k\r\n+v\r\n$2\r\nok\r\n>2\r\n+p\r\n+q\r\n*0\r\n%0\r\n"
	for _, step := range []int{1, 2, 3, 7, len(stream)} {
		g := &respGuard{maxBulk: 16}
		for i := 0; i < len(stream); i += step {
			require.NoError(t, g.feed([]byte(stream[i:min(i+step, len(stream))])), "step %d at %d", step, i)
		}
		assert.Empty(t, g.stack, "step %d: every aggregate closed", step)
		assert.Zero(t, g.skip)
	}
	// The string budget is per reply: a second reply of the full size passes.
	g := &respGuard{maxBulk: 4}
	require.NoError(t, g.feed([]byte("$4\r\nabcd\r\n$4\r\nabcd\r\n")))
	assert.ErrorContains(t, g.feed([]byte("*2\r\n$4\r\nabcd\r\n$1\r\n")), "more than 4 bytes")
}

// A guarded TCP connection keeps SyscallConn: go-redis's pool peeks at an
// idle connection's socket through it to drop connections the server closed.
func TestRESPGuardKeepsSyscallConn(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, ok := guardRESP(c, 1).(syscall.Conn)
	assert.True(t, ok)
}

// The real Redis server through the guard: a 1 MiB object travels both
// ways with a size limit just above it.
func TestRESPGuardRealRedis(t *testing.T) {
	s := startRedis(t)
	e := entries(1, "object")[0]
	e.data = bytes.Repeat([]byte("x"), 1<<20)
	limit := func(c *Config) { c.MaxSize = 1 << 20 }
	fill(t, newWriter(t, s.srv.URL, limit, nil), []entry{e})
	b := newMachine(t, s.srv.URL, limit, nil)
	data, _, err := b.GetBytes(e.id)
	require.NoError(t, err)
	assert.Equal(t, e.data, data)
	_, _, err = b.GetBytes(cache.ActionID{7})
	assert.ErrorIs(t, err, cache.ErrNotFound)
	assert.Empty(t, b.warn.list())
}
