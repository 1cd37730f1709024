package compile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/par"
	"github.com/rocmk/rocmk/compile/rspfile"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// cacheFormat is the first line of every action key: bump it when the key
// or the stored data changes meaning.
const cacheFormat = "rocmk-compile v2"

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
	TC toolchain.Toolchain
	// For is the toolchain of each target (a Session's ToolchainFor); nil:
	// TC builds every target. Its error fails that target's jobs.
	For    func(context.Context, inspect.Target) (toolchain.Toolchain, error)
	Run    runner.Runner // every exec goes through it
	Cache  Store         // nil: no cache
	Jobs   int           // parallel jobs; <= 0 means runtime.NumCPU()
	DryRun bool          // -n: plan and print commands (through Run), compile nothing
	// Fetch only looks every job up (through a remote tier: a pull into
	// the local cache): a hit writes no output, a miss compiles nothing
	// (StatusMissing), and no manifest, bundle or embedding is written.
	Fetch bool
	// Environ is the environment the compiler inherits, for the key
	// (nil: os.Environ; compilerEnv picks what is keyed).
	Environ func() []string
	Events  func(Event) // optional, must be goroutine-safe
	// Remote compiles the jobs that miss the cache on a cluster (nil:
	// here); a job it cannot place is compiled here.
	Remote *Remote

	hashes fileHashes
	paths  pathMemo                         // one stat per path per build
	scans  scanMemo                         // include scans, while the file is unchanged
	search par.Cache[string, searchResult]  // the compiler's search path per command line, per build
	groups par.Cache[string, groupResult]   // shared deps groups checked (by name), per build
	stored par.Cache[cache.ActionID, error] // shared deps groups stored (or found in the cache), per build
	libs   par.Cache[string, idResult]      // device-library directory -> identity, per build
	tcs    par.Cache[string, tcResult]      // target -> toolchain, per build
}

// tcResult is a target's toolchain and its identity, found once per build.
type tcResult struct {
	tc  toolchain.Toolchain
	id  string
	err error
}

// idResult is an identity, or why there is none.
type idResult struct {
	id  string
	err error
}

// Build runs every job of r and writes the outputs. It returns the report
// and, when some jobs failed, an ErrorList of *CompileError (the other jobs
// still ran). A cancelled context stops new jobs, kills running compilers
// and returns ctx.Err().
func (b *Builder) Build(ctx context.Context, r Request) (*Report, error) {
	start := time.Now()
	rep, all, outDir, err := b.plan(r)
	if err != nil {
		return nil, err
	}
	b.tcs.Clear()
	if b.DryRun {
		return b.dryRun(ctx, all, rep, start)
	}
	if !b.Fetch {
		if err := os.MkdirAll(outDir, 0o777); err != nil {
			return nil, err
		}
	}
	tmp, removeTmp, err := safefile.MkdirTemp("rocmk-build-")
	if err != nil {
		return nil, err
	}
	defer removeTmp()
	b.paths.reset()
	b.search.Clear()
	b.groups.Clear()
	b.stored.Clear()
	b.libs.Clear()
	if b.For == nil {
		// One toolchain: one that cannot say who it is stops the build.
		if _, _, err := b.toolchain(ctx, r.Targets[0]); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	}
	b.schedule(ctx, all, tmp, rep)
	if err := ctx.Err(); err != nil {
		rep.Wall = time.Since(start)
		return rep, err
	}
	return b.collect(r, outDir, rep, start)
}

// work is one job of a build and the result it fills.
type work struct {
	res *Result
	job toolchain.Job
}

