package compile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/inspect"
)

// cacheFormat is the first line of every action key: bump it when the key
// or the stored data changes meaning.
const cacheFormat = "rocmk-compile v1"

// EventKind says what happened to a job.
type EventKind int

const (
	EventStart EventKind = iota // the job started (cache lookup or compile)
	EventDone                   // the job ended; Result.Status says how
)

// Event reports progress; Builder.Events receives them from several
// goroutines at once.
type Event struct {
	Kind   EventKind
	Result *Result
}

// Builder compiles (source x target) jobs in parallel through a cache.
type Builder struct {
	TC     Toolchain
	Run    Runner // every exec goes through it
	Cache  Store  // nil: no cache
	Jobs   int    // parallel jobs; <= 0 means runtime.NumCPU()
	DryRun bool   // -n: plan and print commands (through Run), compile nothing
	Getenv func(string) string
	Events func(Event) // optional, must be goroutine-safe
	// ReadUsage reads kernel resource usage from a code object
	// (--resource-usage); nil leaves Result.Kernels to names only.
	ReadUsage func(data []byte) ([]KernelUsage, error)

	hashes fileHashes
	stats  statMemo
}

// Build runs every job of r and writes the outputs. It returns the report
// and, when some jobs failed, an ErrorList of *CompileError (the other jobs
// still ran). A cancelled context stops new jobs, kills running compilers
// and returns ctx.Err().
func (b *Builder) Build(ctx context.Context, r Request) (*Report, error) {
	start := time.Now()
	if len(r.Sources) == 0 {
		return nil, errors.New("no sources to build")
	}
	if len(r.Targets) == 0 {
		return nil, errors.New("no targets to build for")
	}
	if err := inspect.ValidateTargets(r.Targets); err != nil {
		return nil, err
	}
	if b.Getenv == nil {
		b.Getenv = os.Getenv
	}
	outDir := r.OutDir
	if outDir == "" {
		outDir = "."
	}
	rep := &Report{}
	// Plan: sources in order, targets in order.
	type work struct {
		res *Result
		job Job
	}
	var all []*work
	for _, src := range r.Sources {
		abs, err := filepath.Abs(src)
		if err != nil {
			return nil, err
		}
		if !b.DryRun {
			if _, err := os.Stat(abs); err != nil {
				return nil, fmt.Errorf("source %s: %w", src, err)
			}
		}
		for _, t := range r.Targets {
			res := &Result{Src: src, Target: t, Status: StatusSkipped, Out: filepath.Join(outDir, ObjectName(src, t))}
			j := Job{Src: filepath.Base(abs), Dir: filepath.Dir(abs), Target: t, Flags: r.Flags}
			all = append(all, &work{res: res, job: j})
			rep.Results = append(rep.Results, res)
		}
	}
	if b.DryRun {
		for _, w := range all {
			w.job.Out = w.res.Out
			if !filepath.IsAbs(w.job.Out) {
				w.job.Out, _ = filepath.Abs(w.job.Out)
			}
			w.res.Argv = b.TC.Argv(w.job)
			if _, err := b.Run.Run(ctx, Cmd{Dir: w.job.Dir, Argv: w.res.Argv}); err != nil {
				return rep, err
			}
		}
		rep.Wall = time.Since(start)
		return rep, nil
	}
	if err := os.MkdirAll(outDir, 0o777); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "rocmk-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	b.stats.reset()
	tcID, err := b.toolchainID(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", ErrToolchainNotFound, err)
	}

	// Worker pool over a channel of ready jobs (cf. cmd/go Builder.Do: the
	// jobs have no dependencies on each other, so all are ready at once).
	n := b.Jobs
	if n <= 0 {
		n = runtime.NumCPU()
	}
	// Longest first: start the biggest sources first (source size is a
	// cheap proxy for compile time), so no long compile is left alone at
	// the end while the other workers idle.
	order := make([]int, len(all))
	size := map[string]int64{}
	for i, w := range all {
		order[i] = i
		if _, ok := size[w.res.Src]; !ok {
			if fi, err := os.Stat(w.res.Src); err == nil {
				size[w.res.Src] = fi.Size()
			}
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return size[all[order[a]].res.Src] > size[all[order[b]].res.Src] })
	ready := make(chan int, len(all))
	for _, i := range order {
		ready <- i
	}
	close(ready)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards rep.CPU
	for w := 0; w < n && w < len(all); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ready {
				if ctx.Err() != nil {
					continue // drain: nothing new starts after cancel
				}
				wk := all[i]
				wk.job.Out = filepath.Join(tmp, fmt.Sprintf("%d-%s", i, ObjectName(wk.job.Src, wk.job.Target)))
				wk.job.DepFile = wk.job.Out + ".d"
				b.emit(Event{Kind: EventStart, Result: wk.res})
				t0 := time.Now()
				b.do(ctx, tcID, wk.job, wk.res)
				wk.res.Dur = time.Since(t0)
				mu.Lock()
				rep.CPU += wk.res.CPU
				mu.Unlock()
				b.emit(Event{Kind: EventDone, Result: wk.res})
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		rep.Wall = time.Since(start)
		return rep, err
	}

	var errs ErrorList
	for _, res := range rep.Results {
		if res.Status == StatusFailed {
			var ce *CompileError
			if !errors.As(res.Err, &ce) {
				ce = &CompileError{Src: res.Src, Target: res.Target, Err: res.Err}
			}
			errs = append(errs, ce)
		}
	}
	if err := b.writeOutputs(r, outDir, rep); err != nil {
		return rep, err
	}
	rep.Wall = time.Since(start)
	if len(errs) > 0 {
		errs.sort()
		return rep, errs
	}
	return rep, nil
}

