package compile

import (
	"crypto/sha256"
	"fmt"
	"path"
	"path/filepath"

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
}

// identity is the source's part of an image key: the text, or the tree's
// content hash and the file's place in it.
func (s ImageSource) identity() string {
	if s.Tree != nil {
		return fmt.Sprintf("tree %s\nsrc %s", s.Tree.Hash, s.Rel)
	}
	return fmt.Sprintf("src %s\nsrchash %x", filepath.Base(s.Name), sha256.Sum256(s.Data))
}

// open returns the directory a compiler runs in, the source's name and
// -I flags relative to it (so keys do not name the directory), and done,
// which removes what open made.
func (s ImageSource) open() (dir, file string, flags []string, done func(), err error) {
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
	return dir, file, nil, done, nil
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
