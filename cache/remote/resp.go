package remote

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// Bounds of one Redis reply, besides its strings (respGuard.maxBulk). Ours
// are one string or a HELLO map of a few dozen values: these are generous.
const (
	respMaxElems = 4096     // values in all the reply's arrays, maps, sets
	respMaxDepth = 16       // aggregates inside aggregates
	respMaxLine  = 64 << 10 // a line: a status, an error, a length
)

// respGuard is a net.Conn that checks the Redis replies (RESP2 and RESP3)
// passing through it before go-redis sees them. go-redis allocates what a
// reply announces before reading it: a server that lies about a length
// ($4611686018427387904) panics it, $100000000000 is an out-of-memory crash
// that no recover catches, and an endless line or endless nesting exhausts
// memory or the stack. So each reply may carry at most maxBulk bytes of
// strings, respMaxElems values, respMaxDepth levels and lines of
// respMaxLine bytes; a read that would pass more fails, and go-redis drops
// the connection. Only the headers are parsed; string bytes are counted.
type respGuard struct {
	net.Conn
	maxBulk int64 // the largest blob rocmk reads, plus one (GETRANGE's probe byte)

	err   error      // sticky: the stream is out of step once refused
	line  []byte     // the line read so far
	skip  int64      // bytes of a string and its CRLF still to pass
	stack []respAggr // the aggregates open in the current reply
	bulk  int64      // string bytes of the current reply
	elems int64      // values announced by the current reply's aggregates
}

type respAggr struct {
	left int64 // values still to come
	attr bool  // an attribute: decorates the value after it, is not one
}

// guardRESP wraps c. A plain TCP connection keeps its SyscallConn, which
// go-redis's pool uses to see that an idle connection was closed.
func guardRESP(c net.Conn, maxBulk int64) net.Conn {
	g := &respGuard{Conn: c, maxBulk: maxBulk}
	if _, ok := c.(syscall.Conn); ok {
		return respGuardSys{g}
	}
	return g
}

type respGuardSys struct{ *respGuard }

func (g respGuardSys) SyscallConn() (syscall.RawConn, error) {
	return g.Conn.(syscall.Conn).SyscallConn()
}

func (g *respGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.Conn.Read(p)
	if ferr := g.feed(p[:n]); ferr != nil {
		g.err = ferr
		return 0, ferr
	}
	return n, err
}

// feed parses the next bytes of the stream.
func (g *respGuard) feed(b []byte) error {
	for len(b) > 0 {
		if g.skip > 0 {
			n := min(g.skip, int64(len(b)))
			g.skip -= n
			b = b[n:]
			if g.skip == 0 {
				g.value()
			}
			continue
		}
		end := bytes.IndexByte(b, '\n') + 1
		if end == 0 {
			end = len(b)
		}
		if len(g.line)+end > respMaxLine {
			return g.refuse("a line longer than %d bytes", respMaxLine)
		}
		g.line = append(g.line, b[:end]...)
		b = b[end:]
		if g.line[len(g.line)-1] == '\n' {
			err := g.header(g.line)
			g.line = g.line[:0]
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// header checks one complete line.
func (g *respGuard) header(l []byte) error {
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return g.refuse("a line without its type or CRLF")
	}
	l = l[:len(l)-2]
	switch l[0] {
	case '+', '-', ':', '_', ',', '#', '(': // status, error, integer, null, double, boolean, big number
		g.value()
	case '$', '=', '!': // string, verbatim string, blob error: <length>\r\n<bytes>\r\n
		n, err := g.length(l)
		if err != nil {
			return err
		}
		if n < 0 { // nil
			g.value()
			return nil
		}
		if n > g.maxBulk-g.bulk {
			return g.refuse("more than %d bytes of strings in a reply (a string of %d bytes)", g.maxBulk, n)
		}
		g.bulk += n
		g.skip = n + 2
	case '*', '~', '>', '%', '|': // array, set, push; map and attribute (pairs)
		n, err := g.length(l)
		if err != nil {
			return err
		}
		if n < 0 { // nil
			g.value()
			return nil
		}
		if l[0] == '%' || l[0] == '|' {
			n = min(n, respMaxElems) * 2 // a key and a value each (min: no overflow)
		}
		if n > respMaxElems-g.elems {
			return g.refuse("more than %d values in a reply's aggregates (an aggregate of %s)", respMaxElems, l[1:])
		}
		g.elems += n
		switch {
		case n == 0 && l[0] == '|':
		case n == 0:
			g.value()
		case len(g.stack) == respMaxDepth:
			return g.refuse("aggregates nested deeper than %d", respMaxDepth)
		default:
			g.stack = append(g.stack, respAggr{left: n, attr: l[0] == '|'})
		}
	default:
		return g.refuse("unknown reply type %q", l[0])
	}
	return nil
}

// length parses the length of a string or aggregate header: a number, or
// -1 for nil (go-redis reads nothing more for it).
func (g *respGuard) length(l []byte) (int64, error) {
	n, err := strconv.ParseInt(string(l[1:]), 10, 64)
	if err != nil || n < -1 {
		return 0, g.refuse("bad length %.24q", l)
	}
	return n, nil
}

// value records that a value is complete; a complete aggregate is a value
// of the one around it, and a complete top-level value ends the reply.
func (g *respGuard) value() {
	for len(g.stack) > 0 {
		top := &g.stack[len(g.stack)-1]
		if top.left--; top.left > 0 {
			return
		}
		attr := top.attr
		g.stack = g.stack[:len(g.stack)-1]
		if attr {
			return
		}
	}
	g.bulk, g.elems = 0, 0 // the next reply has its own budget
}

func (g *respGuard) refuse(format string, a ...any) error {
	return fmt.Errorf("redis reply refused: "+format, a...)
}