// toolchainID is TC.ID, remembered in the cache under the compiler's
// stamp (as ccache's compiler_check=mtime): an unchanged binary is not run.
func (b *Builder) toolchainID(ctx context.Context) (string, error) {
	if b.Cache == nil {
		return b.TC.ID(ctx, b.Run)
	}
	h := newKeyHash("toolchain-id")
	h.line("stamp %s", b.TC.Stamp())
	k := h.Sum()
	if id, err := b.Cache.Get(k); err == nil && len(id) > 0 {
		return string(id), nil
	}
	id, err := b.TC.ID(ctx, b.Run)
	if err != nil {
		return "", err
	}
	_ = b.Cache.Put(k, []byte(id), StoreMeta{Kind: "toolchain-id", Toolchain: b.TC.Name(), ROCm: rocmOf(b.TC)})
	return id, nil
}

func (b *Builder) emit(e Event) {
	if b.Events != nil {
		b.Events(e)
	}
}

func (b *Builder) fail(res *Result, stderr []byte, err error) {
	res.Status = StatusFailed
	res.Err = &CompileError{Src: res.Src, Target: res.Target, Stderr: stderr, Err: err}
}

// do runs one job: cache lookup, else compile and record.
func (b *Builder) do(ctx context.Context, tcID string, j Job, res *Result) {
	started := time.Now().UnixNano()
	if err := b.TC.Check(j.Target); err != nil {
		b.fail(res, []byte(err.Error()), err)
		return
	}
	srcPath := filepath.Join(j.Dir, j.Src)
	base, err := b.baseKey(tcID, j, srcPath)
	if err != nil {
		b.fail(res, nil, err)
		return
	}
	meta := StoreMeta{Source: filepath.Base(res.Src), Target: j.Target.String(), Toolchain: b.TC.Name(), ROCm: rocmOf(b.TC)}
	if b.Cache != nil {
		if data, ok := b.lookup(base, j); ok {
			res.Status = StatusHit
			b.finish(res, data)
			return
		}
	}
	res.Argv = b.TC.Argv(j)
	out, err := b.Run.Run(ctx, Cmd{Dir: j.Dir, Argv: res.Argv})
	res.CPU = out.CPU
	if err != nil {
		if ctx.Err() != nil {
			res.Status = StatusSkipped
			res.Err = ctx.Err()
			return
		}
		b.fail(res, mapClangError(out.Stderr, j.Target, b.TC), err)
		return
	}
	data, err := os.ReadFile(j.Out)
	if err != nil {
		b.fail(res, out.Stderr, fmt.Errorf("compiler wrote no output: %w", err))
		return
	}
	if err := CheckObject(data, j.Target); err != nil {
		b.fail(res, nil, err)
		return
	}
	var deps []string
	if j.DepFile != "" {
		if df, err := os.ReadFile(j.DepFile); err == nil {
			if list, err := b.TC.Deps(df); err == nil {
				deps = b.headerList(j.Dir, srcPath, list)
			}
		}
	}
	if b.Cache != nil {
		// A source or header changed while the compiler ran may not match
		// the object: store nothing then (ccache's "too new" rule).
		if full, recs, err := b.fullKey(base, deps, nil); err == nil && !changedSince(srcPath, recs, started) {
			dj := depsEntry{Recorded: time.Now().UnixNano(), Files: recs}.marshal()
			dm := meta
			dm.Kind = "deps"
			if err := b.Cache.Put(depsKey(base), dj, dm); err == nil {
				meta.Kind = "object"
				_ = b.Cache.Put(full, data, meta)
			}
		}
	}
	res.Status = StatusCompiled
	b.finish(res, data)
}

