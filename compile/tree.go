package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/includes"
	"github.com/rocmk/rocmk/hipify"
)

// A translated tree is the HIP translation of CUDA sources and of every
// local file they include, laid out as the originals are, so that quoted
// includes, ".." and -I directories resolve in the translation as they did
// in the CUDA project. `rocmk build`, `rocmk port` and `rocmk verify --spec`
// compile there. A tree is named by the hash of its layout and bytes
// (TreeRoot/<hash>), written whole or not at all, and reused by the next
// run that translates to the same bytes.

// TreeFormat is the first line hashed into a tree's name.
const treeFormat = "rocmk-tree v1"

// Tree layout: the mirrored files under src/, rocmk's compatibility header
// alone in rocmk/ (so no file of the project can shadow it).
const (
	treeSrc    = "src"
	treeCompat = "rocmk"
)

// Bounds on what one tree may hold: a kernel directory is a few hundred
// files, and reading a whole disk by mistake should fail, not fill memory.
const (
	maxTreeFiles = 20000
	maxTreeBytes = 1 << 30
)

// TreeRequest is what TranslateTree mirrors.
type TreeRequest struct {
	// Sources are the compilation units. CUDA ones are translated; a
	// .hip source is copied as it is. Each one's include closure is
	// mirrored and translated.
	Sources []string
	// Dirs are kernel directories: every file under them that hipify
	// translates in tree mode is mirrored too (hidden directories skipped),
	// whether or not a source includes it.
	Dirs []string
	// Includes are the -I directories, searched in order after the
	// includer's directory for "name", and for <name>.
	Includes []string
	// Options are the translation's; CompatInclude is set by TranslateTree.
	Options hipify.Options
	// Read reads a file (nil: safefile.Read within Limit, 256 MiB when 0).
	Read  func(name string) ([]byte, error)
	Limit int64
}

// TreeFile is one file of a tree.
type TreeFile struct {
	Path   string         `json:"path"`             // the original
	Rel    string         `json:"rel"`              // its place in the tree, slash-separated
	Copied string         `json:"copied,omitempty"` // why it is not translated ("" when it is)
	Data   []byte         `json:"-"`                // what the tree holds
	Orig   []byte         `json:"-"`                // the original bytes
	Report *hipify.Report `json:"-"`                // the translation's report (nil when copied)
}

// Tree is a translation built by TranslateTree; Place writes it.
type Tree struct {
	Hash     string      `json:"hash"` // sha256 of the layout and bytes (hex)
	Dir      string      `json:"dir"`  // where it lives (set by Place or Locate)
	Files    []*TreeFile `json:"files"`
	Sources  []string    `json:"sources"`  // the tree path (Rel) of each request source, in order
	Includes []string    `json:"includes"` // Rel of each -I directory, then of the compat header's
	Warnings []string    `json:"warnings,omitempty"`

	byPath       map[string]*TreeFile // by original path
	byRel        map[string]*TreeFile
	origIncludes []string // the request's -I directories, absolute
}

// File returns the tree file of an original path (nil when not mirrored).
func (t *Tree) File(orig string) *TreeFile {
	abs, err := filepath.Abs(orig)
	if err != nil {
		return nil
	}
	return t.byPath[abs]
}

// Path is the absolute path of rel in the placed tree.
func (t *Tree) Path(rel string) string { return filepath.Join(t.Dir, filepath.FromSlash(rel)) }

// IncludeFlags are the -I flags that compile in the placed tree: the
// mirrored -I directories in their order, then the compat header's.
func (t *Tree) IncludeFlags() []string {
	var out []string
	for _, rel := range t.Includes {
		out = append(out, "-I"+t.Path(rel))
	}
	return out
}

// treeExts are the files hipify translates in tree mode.
var treeExts = map[string]bool{".cu": true, ".cuh": true, ".c": true, ".cc": true, ".cpp": true, ".cxx": true,
	".h": true, ".hh": true, ".hpp": true, ".hxx": true, ".inl": true, ".inc": true}

// IsCUDASource says whether a file is translated before it is built.
func IsCUDASource(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".cu" || ext == ".cuh"
}

type treeBuilder struct {
	req      TreeRequest
	includes []string // absolute, cleaned
	files    map[string]*TreeFile
	queue    []string
	bytes    int64
	warnings []string
}