// plan makes a build's jobs: sources in order, targets in order, each
// source a regular file (unless a dry run), named relative to the base
// directory. The targets and output names are Plan's to check (Session.Plan
// refuses two sources with one output before anything is written).
func (b *Builder) plan(r Request) (*Report, []*work, string, error) {
	if len(r.Sources) == 0 {
		return nil, nil, "", errors.New("no sources to build")
	}
	if len(r.Targets) == 0 {
		return nil, nil, "", errors.New("no targets to build for")
	}
	outDir := r.OutDir
	if outDir == "" {
		outDir = "."
	}
	baseDir, err := filepath.Abs(r.BaseDir)
	if err != nil {
		return nil, nil, "", err
	}
	flags, err := rspfile.Expand(r.Flags, baseDir)
	if err != nil {
		return nil, nil, "", err
	}
	flags = relFlags(flags, baseDir)
	rep := &Report{}
	var all []*work
	for _, src := range r.Sources {
		abs, err := filepath.Abs(src)
		if err != nil {
			return nil, nil, "", err
		}
		if !b.DryRun {
			fi, err := os.Stat(abs)
			if err != nil {
				return nil, nil, "", fmt.Errorf("source %s: %w", src, err)
			}
			if !fi.Mode().IsRegular() {
				return nil, nil, "", fmt.Errorf("source %s: not a regular file (%s)", src, fi.Mode().Type())
			}
		}
		// clang runs in the base directory and names the source relative
		// to it when it is inside: then nothing it records (file names in
		// the object, the dependency list) depends on where the project is.
		name := relPath(abs, baseDir)
		for _, t := range r.Targets {
			res := &Result{Src: src, Target: t, Status: StatusSkipped, Out: filepath.Join(outDir, ObjectName(src, t))}
			j := toolchain.Job{Src: name, Dir: baseDir, Target: t, Flags: flags}
			all = append(all, &work{res: res, job: j})
			rep.Results = append(rep.Results, res)
		}
	}
	return rep, all, outDir, nil
}

// dryRun prints each job's command through Run (a Shell that runs
// nothing) instead of building it (-n).
func (b *Builder) dryRun(ctx context.Context, all []*work, rep *Report, start time.Time) (*Report, error) {
	var errs ErrorList
	for _, w := range all {
		w.job.Out = w.res.Out
		if !filepath.IsAbs(w.job.Out) {
			w.job.Out, _ = filepath.Abs(w.job.Out)
		}
		tc, err := b.toolchainFor(ctx, w.job.Target)
		if err != nil {
			b.fail(w.res, []byte(err.Error()), err)
			errs = append(errs, w.res.Err.(*CompileError))
			continue
		}
		w.res.Argv = tc.Argv(w.job)
		if _, err := b.Run.Run(ctx, runner.Cmd{Dir: w.job.Dir, Argv: w.res.Argv}); err != nil {
			return rep, err
		}
	}
	rep.Wall = time.Since(start)
	if len(errs) > 0 {
		errs.sort()
		return rep, errs
	}
	return rep, nil
}

// schedule runs every job on a pool of b.Jobs workers (cf. cmd/go
// Builder.Do: the jobs have no dependencies on each other, so all are
// ready at once), biggest source first, each writing into tmp. After a
// cancel nothing new starts.
func (b *Builder) schedule(ctx context.Context, all []*work, tmp string, rep *Report) {
	n := b.Jobs
	if n <= 0 {
		n = runtime.NumCPU()
	}
	ready := make(chan int, len(all))
	for _, i := range longestFirst(all) {
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
				b.do(ctx, wk.job, wk.res)
				wk.res.Dur = time.Since(t0)
				mu.Lock()
				rep.CPU += wk.res.CPU
				mu.Unlock()
				b.emit(Event{Kind: EventDone, Result: wk.res})
			}
		}()
	}
	wg.Wait()
}

// longestFirst orders the jobs biggest source first (source size is a
// cheap proxy for compile time), so no long compile is left alone at the
// end while the other workers idle.
func longestFirst(all []*work) []int {
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
	return order
}

