package compile

// The include scan: every header lookup a source and its headers can make,
// found without running the preprocessor. The cache key covers, for each
// lookup in a file the compiler read, the candidates the compiler tried
// before the file it used (see docs/cache.md, "Include search"). The scan
// does not evaluate #if: it takes every directive in every branch, so it
// finds a superset of the lookups the compiler makes, which can only add
// misses. A hand-written scanner because it needs only the header names of
// directives, and Go has no C preprocessor library that follows clang's
// search rules.

import (
	"fmt"
	"strings"
	"sync"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/includes"
	"github.com/rocmk/rocmk/compile/toolchain"
)

// inclusion is a file as the compiler entered it: its name (relative to the
// base directory, or absolute) and the index in the search list where it
// was found (-1: not through the search list: the source, a path relative
// to its includer, or an absolute name). A file entered two ways is scanned
// both ways: its quoted includes and #include_next depend on them.
type inclusion struct {
	name string
	idx  int
}

// commandLine is the pseudo-file whose "#include"s are the -include files:
// clang looks them up from the current directory (the base directory).
var commandLine = inclusion{name: "", idx: -1}

// lookup is one header lookup and its outcome when scanned.
type lookup struct {
	from   inclusion
	ref    includes.Ref
	cands  []string   // candidate names in search order, up to the one used
	states []string   // headerState of each candidate when scanned
	infos  []pathInfo // and its stat data: the file the compiler will read
	found  bool       // the last candidate is the one used
	// opaque: the name is not a literal (#include MACRO), or the lookup
	// has no fixed includer (a quoted __has_include in a macro body).
	opaque bool
}

// includeGraph is everything a job's include scan found.
type includeGraph struct {
	src     pathInfo                    // the source when scanned
	files   map[inclusion]fileID        // every file entered
	scans   map[inclusion]includes.File // what each one contains
	lookups []lookup
}

// maxScanSize bounds how much of a source or header rocmk reads, and
// maxObjectSize how much of a code object the compiler wrote.
const (
	maxScanSize   = 512 << 20
	maxObjectSize = toolchain.MaxObjectSize
)

// refusedIncludeError is a lookup that would make the compiler open a FIFO
// or a device: it would block, or read forever.
type refusedIncludeError struct {
	Pos, Ref, Path, Kind string
}

func (e *refusedIncludeError) Error() string {
	return fmt.Sprintf("%s: %s: %s is a %s, not a regular file: not compiled (the compiler would block or read forever)", e.Pos, e.Ref, e.Path, e.Kind)
}

// scanMemo remembers each file's scan while its stat data is unchanged, so
// the headers shared by many jobs are read once.
type scanMemo struct {
	mu sync.Mutex
	m  map[string]scanned
}

type scanned struct {
	size, mtime, ctime int64
	ino                uint64
	scan               includes.File
}

func (s *scanMemo) get(abs string, pi pathInfo) (includes.File, error) {
	s.mu.Lock()
	v, ok := s.m[abs]
	s.mu.Unlock()
	if ok && v.size == pi.Size && v.mtime == pi.MTime && v.ctime == pi.CTime && v.ino == pi.Ino {
		return v.scan, nil
	}
	data, err := safefile.Read(abs, maxScanSize)
	if err != nil {
		return includes.File{}, err
	}
	fs := includes.Scan(data)
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]scanned{}
	}
	s.m[abs] = scanned{pi.Size, pi.MTime, pi.CTime, pi.Ino, fs}
	s.mu.Unlock()
	return fs, nil
}

