//go:build linux && cgo

package verify

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

static void* rk_dlopen(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static char* rk_dlerror(void) { char* e = dlerror(); return e; }
static void* rk_dlsym(void* h, const char* s) { dlerror(); return dlsym(h, s); }
static int rk_dlclose(void* h) { return dlclose(h); }
// rk_dlpath is the file a symbol was loaded from ("" if unknown).
static const char* rk_dlpath(void* sym) { Dl_info i; if (!dladdr(sym, &i) || !i.dli_fname) return ""; return i.dli_fname; }
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"
)

// library is one dlopen'd shared object.
type library struct {
	name   string
	handle unsafe.Pointer
}

// dlopenFirst tries each name in turn and returns the first that loads, or
// an error naming every name and the loader's message for each.
func dlopenFirst(names []string) (*library, error) {
	var msgs []string
	for _, n := range names {
		cn := C.CString(n)
		h := C.rk_dlopen(cn)
		C.free(unsafe.Pointer(cn))
		if h != nil {
			return &library{name: n, handle: h}, nil
		}
		msg := "not found"
		if e := C.rk_dlerror(); e != nil {
			msg = C.GoString(e)
		}
		msgs = append(msgs, msg)
	}
	return nil, fmt.Errorf("looked for %s: %s", strings.Join(names, ", "), strings.Join(msgs, "; "))
}

// sym looks a symbol up; nil when absent.
func (l *library) sym(name string) unsafe.Pointer {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return C.rk_dlsym(l.handle, cn)
}

// symSpec names a required symbol, or optional alternatives tried in order.
type symSpec struct {
	names    []string // first found wins
	optional bool
}

func req(names ...string) symSpec { return symSpec{names: names} }
func opt(names ...string) symSpec { return symSpec{names: names, optional: true} }

// resolve looks up every spec; the missing required ones are all named in
// the error. set receives index and pointer (nil for a missing optional).
func (l *library) resolve(specs []symSpec, set func(i int, p unsafe.Pointer)) error {
	var missing []string
	for i, s := range specs {
		var p unsafe.Pointer
		for _, n := range s.names {
			if p = l.sym(n); p != nil {
				break
			}
		}
		if p == nil && !s.optional {
			missing = append(missing, strings.Join(s.names, "|"))
		}
		set(i, p)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %d required symbol(s): %s", l.name, len(missing), strings.Join(missing, ", "))
	}
	return nil
}

// filePath is the file symbol was loaded from, links resolved (the name
// dlopen was given when dladdr cannot tell).
func (l *library) filePath(symbol string) string {
	p := C.GoString(C.rk_dlpath(l.sym(symbol)))
	if p == "" {
		p = l.name
	}
	if rp, err := filepath.EvalSymlinks(p); err == nil {
		p = rp
	}
	return p
}

// fileID identifies the file the library was loaded from, found through
// one of its symbols: "path size mtime inode".
func (l *library) fileID(symbol string) string {
	p := l.filePath(symbol)
	fi, err := os.Stat(p)
	if err != nil {
		return p
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("%s %d %d %d", p, fi.Size(), fi.ModTime().UnixNano(), ino)
}

func (l *library) close() {
	if l != nil && l.handle != nil {
		C.rk_dlclose(l.handle)
		l.handle = nil
	}
}

const cgoOn = true

// SharedLibrary is a dlopen'd library for the packages that bind one the
// way the runtimes are bound (verify/blas): no SDK at build time.
type SharedLibrary struct{ l *library }

// Symbol names a symbol to resolve: the first of Names found wins.
type Symbol struct {
	Names    []string
	Optional bool
}

// OpenLibrary dlopens the first of names that loads (the error names each
// and the loader's message).
func OpenLibrary(names []string) (*SharedLibrary, error) {
	l, err := dlopenFirst(names)
	if err != nil {
		return nil, err
	}
	return &SharedLibrary{l}, nil
}

// Name is the dlopen name that loaded.
func (s *SharedLibrary) Name() string { return s.l.name }

// Resolve looks every symbol up; set receives each (nil for a missing
// optional one); the missing required ones are all named in the error.
func (s *SharedLibrary) Resolve(syms []Symbol, set func(i int, p unsafe.Pointer)) error {
	specs := make([]symSpec, len(syms))
	for i, y := range syms {
		specs[i] = symSpec{names: y.Names, optional: y.Optional}
	}
	return s.l.resolve(specs, set)
}

// Path is the file the library was loaded from, found through symbol.
func (s *SharedLibrary) Path(symbol string) string { return s.l.filePath(symbol) }

// Close dlcloses the library.
func (s *SharedLibrary) Close() { s.l.close() }
