// Package rspfile expands response files (@file arguments, which CMake
// and Ninja write for long command lines) the way clang does: Expand.
package rspfile

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rocmk/rocmk/cache/safefile"
)

// Response files are expanded by rocmk, not by the compiler: the compiler
// gets, and the cache key holds, the flags they contain. Left to clang,
// an edited response file would be a hit on the old flags.

// maxRspSize bounds one response file, maxRspDepth their nesting.
const (
	maxRspSize  = 1 << 20
	maxRspDepth = 16
)

// Expand replaces every @file among flags by the arguments the
// file holds, as clang does (GNU quoting, nested @file relative to the
// file that names it). A top-level name is relative to dir, where the
// compiler runs. A missing or special file, a loop or nesting deeper than
// maxRspDepth is an error naming the file.
func Expand(flags []string, dir string) ([]string, error) {
	return expandRsp(flags, dir, nil)
}

func expandRsp(flags []string, dir string, stack []string) ([]string, error) {
	var out []string
	for _, f := range flags {
		if len(f) < 2 || f[0] != '@' {
			out = append(out, f)
			continue
		}
		name := f[1:]
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		for _, s := range stack {
			if s == name {
				return nil, fmt.Errorf("response file %s: includes itself (through %s)", name, strings.Join(stack, " -> "))
			}
		}
		if len(stack) >= maxRspDepth {
			return nil, fmt.Errorf("response file %s: nested more than %d deep", name, maxRspDepth)
		}
		data, err := safefile.Read(name, maxRspSize)
		if err != nil {
			return nil, fmt.Errorf("response file %s: %w", f, err)
		}
		args, err := expandRsp(tokenizeGNU(string(data)), filepath.Dir(name), append(stack, name))
		if err != nil {
			return nil, err
		}
		out = append(out, args...)
	}
	return out, nil
}

// tokenizeGNU splits a response file as LLVM's TokenizeGNUCommandLine
// does: whitespace separates, a backslash escapes the next character, and
// '...' or "..." quote (a backslash escapes inside them too).
func tokenizeGNU(s string) []string {
	s = strings.TrimPrefix(s, "\uFEFF")
	var args []string
	var tok strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			tok.WriteByte(s[i])
		case c == '\'' || c == '"':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				tok.WriteByte(s[i])
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f':
			if tok.Len() > 0 {
				args = append(args, tok.String())
				tok.Reset()
			}
		default:
			tok.WriteByte(c)
		}
	}
	if tok.Len() > 0 {
		args = append(args, tok.String())
	}
	return args
}