// TranslateTree translates r's sources, their include closures and r.Dirs
// into a tree in memory. Every file found is in the tree: a file hipify
// cannot translate (binary) is copied as it is, with a warning. An include
// named by a macro cannot be followed: the other headers of that file's
// directory are mirrored too, with a warning.
func TranslateTree(r TreeRequest) (*Tree, error) {
	if r.Limit <= 0 {
		r.Limit = 256 << 20
	}
	r.Options.NoCompat = false
	r.Options.CompatInline = false
	r.Options.CompatInclude = hipify.CompatHeaderName
	b := &treeBuilder{req: r, files: map[string]*TreeFile{}}
	for _, d := range r.Includes {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		b.includes = append(b.includes, abs)
	}
	var sources []string
	for _, s := range r.Sources {
		abs, err := filepath.Abs(s)
		if err != nil {
			return nil, err
		}
		sources = append(sources, abs)
		b.add(abs)
	}
	for _, d := range r.Dirs {
		if err := b.addDir(d); err != nil {
			return nil, err
		}
	}
	for len(b.queue) > 0 {
		p := b.queue[0]
		b.queue = b.queue[1:]
		if err := b.mirror(p); err != nil {
			return nil, err
		}
	}
	return b.tree(sources)
}

// add queues a file once.
func (b *treeBuilder) add(abs string) {
	if _, ok := b.files[abs]; ok {
		return
	}
	b.files[abs] = nil
	b.queue = append(b.queue, abs)
}

// addDir queues every file hipify translates under dir.
func (b *treeBuilder) addDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	return filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != abs && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if treeExts[strings.ToLower(filepath.Ext(p))] || strings.EqualFold(filepath.Ext(p), ".hip") {
			if ok, err := safefile.WalkedFile(p, d); !ok {
				return err
			}
			if len(b.files) >= maxTreeFiles {
				return fmt.Errorf("%s: more than %d source files: not a kernel directory", dir, maxTreeFiles)
			}
			b.add(p)
		}
		return nil
	})
}

// mirror reads, translates and scans one file, and queues what it includes.
func (b *treeBuilder) mirror(abs string) error {
	if len(b.files) > maxTreeFiles {
		return fmt.Errorf("%s: the include closure has more than %d files", abs, maxTreeFiles)
	}
	read := b.req.Read
	if read == nil {
		read = func(name string) ([]byte, error) { return safefile.Read(name, b.req.Limit) }
	}
	data, err := read(abs)
	if err != nil {
		return err
	}
	if b.bytes += int64(len(data)); b.bytes > maxTreeBytes {
		return fmt.Errorf("%s: the include closure is larger than %d MiB", abs, maxTreeBytes>>20)
	}
	f := &TreeFile{Path: abs, Orig: data, Data: data}
	b.files[abs] = f
	name := filepath.Base(abs)
	switch {
	case name == hipify.CompatHeaderName:
		if !hipify.IsCompatHeader(data) {
			return fmt.Errorf("%s: a file named %s that rocmk did not write is included by the sources; "+
				"the translation includes rocmk's own header of that name: rename it", abs, hipify.CompatHeaderName)
		}
		// an older copy of rocmk's header: the tree has the current one
		f.Data, f.Copied = hipify.CompatHeader(), "rocmk's header"
		return nil
	case strings.EqualFold(filepath.Ext(abs), ".hip"):
		f.Copied = "HIP source"
	default:
		o := b.req.Options
		o.NoInclude = o.NoInclude || !treeExts[strings.ToLower(filepath.Ext(abs))] // a fragment (.def): nothing added
		out, rep, err := hipify.Translate(abs, data, o)
		var ie *hipify.InputError
		switch {
		case errors.As(err, &ie):
			f.Copied = "not text"
			b.warnings = append(b.warnings, fmt.Sprintf("%s: copied untranslated: %v", abs, err))
			return nil
		case err != nil:
			return err
		}
		f.Data, f.Report = out, rep
	}
	b.follow(abs, f.Data)
	return nil
}

// follow queues the local files abs's text includes: "name" from its
// directory, then the -I directories; <name> from the -I directories.
// Every directive of every #if branch counts, so the tree has whatever any
// configuration includes. HIP's own headers (hip/...) are never local.
func (b *treeBuilder) follow(abs string, text []byte) {
	dir := filepath.Dir(abs)
	macro := false
	for _, ref := range includes.Scan(text).Refs {
		switch {
		case ref.Name == "":
			macro = macro || !ref.Has
			continue
		case strings.HasPrefix(ref.Name, "hip/"):
			continue
		case filepath.IsAbs(ref.Name):
			b.warnings = append(b.warnings, fmt.Sprintf("%s:%d: #include of an absolute path (%s) is not mirrored: the translation reads the original", abs, ref.Line, ref.Name))
			continue
		}
		var cands []string
		if !ref.Angled && !ref.Next {
			cands = append(cands, dir)
		}
		cands = append(cands, b.includes...)
		for _, c := range cands {
			p := filepath.Join(c, filepath.FromSlash(ref.Name))
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				b.add(p)
				if !ref.Next {
					break // what the compiler takes; #include_next may take a later one
				}
			}
		}
	}
	if macro {
		b.warnings = append(b.warnings, fmt.Sprintf("%s: an #include names a macro, which rocmk does not follow: the headers of %s are mirrored", abs, dir))
		if ents, err := os.ReadDir(dir); err == nil {
			for _, e := range ents {
				if !e.IsDir() && treeExts[strings.ToLower(filepath.Ext(e.Name()))] {
					b.add(filepath.Join(dir, e.Name()))
				}
			}
		}
	}
}

