package compile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/slurm"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// SessionOptions are what a command knows before it builds anything.
type SessionOptions struct {
	// Discovery: --rocm-path, the environment, and the fakes tests use
	// (see FindOptions).
	ROCmPath string
	Getenv   func(string) string
	Root     string
	LookPath func(string) (string, error)
	// Runner runs every program of the session (nil: ExecRunner).
	Runner runner.Runner
	Layout string // --layout ("" = clang)
	// Clang pins the clang of every target (--clang; "" = ROCMK_CLANG,
	// else the candidates' order, see Candidate).
	Clang string

	// CacheDir is --cache-dir ("" = ROCMK_CACHE_DIR, else the user cache
	// directory; ROCMK_CACHE=off wins over both). NoCache opens none.
	CacheDir string
	NoCache  bool
	// CacheIfPresent opens the cache only if its directory exists (doctor,
	// targets, build -n: they remember probes and generated device
	// libraries there, but do not create a cache).
	CacheIfPresent bool
	// OpenTier puts a shared server behind the local cache (nil: none):
	// cache/remote.Open with the resolved configuration.
	OpenTier func(local *cache.Cache) (Tier, error)

	// Project is the project file the command loaded (--project, else
	// ./rocmk.toml): Plan reads it instead of loading it again. nil: Plan
	// loads it.
	Project *Project

	Jobs int // parallel compiles (<= 0: one per CPU)
	// DebugLog receives the ROCMK_DEBUG=cachehash=1 lines (nil: stderr).
	DebugLog io.Writer
	// Warn and Verbose receive the session's messages (nil: discarded).
	Warn, Verbose func(format string, a ...any)
}

// Tier is a remote cache behind the local one (a *cache/remote.Tier): a
// Store whose lookups go local first, then to the server.
type Tier interface {
	Store
	Local() *cache.Cache
	// Close flushes the uploads (within a deadline, not past ctx).
	Close(ctx context.Context) error
	// Counters are this run's remote hits, misses, errors and traffic.
	Counters() cache.RemoteStats
}

// Session is one command's build set-up, made once (cf. containerd's
// commands.NewClient): the Runner every program goes through, the
// toolchain Resolver (which finds the toolchain on first use), and the
// cache with its remote tier. `rocmk build`, `verify`, `port` and `doctor`
// each open one. Its methods are safe for concurrent use.
type Session struct {
	o     SessionOptions
	Run   runner.Runner
	res   *toolchain.Resolver
	local *cache.Cache
	tier  Tier

	mu             sync.Mutex
	recorded       bool // a build ran: the cache's statistics and trimming follow
	hits, compiled int  // of the builds recorded
	restoreDebug   func()
}

// OpenSession makes a session: it opens the cache (a cache that cannot be
// opened is a warning, not an error: builds go on without it) and the
// remote tier. The toolchain is found when first needed.
func OpenSession(o SessionOptions) (*Session, error) {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	for _, f := range []*func(string, ...any){&o.Warn, &o.Verbose} {
		if *f == nil {
			*f = func(string, ...any) {}
		}
	}
	s := &Session{o: o, Run: o.Runner}
	if s.Run == nil {
		s.Run = runner.ExecRunner{}
	}
	if o.DebugLog != nil {
		s.restoreDebug = cache.SetDebugHook(o.Getenv, o.DebugLog)
	}
	if err := s.openCache(); err != nil {
		return nil, err
	}
	s.res = toolchain.New(toolchain.Options{ROCmPath: o.ROCmPath, Getenv: o.Getenv, Root: o.Root, LookPath: o.LookPath,
		Runner: s.Run, Layout: o.Layout, Clang: o.Clang, Store: s.Store(), CacheDir: s.CacheDir(), Verbose: o.Verbose})
	return s, nil
}

// openCache opens the session's cache and its remote tier, unless the
// options say none.
func (s *Session) openCache() error {
	o := s.o
	if o.NoCache {
		return nil
	}
	c, err := openCache(o.CacheDir, o.Getenv, o.CacheIfPresent)
	if err != nil {
		o.Warn("build cache unavailable (%v); building without it", err)
		return nil
	}
	if c == nil {
		return nil // ROCMK_CACHE=off
	}
	s.local = c
	if o.OpenTier != nil {
		t, err := o.OpenTier(c)
		if err != nil {
			s.Close(context.Background())
			return err
		}
		s.tier = t
	}
	return nil
}