// collect gathers the failures and, unless a fetch, writes the outputs
// (objects, bundles, embeddings, manifest).
func (b *Builder) collect(r Request, outDir string, rep *Report, start time.Time) (*Report, error) {
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
	if b.Fetch {
		rep.Wall = time.Since(start)
		return rep, nil
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

// toolchainFor is the toolchain of target t: For's, else TC.
func (b *Builder) toolchainFor(ctx context.Context, t inspect.Target) (toolchain.Toolchain, error) {
	if b.For == nil {
		return b.TC, nil
	}
	return b.For(ctx, t)
}

// toolchain is t's toolchain and its identity, once per target per build.
// The identity is ID, remembered under Stamp (see remember): an unchanged
// compiler is neither run nor read.
func (b *Builder) toolchain(ctx context.Context, t inspect.Target) (toolchain.Toolchain, string, error) {
	o := b.tcs.Do(t.String(), func() (o tcResult) {
		if o.tc, o.err = b.toolchainFor(ctx, t); o.err != nil {
			return o
		}
		tc := o.tc
		o.id, o.err = toolchain.Remember(b.Cache, "toolchain", tc.Stamp(), func() (string, error) { return tc.ID(ctx, b.Run) })
		if o.err != nil {
			o.err = fmt.Errorf("%w: %v", toolchain.ErrToolchainNotFound, o.err)
		}
		return o
	})
	return o.tc, o.id, o.err
}

// deviceLibID is the content identity of the device libraries tc links
// for t, once per directory per build.
func (b *Builder) deviceLibID(tc toolchain.Toolchain, t inspect.Target) (string, error) {
	dir := tc.DeviceLibs(t)
	if dir == "" {
		return "none", nil
	}
	o := b.libs.Do(dir, func() idResult {
		id, err := toolchain.TreeIdentity(b.Cache, "devicelibs", dir)
		return idResult{id, err}
	})
	return o.id, o.err
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

// do runs one job: cache lookup, else scan the includes, compile and record.
func (b *Builder) do(ctx context.Context, j toolchain.Job, res *Result) {
	started := time.Now().UnixNano()
	tc, tcID, err := b.toolchain(ctx, j.Target)
	if err == nil {
		res.Toolchain = tc.Name()
		err = tc.Check(j.Target)
	}
	if err != nil {
		b.fail(res, []byte(err.Error()), err)
		return
	}
	base, err := b.baseKey(tc, tcID, j)
	if err != nil {
		b.fail(res, nil, err)
		return
	}
	meta := cache.Meta{Source: filepath.Base(res.Src), Target: j.Target.String(), Toolchain: tc.Name(), ROCm: rocmOf(tc)}
	var prev *depsEntry // the job's deps entry as the lookup read it
	if b.Cache != nil {
		var co *inspect.CodeObject
		var remote, ok bool
		if co, remote, prev, ok = b.lookup(base, j, readRoots(tc, j, b.environ())); ok {
			res.Status, res.Cache = StatusHit, "local"
			if remote {
				res.Cache = "remote"
			}
			b.finish(res, co)
			return
		}
	}
	if b.Fetch {
		res.Status = StatusMissing
		return
	}
	if b.Remote != nil {
		if b.remote(ctx, tc, tcID, base, j, res) {
			return
		}
		res.Where = "local"
		release, ok := b.Remote.localSlot(ctx)
		if !ok {
			res.Status, res.Err = StatusSkipped, ctx.Err()
			return
		}
		defer release()
	}
	// The scan runs before the compiler so that an include of a FIFO or a
	// device is refused instead of hanging the compiler. Without a search
	// path (the compiler rejected the flags) the compiler's own error says why.
	why := ""
	sp, err := b.searchPath(ctx, tc, j)
	var g *includeGraph
	if err == nil {
		g, err = b.scanJob(j.Dir, sp, j.Src)
		var refused *refusedIncludeError
		if errors.As(err, &refused) {
			b.fail(res, []byte(err.Error()), err)
			return
		}
	}
	if err != nil {
		why = err.Error()
	}
	res.Argv = tc.Argv(j)
	out, err := b.Run.Run(ctx, runner.Cmd{Dir: j.Dir, Argv: res.Argv})
	res.CPU = out.CPU
	if err != nil {
		if ctx.Err() != nil {
			res.Status = StatusSkipped
			res.Err = ctx.Err()
			return
		}
		b.fail(res, mapClangError(out.Stderr, j.Target, tc), err)
		return
	}
	data, err := safefile.Read(j.Out, maxObjectSize)
	if err != nil {
		b.fail(res, out.Stderr, fmt.Errorf("compiler wrote no output: %w", err))
		return
	}
	co, err := toolchain.ReadObject(data, j.Target)
	if err != nil {
		b.fail(res, nil, err)
		return
	}
	if b.Cache != nil {
		b.storeCompiled(tc, j, g, sp, why, started, base, prev, data, meta)
	}
	res.Status = StatusCompiled
	b.finish(res, co)
}

// storeCompiled stores a compiled object with its dependencies, or logs why
// it is not stored (why: the include scan failed; or the dependency file
// could not be read or recorded).
func (b *Builder) storeCompiled(tc toolchain.Toolchain, j toolchain.Job, g *includeGraph, sp *toolchain.SearchPath, why string, started int64,
	base cache.ActionID, prev *depsEntry, data []byte, meta cache.Meta) {
	var own, shared []depRecord
	if why == "" {
		var list []string
		if df, err := safefile.Read(j.DepFile, maxScanSize); err != nil {
			why = err.Error()
		} else if list, err = tc.Deps(df); err != nil {
			why = err.Error()
		} else {
			own, shared, why = b.recordDeps(j, g, sp, list, started)
		}
	}
	if why != "" {
		// Logged with ROCMK_DEBUG=cachehash=1, next to the keys.
		cache.NewHash("not stored "+j.Src+" "+j.Target.String()).Line("reason %s", why)
		return
	}
	b.storeDeps(base, prev, own, shared, data, meta)
}

// finish places a code object and fills the result from its one parse.
func (b *Builder) finish(res *Result, co *inspect.CodeObject) {
	sum := sha256.Sum256(co.Data)
	res.SHA256 = hex.EncodeToString(sum[:])
	res.Size = len(co.Data)
	res.Object = co
	res.Kernels = kernelUsage(co)
	if b.Fetch {
		return
	}
	if err := writeIfChanged(res.Out, co.Data); err != nil {
		b.fail(res, nil, err)
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
func mapClangError(stderr []byte, t inspect.Target, tc toolchain.Toolchain) []byte {
	if bytes.Contains(stderr, []byte("cannot find ROCm device library for "+t.Proc)) {
		c, _ := tc.(*toolchain.Clang)
		e := &toolchain.UnsupportedTargetError{Target: t, Toolchain: tc.Name()}
		if c != nil {
			e.DeviceLibDir, e.Supported = c.DeviceLibDir, c.DeviceLibTargets
		}
		return []byte(e.Error() + "\n" + string(stderr))
	}
	return stderr
}

func rocmOf(tc toolchain.Toolchain) string {
	if c, ok := tc.(*toolchain.Clang); ok {
		if c.ROCmVersion != "" {
			return c.ROCmVersion
		}
		return c.HIPVersion
	}
	return ""
}

// environ is the environment the compiler inherits.
func (b *Builder) environ() []string {
	if b.Environ != nil {
		return b.Environ()
	}
	return os.Environ()
}

// baseKey is the action key without headers: everything known before
// compiling. It also names the job's "deps" entry (what the last compile
// depended on), as in ccache's direct mode. Paths in it are as the compiler
// sees them: relative to the base directory inside it, absolute outside.
func (b *Builder) baseKey(tc toolchain.Toolchain, tcID string, j toolchain.Job) (cache.ActionID, error) {
	h := cache.NewHash("compile " + j.Src + " " + j.Target.String())
	h.Line("%s", cacheFormat)
	h.Line("toolchain %s", tcID)
	lib, err := b.deviceLibID(tc, j.Target)
	if err != nil {
		return cache.ActionID{}, fmt.Errorf("device libraries: %w", err)
	}
	h.Line("devicelibs %s", lib)
	h.Line("target %s", j.Target)
	tmpl := j
	tmpl.Out, tmpl.DepFile, tmpl.Dir = "OUT", "DEP", ""
	h.Line("argv %q", keyArgv(tc, tmpl))
	if f := locationFlag(j.Flags); f != "" {
		// The object records where it was built (debug info, profiles):
		// the base directory is an input.
		h.Line("location %s (%s)", j.Dir, f)
	}
	for _, kv := range toolchain.CompilerEnv(b.environ()) {
		h.Line("env %s", kv)
	}
	h.Line("src %s", j.Src)
	sum, err := b.hashes.sum(absName(j.Dir, j.Src))
	if err != nil {
		return cache.ActionID{}, err
	}
	h.Line("srchash %s", sum)
	return h.Sum(), nil
}

// keyArgv is the command line as keys hold it: a directory of device
// libraries rocmk generated is named by its content (the devicelibs line),
// not by where this machine's cache keeps it.
func keyArgv(tc toolchain.Toolchain, j toolchain.Job) []string {
	argv := tc.Argv(j)
	if c, ok := tc.(*toolchain.Clang); ok && c.GeneratedLibs {
		for i, a := range argv {
			if a == "--hip-device-lib-path="+c.DeviceLibDir {
				argv[i] = "--hip-device-lib-path=<generated>"
			}
		}
	}
	return argv
}

// depsKey names a job's deps entry. Its line differs from every object
// key's ("base ..."), so a job with no records cannot collide with it.
func depsKey(base cache.ActionID) cache.ActionID {
	h := cache.NewHash("deps")
	h.Line("deps of %s", base)
	return h.Sum()
}

// objectKey is the base key plus every record with its value, and the
// digest of each shared group's current values.
func (b *Builder) objectKey(base cache.ActionID, recs []depRecord, groups []cache.ActionID) cache.ActionID {
	h := cache.NewHash("object " + base.String()[:12])
	h.Line("base %s", base)
	for _, g := range groups {
		h.Line("group %s", g)
	}
	for _, r := range recs {
		h.Line("%s", r.keyLine())
	}
	return h.Sum()
}

// groupDigest identifies a group of records with their values: the group's
// name in deps entries when recorded, and what the object key holds.
func (b *Builder) groupDigest(recs []depRecord) cache.ActionID {
	h := cache.NewHash("deps-group")
	for _, r := range recs {
		h.Line("%s", r.keyLine())
	}
	return h.Sum()
}

// groupKey names the entry that stores a shared group.
func groupKey(id cache.ActionID) cache.ActionID {
	h := cache.NewHash("deps-group entry")
	h.Line("deps group %s", id)
	return h.Sum()
}

// groupResult is what checking a shared group found.
type groupResult struct {
	digest cache.ActionID
	read   bool // the entry was in the cache (its records may be stale)
	err    error
}

// currentGroup reads a shared group and returns the digest of its records'
// current values (errStale if one no longer holds).
func (b *Builder) currentGroup(id, baseDir string, roots []string) (cache.ActionID, error) {
	r := b.groups.Do(id, func() groupResult { return b.checkGroup(id, baseDir, roots) })
	return r.digest, r.err
}

func (b *Builder) checkGroup(id, baseDir string, roots []string) groupResult {
	var k cache.ActionID
	if _, err := hex.Decode(k[:], []byte(id)); err != nil {
		return groupResult{err: err}
	}
	data, err := get(b.Cache, groupKey(k))
	if err != nil {
		return groupResult{err: err}
	}
	g, err := parseDepsEntry(data, groupMagic)
	if err == nil && len(g.Alts) != 1 {
		err = errors.New("bad deps group")
	}
	if err != nil {
		return groupResult{err: err}
	}
	if !recordsUnder(g.Alts[0].Files, baseDir, roots) {
		return groupResult{read: true, err: errStale} // see readRoots
	}
	cur, err := b.currentRecords(baseDir, g.Alts[0])
	if err != nil {
		return groupResult{read: true, err: err}
	}
	return groupResult{read: true, digest: b.groupDigest(cur)}
}

// groupFound reports whether a lookup of this build read the group from
// the cache.
func (b *Builder) groupFound(id cache.ActionID) bool {
	r, ok := b.groups.Get(id.String())
	return ok && r.read // a check still in progress says no: one more put
}

// storeGroup stores a shared group unless the cache has it, once per build
// (the jobs that share it would otherwise all write it, and upload it to a
// remote cache, at once).
func (b *Builder) storeGroup(id cache.ActionID, recs []depRecord, now int64, m cache.Meta) error {
	return b.stored.Do(id, func() error {
		if b.groupFound(id) {
			return nil
		}
		m.Source, m.Target = "(shared)", "" // one group serves every source and target with these flags
		g := depsEntry{Alts: []depsAlt{{Recorded: now, Files: recs}}}
		return put(b.Cache, groupKey(id), g.marshal(groupMagic), m)
	})
}

// storeDeps stores a compile's records: the shared group (unless the cache
// has it), then the job's deps entry with this record set first, then the
// object. prev is the deps entry the lookup read (nil: none): reading it
// again would cost a remote cache a second round trip, or a second
// timeout.
func (b *Builder) storeDeps(base cache.ActionID, prev *depsEntry, own, shared []depRecord, data []byte, meta cache.Meta) {
	now := time.Now().UnixNano()
	dm := meta
	dm.Kind = "deps"
	alt := depsAlt{Recorded: now, Files: own}
	var groups []cache.ActionID
	if len(shared) > 0 {
		id := b.groupDigest(shared)
		if err := b.storeGroup(id, shared, now, dm); err != nil {
			return
		}
		alt.Groups = []string{id.String()}
		groups = []cache.ActionID{id}
	}
	de := depsEntry{Alts: []depsAlt{alt}}
	if prev != nil {
		for _, a := range prev.Alts {
			if len(de.Alts) < maxAlts && !a.sameInputs(alt) {
				de.Alts = append(de.Alts, a)
			}
		}
	}
	if err := put(b.Cache, depsKey(base), de.marshal(depsMagic), dm); err == nil {
		meta.Kind = "object"
		_ = put(b.Cache, b.objectKey(base, own, groups), data, meta)
	}
}

// statSlack is how much older than the deps entry a file's ctime must be
// for its recorded hash to be trusted without reading it (ccache's "too
// new" guard: a file changed in the same instant as it was recorded is
// always re-read).
var statSlack = 2 * time.Second

// errStale says a recorded input no longer holds: a cache miss.
var errStale = errors.New("recorded input changed")

// currentRecords checks a deps entry against the tree as this build sees it
// (one stat per path per build) and returns the records with their current
// values. A probe whose state changed, or a file that is gone, is a miss
// (errStale). A file whose size, mtime, ctime and inode are unchanged since
// it was recorded, and that was not changed just before, keeps its recorded
// hash; every other file is read and hashed. ctime cannot be set by users,
// so "touch" (or any write) means a re-read, and an edit is never missed.
func (b *Builder) currentRecords(baseDir string, de depsAlt) ([]depRecord, error) {
	cur := make([]depRecord, len(de.Files))
	for i, r := range de.Files {
		pi := b.paths.stat(absName(baseDir, r.Path))
		switch r.Kind {
		case recFile:
			if !pi.regular() {
				return nil, errStale
			}
			if r.Size == pi.Size && r.MTime == pi.MTime && r.CTime == pi.CTime && r.Ino == pi.Ino &&
				pi.CTime < de.Recorded-int64(statSlack) {
				break
			}
			sum, err := b.hashes.sum(absName(baseDir, r.Path))
			if err != nil {
				return nil, errStale
			}
			r.Hash = sum
		case recProbe:
			if pi.headerState() != r.State {
				return nil, errStale
			}
		case recSearchDir:
			if pi.dirState() != r.State {
				return nil, errStale
			}
		case recInstall:
			if b.paths.listing(absName(baseDir, r.Path)) != r.State {
				return nil, errStale
			}
		}
		cur[i] = r
	}
	return cur, nil
}

// lookup tries the cache: each record set of the deps entry, newest first,
// names inputs whose current values give an object's key; the object must
// pass the read-back check. remote says the object came from a remote
// tier's server.
func (b *Builder) lookup(base cache.ActionID, j toolchain.Job, roots []string) (co *inspect.CodeObject, remote bool, deps *depsEntry, ok bool) {
	dj, err := get(b.Cache, depsKey(base))
	if err != nil {
		return nil, false, nil, false
	}
	de, err := parseDepsEntry(dj, depsMagic)
	if err != nil {
		return nil, false, nil, false
	}
alts:
	for _, alt := range de.Alts {
		groups := make([]cache.ActionID, len(alt.Groups))
		for i, id := range alt.Groups {
			if groups[i], err = b.currentGroup(id, j.Dir, roots); err != nil {
				continue alts
			}
		}
		if !recordsUnder(alt.Files, j.Dir, roots) {
			continue // see readRoots
		}
		cur, err := b.currentRecords(j.Dir, alt)
		if err != nil {
			continue
		}
		data, e, err := b.Cache.GetBytes(b.objectKey(base, cur, groups))
		if err != nil {
			continue
		}
		co, err := toolchain.ReadObject(data, j.Target)
		if err != nil {
			continue // never trust a cached object that is not what we asked for
		}
		return co, e.Remote, &de, true
	}
	return nil, false, &de, false
}

// recordDeps turns a compile's depfile and the include scan made before it
// into records, with fresh stat data. It returns why nothing may be stored
// when the records could not prove a later hit right: an input changed
// while the compiler ran (ccache's "too new" rule), a lookup the scan could
// not resolve (#include MACRO), a file the compiler read that the scan did
// not reach, or a file that names the clock (__TIME__).
//
// Records of lookups made in files outside the base directory (named
// absolute: system headers) and on the command line, and the search path's
// own records, are returned as shared: the same for every source with these
// flags. The others (lookups in the project's files) are the job's own.
func (b *Builder) recordDeps(j toolchain.Job, g *includeGraph, sp *toolchain.SearchPath, depfile []string, started int64) (own, shared []depRecord, why string) {
	if !recordsSupported {
		return nil, nil, "include records are not supported on this OS"
	}
	if sp.Unmodelled != "" {
		return nil, nil, sp.Unmodelled + ": header lookups the include scan does not follow"
	}
	src := absName(j.Dir, j.Src)
	if pi := statPath(src); !pi.regular() || pi.CTime >= started || !pi.sameFile(g.src) {
		return nil, nil, j.Src + " changed during the compile"
	}
	read := map[fileID]string{}
	for _, name := range depfile {
		pi := statPath(absName(j.Dir, name))
		if pi.Err != nil {
			return nil, nil, fmt.Sprintf("depfile lists %s: %v", name, pi.Err)
		}
		read[pi.id()] = name
	}
	srcID := g.files[inclusion{name: j.Src, idx: -1}]
	read[srcID] = j.Src // read whether or not the depfile says so
	readIn := func(in inclusion) bool {
		if in == commandLine {
			return true
		}
		_, ok := read[g.files[in]]
		return ok
	}
	for in, fs := range g.scans {
		if fs.Clock && readIn(in) {
			return nil, nil, in.name + " uses __DATE__, __TIME__ or __TIMESTAMP__"
		}
	}
	recorded := map[fileID]bool{srcID: true}
	for _, l := range g.lookups {
		if !readIn(l.from) {
			continue // in a file the compiler did not read: it made no such lookup
		}
		if l.opaque {
			return nil, nil, fmt.Sprintf("%s:%d: a header lookup whose name or includer is not fixed (a macro)", displayName(l.from), l.ref.Line)
		}
		dst := &shared
		if l.from != commandLine && !strings.HasPrefix(l.from.name, "/") {
			dst = &own
		}
		for i, name := range l.cands {
			abs := absName(j.Dir, name)
			pi := statPath(abs)
			st := pi.headerState()
			if st != l.states[i] {
				return nil, nil, name + " appeared, disappeared or changed type during the compile"
			}
			if _, ok := read[pi.id()]; ok && st == "present" {
				// The file at this path must be the one the scan saw before
				// the compile, and still be it once hashed: a directory
				// renamed or a link flipped meanwhile puts another file,
				// with an old ctime, at the same name.
				if pi.CTime >= started || !pi.sameFile(l.infos[i]) {
					return nil, nil, name + " changed or was replaced during the compile"
				}
				sum, err := b.hashes.sum(abs)
				if err != nil {
					return nil, nil, err.Error()
				}
				if !statPath(abs).sameFile(pi) {
					return nil, nil, name + " changed or was replaced during the compile"
				}
				*dst = append(*dst, depRecord{Kind: recFile, Path: name, Size: pi.Size, MTime: pi.MTime, CTime: pi.CTime, Ino: pi.Ino, Hash: sum})
				recorded[pi.id()] = true
				continue
			}
			*dst = append(*dst, depRecord{Kind: recProbe, Path: name, State: st})
		}
	}
	for id, name := range read {
		if !recorded[id] {
			return nil, nil, "the include scan did not find how the compiler reached " + name
		}
	}
	for _, d := range sp.Missing {
		st := statPath(absName(j.Dir, d)).dirState()
		if st != "none" {
			return nil, nil, d + " was created during the compile"
		}
		shared = append(shared, depRecord{Kind: recSearchDir, Path: d, State: st})
	}
	for _, d := range sp.Installs {
		shared = append(shared, depRecord{Kind: recInstall, Path: d, State: dirListing(absName(j.Dir, d))})
	}
	for _, r := range append(own, shared...) {
		if strings.ContainsAny(r.Path, "\n\r") {
			return nil, nil, fmt.Sprintf("%q: a name the deps entry cannot hold", r.Path)
		}
	}
	return sortRecords(own), sortRecords(shared), ""
}

// searchResult is Toolchain.SearchPath's answer for one command line.
type searchResult struct {
	sp  *toolchain.SearchPath
	err error
}

func (b *Builder) searchPath(ctx context.Context, tc toolchain.Toolchain, j toolchain.Job) (*toolchain.SearchPath, error) {
	tmpl := j
	tmpl.Src, tmpl.Out, tmpl.DepFile = "SRC", "OUT", ""
	k := j.Dir + "\x00" + strings.Join(tc.Argv(tmpl), "\x00")
	r := b.search.Do(k, func() searchResult {
		sp, err := tc.SearchPath(ctx, b.Run, j)
		return searchResult{sp, err}
	})
	return r.sp, r.err
}

// locationFlag returns the first flag that makes an object depend on the
// directory it was built in (debug info and profiles record the working
// directory; prefix maps and raw -Xclang options may name it), or "".
func locationFlag(flags []string) string {
	for _, f := range flags {
		switch {
		case strings.HasPrefix(f, "-g") && f != "-g0",
			strings.HasPrefix(f, "-fdebug-"), strings.HasPrefix(f, "-ffile-"), strings.HasPrefix(f, "-fmacro-prefix-map"),
			strings.HasPrefix(f, "-fprofile"), strings.HasPrefix(f, "-fcoverage"), strings.HasPrefix(f, "-ftest-coverage"),
			strings.HasPrefix(f, "--coverage"), strings.HasPrefix(f, "-Xclang"), strings.HasPrefix(f, "-Xpreprocessor"),
			strings.HasPrefix(f, "-Wp,"), strings.HasPrefix(f, "-Xarch"):
			return f
		}
	}
	return ""
}

// pathFlags take a path the compiler resolves from its working directory.
var pathFlags = []string{"-iquote", "-isystem", "-idirafter", "-include", "-imacros", "-I"}

// relFlags rewrites the paths of pathFlags that lie inside baseDir relative
// to it (the compiler runs there, so it finds the same files), so the
// command line, and the key, are the same wherever the project is.
func relFlags(flags []string, baseDir string) []string {
	out := make([]string, len(flags))
	for i := 0; i < len(flags); i++ {
		out[i] = flags[i]
		for _, pf := range pathFlags {
			if flags[i] == pf && i+1 < len(flags) {
				i++
				out[i] = relPath(flags[i], baseDir)
				break
			}
			if strings.HasPrefix(flags[i], pf) && len(flags[i]) > len(pf) {
				out[i] = pf + relPath(flags[i][len(pf):], baseDir)
				break
			}
		}
	}
	return out
}

// relPath is p relative to baseDir if p is a clean absolute path inside it
// (a path with ".." through a symlink is left alone), else p.
func relPath(p, baseDir string) string {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return p
	}
	rel, err := filepath.Rel(baseDir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return p
	}
	return rel
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
	dev, ino     uint64
	sum          string
}

func (fh *fileHashes) sum(path string) (string, error) {
	l, _ := fh.locks.LoadOrStore(path, new(sync.Mutex))
	l.(*sync.Mutex).Lock()
	defer l.(*sync.Mutex).Unlock()
	st := statPath(path)
	if st.Err != nil {
		return "", st.Err
	}
	fh.mu.Lock()
	if v, ok := fh.m[path]; ok && v.size == st.Size && v.mtime == st.MTime && v.ctime == st.CTime && v.dev == st.Dev && v.ino == st.Ino {
		fh.mu.Unlock()
		return v.sum, nil
	}
	fh.mu.Unlock()
	sum, _, err := cache.HashFile(path, maxScanSize)
	if err != nil {
		return "", err
	}
	s := sum.String()
	fh.mu.Lock()
	if fh.m == nil {
		fh.m = map[string]fileHash{}
	}
	fh.m[path] = fileHash{st.Size, st.MTime, st.CTime, st.Dev, st.Ino, s}
	fh.mu.Unlock()
	return s, nil
}