// finish places a code object and fills the result.
func (b *Builder) finish(res *Result, data []byte) {
	sum := sha256.Sum256(data)
	res.SHA256 = hex.EncodeToString(sum[:])
	res.Size = len(data)
	res.data = data
	if names, err := KernelNames(data); err == nil {
		for _, n := range names {
			res.Kernels = append(res.Kernels, KernelUsage{Name: n})
		}
	}
	if b.ReadUsage != nil {
		if ku, err := b.ReadUsage(data); err == nil {
			res.Kernels = ku
		}
	}
	if err := writeIfChanged(res.Out, data); err != nil {
		st := res.Status
		b.fail(res, nil, err)
		_ = st
	}
}

// writeIfChanged places an output with safefile.Write (atomic; special
// files, links and read-only files as every rocmk output) unless path
// already holds exactly data (so a no-op rebuild does not touch outputs).
func writeIfChanged(path string, data []byte) error {
	return safefile.Write(path, data, safefile.Options{SkipIfSame: true})
}

// mapClangError turns clang's "cannot find ROCm device library for gfxN"
// into the toolchain's own unsupported-target message.
func mapClangError(stderr []byte, t inspect.Target, tc Toolchain) []byte {
	if bytes.Contains(stderr, []byte("cannot find ROCm device library for "+t.Proc)) {
		c, _ := tc.(*Clang)
		e := &UnsupportedTargetError{Target: t, Toolchain: tc.Name()}
		if c != nil {
			e.DeviceLibDir, e.Supported = c.DeviceLibDir, c.DeviceLibTargets
		}
		return []byte(e.Error() + "\n" + string(stderr))
	}
	return stderr
}

func rocmOf(tc Toolchain) string {
	if c, ok := tc.(*Clang); ok {
		if c.ROCmVersion != "" {
			return c.ROCmVersion
		}
		return c.HIPVersion
	}
	return ""
}

// baseKey is the action key without headers: everything known before
// compiling. It also names the job's "deps" entry (the header list recorded
// by the last compile), as in ccache's direct mode.
func (b *Builder) baseKey(tcID string, j Job, srcPath string) (Key, error) {
	h := b.newHash("compile " + j.Src + " " + j.Target.String())
	h.line("%s", cacheFormat)
	h.line("toolchain %s", tcID)
	lib, err := b.TC.DeviceLibID(j.Target)
	if err != nil {
		return Key{}, fmt.Errorf("device libraries: %w", err)
	}
	h.line("devicelibs %s", lib)
	h.line("target %s", j.Target)
	tmpl := j
	tmpl.Src, tmpl.Out, tmpl.DepFile, tmpl.Dir = "SRC", "OUT", "DEP", ""
	h.line("argv %q", b.TC.Argv(tmpl))
	for _, k := range b.TC.KeyEnv() {
		if v := b.Getenv(k); v != "" {
			h.line("env %s=%s", k, v)
		}
	}
	h.line("src %s", j.Src)
	sum, err := b.hashes.sum(srcPath)
	if err != nil {
		return Key{}, err
	}
	h.line("srchash %s", sum)
	return h.Sum(), nil
}

