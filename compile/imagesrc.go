package compile

import (
	"crypto/sha256"
	"fmt"
	"path"
	"path/filepath"
	"sort"

	"github.com/rocmk/rocmk/cache/safefile"
)

// ImageSource is what an image is built from: a file of a placed
// translated tree, compiled where it is with the tree's include
// directories, or a text alone, compiled in a temporary directory.
type ImageSource struct {
	Name string // the file's name, for messages
	Data []byte // its text
	Tree *Tree  // the placed tree it belongs to (nil: none)
	Rel  string // its path in Tree
	// Headers are in-memory headers the source includes (include name ->
	// text), a run-time compile's gpu.Code.Headers: NVRTC gets them as
	// header sources; nvcc and clang find them in the source's private
	// directory, given with -I. Only for a source that is not in a Tree.
	Headers map[string]string
}

// headerNames are s.Headers' include names, sorted; a name that would
// leave the source's directory (absolute, "..") is an error naming it.
func (s ImageSource) headerNames() ([]string, error) {
	names := make([]string, 0, len(s.Headers))
	for n := range s.Headers {
		if !filepath.IsLocal(filepath.FromSlash(n)) {
			return nil, fmt.Errorf("%s: header %q: an include name must be a relative path inside the source's directory", s.Name, n)
		}
		names = append(names, n)
	}
	if len(names) > 0 && s.Tree != nil {
		return nil, fmt.Errorf("%s: in-memory headers are for a source outside a tree (put them in the tree)", s.Name)
	}
	sort.Strings(names)
	return names, nil
}

// identity is the source's part of an image key: the text, or the tree's
// content hash and the file's place in it.
func (s ImageSource) identity() string {
	if s.Tree != nil {
		return fmt.Sprintf("tree %s\nsrc %s", s.Tree.Hash, s.Rel)
	}
	id := fmt.Sprintf("src %s\nsrchash %x", filepath.Base(s.Name), sha256.Sum256(s.Data))
	names, _ := s.headerNames() // a bad name fails open before anything is built
	for _, n := range names {
		id += fmt.Sprintf("\nheader %q %x", n, sha256.Sum256([]byte(s.Headers[n])))
	}
	return id
}

// open returns the directory a compiler runs in, the source's name and
// -I flags relative to it (so keys do not name the directory), and done,
// which removes what open made. Headers are written beside the source,
// and "-I." makes <name> includes find them too.
func (s ImageSource) open() (dir, file string, flags []string, done func(), err error) {
	names, err := s.headerNames()
	if err != nil {
		return "", "", nil, nil, err
	}
	if s.Tree != nil {
		flags = []string{"-I" + path.Dir(s.Rel)} // "" includes, for compilers that look only in -I
		for _, d := range s.Tree.Includes {
			flags = append(flags, "-I"+d)
		}
		return s.Tree.Dir, filepath.FromSlash(s.Rel), flags, func() {}, nil
	}
	dir, done, err = safefile.MkdirTemp("rocmk-image-")
	if err != nil {
		return "", "", nil, nil, err
	}
	file = filepath.Base(s.Name)
	if err := safefile.Write(filepath.Join(dir, file), s.Data, safefile.Options{}); err != nil {
		done()
		return "", "", nil, nil, err
	}
	for _, n := range names {
		if err := safefile.Write(filepath.Join(dir, filepath.FromSlash(n)), []byte(s.Headers[n]), safefile.Options{}); err != nil {
			done()
			return "", "", nil, nil, err
		}
	}
	if len(names) > 0 {
		flags = []string{"-I."}
	}
	return dir, file, flags, done, nil
}

// absFlags makes open's -I flags absolute under dir (for NVRTC, which has
// no working directory of its own).
func absFlags(dir string, flags []string) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = "-I" + filepath.Join(dir, filepath.FromSlash(f[2:]))
	}
	return out
}