// openCache opens the build cache: dir, else ROCMK_CACHE_DIR, else the
// user cache directory. ROCMK_CACHE=off gives nil, and so does a directory
// that does not exist when ifPresent.
func openCache(dir string, getenv func(string) string, ifPresent bool) (*cache.Cache, error) {
	loc, err := cache.ResolveDir(dir, getenv)
	switch {
	case err != nil:
		return nil, err
	case loc.Off:
		return nil, nil
	}
	dir = loc.Dir
	if ifPresent {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, nil
		}
	}
	return cache.Open(dir)
}

// Store is the session's cache for a Builder: the remote tier, the local
// cache, or nil (none).
func (s *Session) Store() Store {
	switch {
	case s.tier != nil:
		return s.tier
	case s.local != nil:
		return s.local
	}
	return nil
}

// CacheDir is the local cache's directory ("": no cache).
func (s *Session) CacheDir() string {
	if s.local == nil {
		return ""
	}
	return s.local.Dir()
}

// Project is the project file the command loaded (nil: none, or not
// loaded yet).
func (s *Session) Project() *Project { return s.o.Project }

// Resolver is the session's toolchain resolver: discovery, each target's
// toolchain, probes, GPUs and doctor's checkup.
func (s *Session) Resolver() *toolchain.Resolver { return s.res }

// BuildOptions are a Builder's per-command settings.
type BuildOptions struct {
	DryRun bool      // -n: print the commands on Print, run nothing
	Print  io.Writer // -x (or -n): print each command
	Fetch  bool      // look up only: a pull into the local cache (see Builder.Fetch)
	Events func(Event)
}

// Builder is a Builder over the session's toolchain, Runner and cache.
func (s *Session) Builder(o BuildOptions) (*Builder, error) {
	tc, err := s.res.Toolchain()
	if err != nil {
		return nil, err
	}
	return newBuilder(tc, s.res.ToolchainFor, s.Run, s.Store(), s.o.Jobs, o), nil
}

// newBuilder is the one place a Builder is made (a session's builds and
// the AMD images of ImageBuilder): tc builds every target, or forTarget
// chooses each one's; o.Print wraps run in a Shell (-x, -n), and a dry
// run uses no cache.
func newBuilder(tc toolchain.Toolchain, forTarget func(context.Context, inspect.Target) (toolchain.Toolchain, error),
	run runner.Runner, store Store, jobs int, o BuildOptions) *Builder {
	if o.Print != nil {
		run = &runner.Shell{Runner: run, Print: o.Print, DryRun: o.DryRun}
	}
	b := &Builder{TC: tc, For: forTarget, Run: run, Jobs: jobs, DryRun: o.DryRun, Fetch: o.Fetch, Events: o.Events}
	if !o.DryRun {
		b.Cache = store
	}
	return b
}

// Build runs one Builder over r and records its hits and compiles for the
// cache's statistics.
func (s *Session) Build(ctx context.Context, r Request, o BuildOptions) (*Report, error) {
	b, err := s.Builder(o)
	if err != nil {
		return nil, err
	}
	if r.Executor == "slurm" && !o.DryRun && !o.Fetch {
		if b.Remote, err = s.remote(ctx, r); err != nil {
			return nil, err
		}
		if b.Remote != nil {
			b.Jobs = b.Remote.poolSize(b.Jobs)
		}
	}
	rep, err := b.Build(ctx, r)
	if b.Remote != nil {
		b.Remote.Exec.Close() // the allocation goes back
		if ctx.Err() != nil {
			b.Remote.Exec.Sweep() // no job of a cancelled build is left behind
		}
	}
	if rep != nil && !o.DryRun && !o.Fetch && !errors.Is(err, context.Canceled) {
		s.record(rep)
	}
	if rep != nil {
		if w := s.res.OlderDeviceLibs(ctx, r.Targets); w != "" {
			rep.Warnings = append(rep.Warnings, w)
		}
	}
	return rep, err
}

