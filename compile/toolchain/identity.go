package toolchain

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/par"
)

// Tool identities. Every cache key holds the identity of what compiles:
// the compiler (its binaries and `--version` text) and the device libraries
// or headers it reads besides the source. An identity is made of content
// hashes, so two machines with the same toolchain, wherever it is
// installed, compute the same keys and share a remote cache. Hashing a
// compiler costs a fraction of a second, so each identity is computed once
// per stamp (the stat data of the files it covers: paths, sizes, mtimes,
// inodes) and remembered under it, in this process and in the local cache:
// while its files are unchanged, it costs a few stats and one lookup.

// Store is the cache as builds, identities and probes use it: a *cache.Cache, or a
// *remote.Tier (the local cache with a shared server behind it), whose
// methods these are. Every error of GetBytes is a miss; a missing,
// truncated or corrupt entry is one.
type Store interface {
	GetBytes(id cache.ActionID) ([]byte, cache.Entry, error)
	PutBytes(id cache.ActionID, data []byte, m cache.Meta) (cache.Entry, error)
}

// get is s.GetBytes without the entry.
func get(s Store, id cache.ActionID) ([]byte, error) {
	b, _, err := s.GetBytes(id)
	return b, err
}

// put is s.PutBytes without the entry.
func put(s Store, id cache.ActionID, data []byte, m cache.Meta) error {
	_, err := s.PutBytes(id, data, m)
	return err
}

// idFormat starts every remembered identity's key: bump it when an
// identity's text changes meaning.
const idFormat = "rocmk-tool-id v2"

// ids remembers identities for the life of the process, by kind and stamp.
var ids par.Cache[string, idResult]

type idResult struct {
	id  string
	err error
}

// Remember returns the identity of kind ("toolchain", "devicelibs",
// "nvcc", "hip-headers") whose files have stamp: from this process's
// memory, else from the local cache behind store (identities hold no
// secrets, but their stamps are this machine's, so they never go to a
// remote tier), else compute() stored there. store may be nil.
func Remember(store Store, kind, stamp string, compute func() (string, error)) (string, error) {
	key := kind + "\x00" + stamp
	res := ids.Do(key, func() idResult {
		local := localStore(store)
		h := cache.NewHash("tool-id " + kind)
		h.Line("%s", idFormat)
		h.Line("kind %s", kind)
		h.Line("stamp %s", stamp)
		k := h.Sum()
		if local != nil {
			if b, err := get(local, k); err == nil && len(b) > 0 {
				return idResult{id: string(b)}
			}
		}
		id, err := compute()
		if err == nil && local != nil {
			_ = put(local, k, []byte(id), cache.Meta{Kind: "toolchain-id", Toolchain: kind})
		}
		return idResult{id, err}
	})
	if res.err != nil {
		ids.Forget(key) // a failure is not remembered
	}
	return res.id, res.err
}

// localStore is the local cache of a store: a remote tier's, or store itself.
func localStore(s Store) Store {
	if t, ok := s.(interface{ Local() *cache.Cache }); ok {
		if l := t.Local(); l != nil {
			return l
		}
		return nil
	}
	return s
}

// resolve is the file path p names, links followed. p is a path: a
// command name is looked up by whoever names it, through the injected
// LookPath (FindOptions, ImageBuilder), never on PATH here.
func resolve(p string) string {
	if rp, err := filepath.EvalSymlinks(p); err == nil {
		p = rp
	}
	return p
}

// FileStamp is "resolved-path size mtime inode" of a file.
func FileStamp(p string) string {
	p = resolve(p)
	fi, err := os.Stat(p)
	if err != nil {
		return p + " missing"
	}
	id, _ := safefile.IDOf(fi)
	return fmt.Sprintf("%s %d %d %d", p, fi.Size(), fi.ModTime().UnixNano(), id.Ino)
}

// FileDigest is the sha256 of the file p runs or names.
func FileDigest(p string) (string, error) {
	sum, _, err := cache.HashFile(resolve(p), cache.MaxDataSize)
	if err != nil {
		return "", err
	}
	return sum.String(), nil
}

// TreeFiles lists the regular files under dir, relative to it, sorted.
// Links are followed, the root's and those of subdirectories too (CUDA's
// include directory is a link, and toolkits link subtrees in); a directory
// reached twice is listed once, so a link cycle ends. A cache area's
// marker (generated device libraries) is the cache's, not the toolchain's:
// it is left out, so the identity is the bitcode's alone.
func TreeFiles(dir string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	var walk func(real, rel string) error
	walk = func(real, rel string) error {
		if seen[real] {
			return nil
		}
		seen[real] = true
		entries, err := os.ReadDir(real)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name, p := filepath.Join(rel, e.Name()), filepath.Join(real, e.Name())
			fi, err := os.Stat(p)
			switch {
			case name == cache.AreaMarker:
			case err != nil: // a dangling link: nothing a compiler can read
			case fi.IsDir():
				sub, err := filepath.EvalSymlinks(p)
				if err != nil {
					return err
				}
				if err := walk(sub, name); err != nil {
					return err
				}
			case fi.Mode().IsRegular():
				out = append(out, name)
			}
		}
		return nil
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	err = walk(root, "")
	sort.Strings(out)
	return out, err
}

// treeStamp is the stat data of the files under dir (links followed).
func treeStamp(dir string, files []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dir %s\n", dir)
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			fmt.Fprintf(&b, "%s missing\n", f)
			continue
		}
		id, _ := safefile.IDOf(fi)
		fmt.Fprintf(&b, "%s %d %d %d\n", f, fi.Size(), fi.ModTime().UnixNano(), id.Ino)
	}
	return b.String()
}

// TreeDigest is the names and content hashes of the files under dir.
func TreeDigest(dir string, files []string) (string, error) {
	h := cache.NewHash("tree")
	for _, f := range files {
		sum, err := FileDigest(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		h.Line("%s %s", f, sum)
	}
	return h.Sum().String(), nil
}

// TreeIdentity is the remembered content identity of the files under dir.
func TreeIdentity(store Store, kind, dir string) (string, error) {
	files, err := TreeFiles(dir)
	if err != nil {
		return "", err
	}
	return Remember(store, kind, treeStamp(dir, files), func() (string, error) { return TreeDigest(dir, files) })
}