// scanJob follows every header lookup from the source src (named as the
// compiler names it) and the command line's -include files, through every
// file found, in every #if branch. stat answers come from the build's memo.
// A lookup that would open a FIFO or a device is an error naming the file
// and line: the compiler would block or read forever.
func (b *Builder) scanJob(baseDir string, sp *toolchain.SearchPath, src string) (*includeGraph, error) {
	g := &includeGraph{files: map[inclusion]fileID{}, scans: map[inclusion]includes.File{}}
	search := append(append([]string(nil), sp.Quote...), sp.Angle...)
	nQuote := len(sp.Quote)
	var queue []inclusion
	enter := func(in inclusion, pi pathInfo) {
		if _, ok := g.files[in]; !ok {
			g.files[in] = pi.id()
			queue = append(queue, in)
		}
	}
	srcInfo := b.paths.stat(absName(baseDir, src))
	if srcInfo.Err != nil {
		return nil, srcInfo.Err
	}
	g.src = srcInfo
	enter(inclusion{name: src, idx: -1}, srcInfo)
	resolve := func(from inclusion, ref includes.Ref) error {
		l := lookup{from: from, ref: ref}
		if ref.Name == "" || ref.InMacro && (!ref.Angled || ref.Next) {
			l.opaque = true // decided after the compile: only a file the compiler read matters
			g.lookups = append(g.lookups, l)
			return nil
		}
		type cand struct {
			name string
			idx  int
		}
		var cands []cand
		switch {
		case strings.HasPrefix(ref.Name, "/"):
			cands = []cand{{ref.Name, -1}}
		default:
			start := 0
			if ref.Next && from.idx >= 0 {
				start = from.idx + 1 // clang: after the directory the includer was found in
			} else {
				if !ref.Angled {
					cands = append(cands, cand{joinName(includerDir(from.name), ref.Name), -1})
				} else {
					start = nQuote
				}
			}
			for i := start; i < len(search); i++ {
				cands = append(cands, cand{joinName(search[i], ref.Name), i})
			}
		}
		for _, c := range cands {
			pi := b.paths.stat(absName(baseDir, c.name))
			st := pi.headerState()
			l.cands = append(l.cands, c.name)
			l.states = append(l.states, st)
			l.infos = append(l.infos, pi)
			if st == "absent" {
				continue
			}
			if st != "present" {
				return &refusedIncludeError{Pos: fmt.Sprintf("%s:%d", displayName(from), ref.Line), Ref: ref.String(), Path: c.name, Kind: specialName(st)}
			}
			l.found = true
			if !ref.Has {
				enter(inclusion{name: c.name, idx: c.idx}, pi)
			}
			break
		}
		g.lookups = append(g.lookups, l)
		return nil
	}
	for _, name := range sp.Includes {
		if err := resolve(commandLine, includes.Ref{Name: name}); err != nil {
			return nil, err
		}
	}
	for len(queue) > 0 {
		in := queue[0]
		queue = queue[1:]
		abs := absName(baseDir, in.name)
		fs, err := b.scans.get(abs, b.paths.stat(abs))
		if err != nil {
			return nil, err
		}
		g.scans[in] = fs
		for _, ref := range fs.Refs {
			if err := resolve(in, ref); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

// absName resolves a name as the compiler, running in baseDir, sees it.
// No cleaning: "inc/../x.h" through a symlinked inc is not "x.h".
func absName(baseDir, name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return baseDir + "/" + name
}

// joinName is how clang forms a candidate: directory + "/" + name, with the
// current directory's "./" left off.
func joinName(dir, name string) string {
	switch {
	case dir == "" || dir == ".":
		return name
	case strings.HasSuffix(dir, "/"):
		return dir + name
	}
	for strings.HasPrefix(dir, "./") {
		dir = dir[2:]
	}
	return dir + "/" + name
}

// includerDir is the directory clang searches first for a quoted include:
// the including file's directory as named ("" = the base directory).
func includerDir(name string) string {
	i := strings.LastIndexByte(name, '/')
	switch {
	case i < 0:
		return ""
	case i == 0:
		return "/"
	}
	return name[:i]
}

func displayName(in inclusion) string {
	if in == commandLine {
		return "<command line>"
	}
	return in.name
}

func specialName(state string) string {
	switch state {
	case "fifo":
		return "FIFO"
	case "chardev":
		return "character device"
	case "blockdev":
		return "block device"
	}
	return state
}