// remote is the cluster executor of a build (nil: Slurm is unavailable,
// one warning, and the build is local). The nodes read and write the
// session's cache directory: it must be on a filesystem they share.
func (s *Session) remote(ctx context.Context, r Request) (*Remote, error) {
	if s.local == nil {
		return nil, errors.New("--executor slurm: the nodes return results through the cache, and this build has none (ROCMK_CACHE=off or --no-cache?)")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--executor slurm: %w", err)
	}
	o := r.Slurm
	o.Dir = filepath.Join(s.local.Dir(), "slurm-jobs") // shared with the nodes, as the cache is
	e := slurm.New(o, nil, s.o.Warn)
	if _, err := e.Check(ctx); err != nil {
		return nil, nil // Check warned
	}
	return &Remote{Exec: e, Self: self, Warn: s.o.Warn, local: make(chan struct{}, runtime.NumCPU()),
		Spec: WorkerSpec{ROCmPath: s.o.ROCmPath, Layout: s.o.Layout, Clang: s.o.Clang, CacheDir: s.local.Dir()}}, nil
}

func (s *Session) record(rep *Report) {
	s.mu.Lock()
	s.recorded = true
	s.hits += rep.Count(StatusHit)
	s.compiled += rep.Count(StatusCompiled)
	s.mu.Unlock()
}

// PullReport is what a pull found (rocmk.cache.pull/v1).
type PullReport struct {
	Jobs    []*Result          `json:"jobs"`
	Local   int                `json:"local"`   // already in the local cache
	Remote  int                `json:"remote"`  // fetched from the server
	Missing int                `json:"missing"` // the server has none: they compile on the next build
	Counts  *cache.RemoteStats `json:"remote_counters,omitempty"`
}

// Pull fetches what building r would need from the remote tier into the
// local cache, compiling nothing (Builder.Fetch), and closes the session.
func (s *Session) Pull(ctx context.Context, r Request, events func(Event)) (*PullReport, error) {
	if s.tier == nil {
		s.Close(ctx)
		return nil, errors.New("cache pull: no remote cache behind a local one (ROCMK_CACHE=off?)")
	}
	rep, err := s.Build(ctx, r, BuildOptions{Fetch: true, Events: events})
	p := &PullReport{Counts: s.Close(ctx)}
	if err != nil {
		return nil, err
	}
	p.Jobs = rep.Results
	for _, res := range rep.Results {
		switch {
		case res.Status == StatusMissing:
			p.Missing++
		case res.Cache == "remote":
			p.Remote++
		default:
			p.Local++
		}
	}
	return p, nil
}

// ImageOptions are the NVIDIA side of the images verify and port load.
type ImageOptions struct {
	NVRTC      NVRTC
	HIPInclude string
	NoNVCC     bool
	Log, Warn  func(format string, a ...any)
}

// Images is the image builder of the session: AMD images through its
// toolchain, Runner and cache (recorded as builds), NVIDIA ones through
// nvcc or NVRTC.
func (s *Session) Images(o ImageOptions) *ImageBuilder {
	return &ImageBuilder{Run: s.Run, Cache: s.Store(), Getenv: s.o.Getenv, LookPath: s.o.LookPath, NVRTC: o.NVRTC, HIPInclude: o.HIPInclude,
		NoNVCC: o.NoNVCC, TreeRoot: s.TreeRoot(), Log: o.Log, Warn: o.Warn, Toolchain: s.res.ToolchainFor, record: s.record}
}

// Close ends the session: it flushes the remote tier's uploads (within its
// deadline, not past ctx), adds what the session's builds did to the
// cache's statistics and trims the cache at most once a day. It returns
// the remote tier's counters for this run (nil without one).
func (s *Session) Close(ctx context.Context) *cache.RemoteStats {
	var rs *cache.RemoteStats
	if s.tier != nil {
		if err := s.tier.Close(ctx); err != nil {
			s.o.Warn("%v", err)
		}
		c := s.tier.Counters()
		rs = &c
		if err := s.local.AddRemoteStats(c); err != nil {
			s.o.Verbose("cache: %v", err)
		}
	}
	if s.local != nil && s.recorded {
		if err := s.local.AddStats(s.hits, s.compiled); err != nil {
			s.o.Verbose("cache: %v", err)
		} else if err := s.local.AutoTrim(); err != nil {
			s.o.Verbose("cache: %v", err)
		}
	}
	if s.restoreDebug != nil {
		s.restoreDebug()
	}
	if s.res != nil {
		s.res.Close()
	}
	return rs
}
