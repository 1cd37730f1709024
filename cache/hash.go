package cache

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"sync"
)

// debugHook is where NewHash reads ROCMK_DEBUG and writes its log. Tests and
// commands replace it with SetDebugHook.
var debugHook = struct {
	sync.Mutex
	getenv func(string) string
	out    io.Writer
}{getenv: os.Getenv, out: os.Stderr}

// SetDebugHook makes NewHash read ROCMK_DEBUG through getenv
// and log to w, and returns a function that restores the previous hook.
func SetDebugHook(getenv func(string) string, w io.Writer) (restore func()) {
	debugHook.Lock()
	defer debugHook.Unlock()
	oldEnv, oldOut := debugHook.getenv, debugHook.out
	debugHook.getenv, debugHook.out = getenv, w
	return func() {
		debugHook.Lock()
		defer debugHook.Unlock()
		debugHook.getenv, debugHook.out = oldEnv, oldOut
	}
}

// debugWriter returns the log writer if ROCMK_DEBUG contains cachehash=1
// (a comma-separated list, as GODEBUG), else nil.
func debugWriter() io.Writer {
	debugHook.Lock()
	defer debugHook.Unlock()
	for _, f := range strings.Split(debugHook.getenv("ROCMK_DEBUG"), ",") {
		if strings.TrimSpace(f) == "cachehash=1" {
			return lockedWriter{debugHook.out}
		}
	}
	return nil
}

type lockedWriter struct{ w io.Writer }

func (l lockedWriter) Write(b []byte) (int, error) {
	debugHook.Lock()
	defer debugHook.Unlock()
	return l.w.Write(b)
}

// Hash builds an ActionID from labelled writes, as cmd/go's buildActionID
// does: write readable lines ("target gfx90a:xnack+\n", "dep inc/a.h <sha>\n").
// With ROCMK_DEBUG=cachehash=1 every write is logged on stderr as
// HASH[label]: "text", and Sum logs the result, so "why was this a miss?"
// can be answered by diffing two logs.
type Hash struct {
	h     hash.Hash
	label string
	debug io.Writer
}

// NewHash returns a Hash whose input starts with the cache format line
// ("rocmk-cache v1"), so a format change changes every key.
func NewHash(label string) *Hash {
	h := &Hash{h: sha256.New(), label: label, debug: debugWriter()}
	fmt.Fprintf(h, "rocmk-cache v%d\n", Version)
	return h
}

// Write adds b to the hash. It never fails.
func (h *Hash) Write(b []byte) (int, error) {
	if h.debug != nil {
		fmt.Fprintf(h.debug, "HASH[%s]: %q\n", h.label, b)
	}
	return h.h.Write(b)
}

// Line adds one labelled line: fmt.Sprintf(format, a...) and a newline.
func (h *Hash) Line(format string, a ...any) { fmt.Fprintf(h, format+"\n", a...) }

// Sum returns the ActionID of everything written so far.
func (h *Hash) Sum() ActionID {
	var id ActionID
	h.h.Sum(id[:0])
	if h.debug != nil {
		fmt.Fprintf(h.debug, "HASH[%s]: %x\n", h.label, id[:])
	}
	return id
}