// tree lays the files out under their common directory and hashes them.
func (b *treeBuilder) tree(sources []string) (*Tree, error) {
	var dirs []string
	for p := range b.files {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range b.includes {
		dirs = append(dirs, d)
	}
	root := commonDir(dirs)
	rel := func(p string) string {
		r, _ := filepath.Rel(root, p)
		return pathJoin(treeSrc, filepath.ToSlash(r))
	}
	t := &Tree{Warnings: b.warnings, byPath: map[string]*TreeFile{}, byRel: map[string]*TreeFile{}, origIncludes: b.includes}
	for p, f := range b.files {
		f.Rel = rel(p)
		t.Files = append(t.Files, f)
		t.byPath[p] = f
	}
	t.Files = append(t.Files, &TreeFile{Path: "", Rel: treeCompat + "/" + hipify.CompatHeaderName, Copied: "rocmk's header", Data: hipify.CompatHeader()})
	sort.Slice(t.Files, func(i, j int) bool { return t.Files[i].Rel < t.Files[j].Rel })
	for _, f := range t.Files {
		t.byRel[f.Rel] = f
	}
	for _, s := range sources {
		t.Sources = append(t.Sources, b.files[s].Rel)
	}
	for _, d := range b.includes {
		t.Includes = append(t.Includes, rel(d))
	}
	t.Includes = append(t.Includes, treeCompat)
	t.hash()
	return t, nil
}

// hash sets t.Hash from its include directories and files.
func (t *Tree) hash() {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", treeFormat)
	for _, d := range t.Includes {
		fmt.Fprintf(h, "dir %s\n", d) // include directories are made even when empty
	}
	for _, f := range t.Files {
		fmt.Fprintf(h, "file %q %d\n", f.Rel, len(f.Data))
		h.Write(f.Data)
	}
	t.Hash = hex.EncodeToString(h.Sum(nil))
}

func pathJoin(a, b string) string {
	if b == "." {
		return a
	}
	return a + "/" + b
}

// commonDir is the deepest directory that holds every one of dirs.
func commonDir(dirs []string) string {
	if len(dirs) == 0 {
		return string(filepath.Separator)
	}
	common := filepath.Clean(dirs[0])
	for _, d := range dirs[1:] {
		d = filepath.Clean(d)
		for !within(d, common) {
			parent := filepath.Dir(common)
			if parent == common {
				break
			}
			common = parent
		}
	}
	return common
}

// within says whether p is dir or below it.
func within(p, dir string) bool {
	if p == dir || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// Locate sets t.Dir to where Place would put it under root, writing nothing
// (for a dry run).
func (t *Tree) Locate(root string) { t.Dir = filepath.Join(root, t.Hash[:32]) }

// Place puts the tree at root/<hash>, a directory of the cache area root
// (cache.Area): the directory a run before made when it holds exactly
// these files, else a new one published whole, so a crash or a concurrent
// run never leaves a half-written tree in use. The cache trims trees with
// its entries.
func (t *Tree) Place(root string) error {
	t.Locate(root)
	if _, err := cache.OpenArea(root).Publish(filepath.Base(t.Dir), t.complete, t.write); err != nil {
		return fmt.Errorf("translated tree: %w", err)
	}
	return nil
}

// write writes every file and include directory under dir.
func (t *Tree) write(dir string) error {
	for _, d := range t.Includes {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o777); err != nil {
			return err
		}
	}
	for _, f := range t.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// complete says whether dir holds exactly the tree's files, byte for byte,
// and its include directories: nothing missing, changed or added (an added
// header could shadow an -I directory's).
func (t *Tree) complete(dir string) bool {
	want := map[string]*TreeFile{}
	for _, f := range t.Files {
		want[filepath.FromSlash(f.Rel)] = f
	}
	seen := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == cache.AreaMarker {
			return nil
		}
		f, ok := want[rel]
		if !ok || !d.Type().IsRegular() {
			return errTreeDiffers
		}
		data, err := safefile.Read(p, int64(len(f.Data)))
		if err != nil || !bytes.Equal(data, f.Data) {
			return errTreeDiffers
		}
		seen++
		return nil
	})
	if err != nil || seen != len(t.Files) {
		return false
	}
	for _, d := range t.Includes {
		if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(d))); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

var errTreeDiffers = errors.New("tree differs")
