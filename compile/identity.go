package compile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
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

// idFormat starts every remembered identity's key: bump it when an
// identity's text changes meaning.
const idFormat = "rocmk-tool-id v2"

// ids remembers identities for the life of the process, by kind and stamp.
var ids sync.Map // string -> *idOnce

type idOnce struct {
	once sync.Once
	id   string
	err  error
}

// remember returns the identity of kind ("toolchain", "devicelibs",
// "nvcc", "hip-headers") whose files have stamp: from this process's
// memory, else from the local cache behind store (identities hold no
// secrets, but their stamps are this machine's, so they never go to a
// remote tier), else compute() stored there. store may be nil.
func remember(store Store, kind, stamp string, compute func() (string, error)) (string, error) {
	v, _ := ids.LoadOrStore(kind+"\x00"+stamp, &idOnce{})
	o := v.(*idOnce)
	o.once.Do(func() {
		local := localStore(store)
		h := cache.NewHash("tool-id " + kind)
		h.Line("%s", idFormat)
		h.Line("kind %s", kind)
		h.Line("stamp %s", stamp)
		k := h.Sum()
		if local != nil {
			if b, err := get(local, k); err == nil && len(b) > 0 {
				o.id = string(b)
				return
			}
		}
		if o.id, o.err = compute(); o.err != nil {
			ids.Delete(kind + "\x00" + stamp) // a failure is not remembered
			return
		}
		if local != nil {
			_ = put(local, k, []byte(o.id), cache.Meta{Kind: "toolchain-id", Toolchain: kind})
		}
	})
	return o.id, o.err
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

// resolve is the file a command name or path runs: found on PATH, links
// followed.
func resolve(p string) string {
	if lp, err := exec.LookPath(p); err == nil {
		p = lp
	}
	if rp, err := filepath.EvalSymlinks(p); err == nil {
		p = rp
	}
	return p
}

// fileStamp is "resolved-path size mtime inode" of a file.
func fileStamp(p string) string {
	p = resolve(p)
	fi, err := os.Stat(p)
	if err != nil {
		return p + " missing"
	}
	id, _ := safefile.IDOf(fi)
	return fmt.Sprintf("%s %d %d %d", p, fi.Size(), fi.ModTime().UnixNano(), id.Ino)
}

// fileDigest is the sha256 of the file p runs or names.
func fileDigest(p string) (string, error) {
	sum, _, err := cache.HashFile(resolve(p), cache.MaxDataSize)
	if err != nil {
		return "", err
	}
	return sum.String(), nil
}

// treeFiles lists the regular files under dir, relative to it, sorted.
// Links are followed, the root's and those of subdirectories too (CUDA's
// include directory is a link, and toolkits link subtrees in); a directory
// reached twice is listed once, so a link cycle ends. A cache area's
// marker (generated device libraries) is the cache's, not the toolchain's:
// it is left out, so the identity is the bitcode's alone.
func treeFiles(dir string) ([]string, error) {
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

// treeDigest is the names and content hashes of the files under dir.
func treeDigest(dir string, files []string) (string, error) {
	h := cache.NewHash("tree")
	for _, f := range files {
		sum, err := fileDigest(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		h.Line("%s %s", f, sum)
	}
	return h.Sum().String(), nil
}

// treeIdentity is the remembered content identity of the files under dir.
func treeIdentity(store Store, kind, dir string) (string, error) {
	files, err := treeFiles(dir)
	if err != nil {
		return "", err
	}
	return remember(store, kind, treeStamp(dir, files), func() (string, error) { return treeDigest(dir, files) })
}