func (b *Builder) newHash(label string) *keyHash { return newKeyHash(label) }

func depsKey(base Key) Key {
	h := newKeyHash("deps")
	h.line("base %s", base)
	return h.Sum()
}

// depsEntry is the "deps" cache entry: the headers the last compile read,
// each with the stat data and hash it had then. It is stored as text
// (a version line, the record time, then "size mtime ctime ino sha256 path"
// per header) because every cached job reads one and JSON decoding of
// hundreds of records per job was most of a cached rebuild's time.
type depsEntry struct {
	Recorded int64 // unix ns when recorded
	Files    []depRecord
}

type depRecord struct {
	Path  string
	Size  int64
	MTime int64
	CTime int64
	Ino   uint64
	Hash  string
}

const depsMagic = "rocmk-deps v1"

func (d depsEntry) marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n%d\n", depsMagic, d.Recorded)
	for _, r := range d.Files {
		fmt.Fprintf(&b, "%d %d %d %d %s %s\n", r.Size, r.MTime, r.CTime, r.Ino, r.Hash, r.Path)
	}
	return b.Bytes()
}

func parseDepsEntry(data []byte) (depsEntry, error) {
	var d depsEntry
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) < 2 || lines[0] != depsMagic {
		return d, errors.New("bad deps entry")
	}
	var err error
	if d.Recorded, err = strconv.ParseInt(lines[1], 10, 64); err != nil {
		return d, err
	}
	d.Files = make([]depRecord, 0, len(lines)-2)
	for _, l := range lines[2:] {
		f := strings.SplitN(l, " ", 6)
		if len(f) != 6 || len(f[4]) != 64 || f[5] == "" {
			return d, errors.New("bad deps record")
		}
		var r depRecord
		var e1, e2, e3, e4 error
		r.Size, e1 = strconv.ParseInt(f[0], 10, 64)
		r.MTime, e2 = strconv.ParseInt(f[1], 10, 64)
		r.CTime, e3 = strconv.ParseInt(f[2], 10, 64)
		r.Ino, e4 = strconv.ParseUint(f[3], 10, 64)
		if err := errors.Join(e1, e2, e3, e4); err != nil {
			return d, err
		}
		r.Hash, r.Path = f[4], f[5]
		d.Files = append(d.Files, r)
	}
	return d, nil
}

// statSlack is how much older than the deps entry a file's ctime must be
// for its recorded hash to be trusted without reading it (ccache's "too
// new" guard: a file changed in the same instant as it was recorded is
// always re-read).
var statSlack = 2 * time.Second

// fullKey adds every header's content hash to the base key. With prev (the
// recorded deps entry), a header whose size, mtime, ctime and inode are
// unchanged since it was recorded, and that was not changed just before,
// keeps its recorded hash; every other header is read and hashed. ctime
// cannot be set by users, so "touch" (or any write) means a re-read, and
// an edit is never missed.
func (b *Builder) fullKey(base Key, deps []string, prev *depsEntry) (Key, []depRecord, error) {
	known := map[string]depRecord{}
	if prev != nil {
		for _, r := range prev.Files {
			known[r.Path] = r
		}
	}
	h := b.newHash("object " + base.String()[:12])
	h.line("base %s", base)
	recs := make([]depRecord, 0, len(deps))
	for _, d := range deps {
		var st depRecord
		var err error
		if prev != nil {
			st, err = b.stats.stat(d)
		} else {
			st, err = statOf(d) // fresh after a compile: changedSince needs the real ctime
		}
		if err != nil {
			return Key{}, nil, err
		}
		if r, ok := known[d]; ok && r.Size == st.Size && r.MTime == st.MTime && r.CTime == st.CTime && r.Ino == st.Ino &&
			st.CTime < prev.Recorded-int64(statSlack) {
			st.Hash = r.Hash
		} else {
			sum, err := b.hashes.sum(d)
			if err != nil {
				return Key{}, nil, err
			}
			st.Hash = sum
		}
		h.line("dep %s %s", d, st.Hash)
		recs = append(recs, st)
	}
	return h.Sum(), recs, nil
}

// statMemo remembers stat data for one Build, so a header shared by many
// jobs is stat'ed once (the build sees the tree as it was when it looked).
type statMemo struct {
	mu sync.Mutex
	m  map[string]depRecord
}

func (s *statMemo) reset() {
	s.mu.Lock()
	s.m = nil
	s.mu.Unlock()
}

func (s *statMemo) stat(p string) (depRecord, error) {
	s.mu.Lock()
	r, ok := s.m[p]
	s.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := statOf(p)
	if err != nil {
		return r, err
	}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]depRecord{}
	}
	s.m[p] = r
	s.mu.Unlock()
	return r, nil
}

func changedSince(src string, recs []depRecord, t int64) bool {
	if st, err := statOf(src); err != nil || st.CTime >= t {
		return true
	}
	for _, r := range recs {
		if r.CTime >= t || strings.ContainsAny(r.Path, "\n\r") { // (a name the deps entry cannot hold: do not cache)
			return true
		}
	}
	return false
}

func statOf(p string) (depRecord, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return depRecord{}, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	return depRecord{Path: p, Size: st.Size, MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(), Ino: st.Ino}, nil
}

// lookup tries the cache: the deps entry names the headers, their hashes
// give the object's key, and the object must pass the read-back check.
func (b *Builder) lookup(base Key, j Job) ([]byte, bool) {
	dj, err := b.Cache.Get(depsKey(base))
	if err != nil {
		return nil, false
	}
	de, err := parseDepsEntry(dj)
	if err != nil {
		return nil, false
	}
	deps := make([]string, len(de.Files))
	for i, r := range de.Files {
		deps[i] = r.Path
	}
	full, _, err := b.fullKey(base, deps, &de)
	if err != nil {
		return nil, false // a header is gone: miss
	}
	data, err := b.Cache.Get(full)
	if err != nil {
		return nil, false
	}
	if CheckObject(data, j.Target) != nil {
		return nil, false // never trust a cached object that is not what we asked for
	}
	return data, true
}

// headerList turns depfile prerequisites into absolute paths, without the
// source itself, sorted.
func (b *Builder) headerList(dir, src string, list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range list {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if p == src || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// fileHashes memoises content hashes per build, checked against the file's
// size and mtime so a file changed during the build is hashed again.
type fileHashes struct {
	mu    sync.Mutex
	m     map[string]fileHash
	locks sync.Map // path -> *sync.Mutex: one goroutine hashes a file at a time
}

type fileHash struct {
	size         int64
	mtime, ctime int64
	sum          string
}

func (fh *fileHashes) sum(path string) (string, error) {
	l, _ := fh.locks.LoadOrStore(path, new(sync.Mutex))
	l.(*sync.Mutex).Lock()
	defer l.(*sync.Mutex).Unlock()
	st, err := statOf(path)
	if err != nil {
		return "", err
	}
	fh.mu.Lock()
	if v, ok := fh.m[path]; ok && v.size == st.Size && v.mtime == st.MTime && v.ctime == st.CTime {
		fh.mu.Unlock()
		return v.sum, nil
	}
	fh.mu.Unlock()
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	s := hex.EncodeToString(h.Sum(nil))
	fh.mu.Lock()
	if fh.m == nil {
		fh.m = map[string]fileHash{}
	}
	fh.m[path] = fileHash{st.Size, st.MTime, st.CTime, s}
	fh.mu.Unlock()
	return s, nil
}

var _ = strings.TrimSpace
