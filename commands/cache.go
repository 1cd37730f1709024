package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rocmk/rocmk/commands/term"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/remote"
	"github.com/rocmk/rocmk/compile"
)

const cacheHelp = `The build cache keeps every code object rocmk compiled, keyed by everything
that went into it (toolchain, device libraries, target, flags, source and
headers). It lives in --cache-dir, else $ROCMK_CACHE_DIR, else the user cache
directory + /rocmk; ROCMK_CACHE=off turns it off. Builds trim it at most once
a day: entries unused for 30 days go, then the least recently used until it
is at most 5 GiB. Translated trees (trees/) and generated device libraries
(devlibs/) are trimmed, pruned, verified and counted with the entries.`

func cacheCommand() *cli.Command {
	return &cli.Command{
		Name:        "cache",
		Usage:       "list, prune, check and locate the build cache",
		Description: cacheHelp,
		Subcommands: []*cli.Command{
			cacheLsCommand(),
			cachePruneCommand(),
			cacheStatsCommand(),
			cachePushCommand(),
			cachePullCommand(),
			cacheVerifyCommand(),
			cacheDirCommand(),
		},
	}
}

// cacheDir resolves the cache directory: --cache-dir, else DefaultDir
// (ROCMK_CACHE=off, ROCMK_CACHE_DIR, the user cache dir).
func cacheDir(c *cli.Context) (dir string, off bool, err error) {
	loc, err := cache.ResolveDir(globals(c).CacheDir, envOf(c).Getenv)
	return loc.Dir, loc.Off, err
}

// openCache opens the cache for a cache subcommand, on the command's clock.
func openCache(c *cli.Context) (*cache.Cache, error) {
	dir, off, err := cacheDir(c)
	if err != nil {
		return nil, err
	}
	if off {
		return nil, errors.New("the build cache is off (ROCMK_CACHE=off)")
	}
	cc, err := cache.Open(dir)
	if err != nil {
		return nil, err
	}
	cc.SetClock(envOf(c).Now)
	return cc, nil
}

// ---- ls

type cacheLsOptions struct {
	Sort   string // used, size, created, target
	Target string
	All    bool // also the build's bookkeeping entries (header lists, toolchain IDs)
}

func cacheLsCommand() *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list cache entries (-q: keys only)",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sort", Value: "used", Usage: "order by `FIELD`: used (most recent first), size (largest first), created (newest first), target"},
			&cli.StringFlag{Name: "target", Usage: "only entries for `TARGET` (gfx90a also matches gfx90a:xnack+)"},
			&cli.BoolFlag{Name: "all", Usage: "also list bookkeeping entries (header lists, toolchain IDs)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("cache ls takes no arguments")
			}
			cc, err := openCache(c)
			if err != nil {
				return err
			}
			return runCacheLs(cacheLsOptions{Sort: c.String("sort"), Target: c.String("target"), All: c.Bool("all")}, cc, newUI(envOf(c), globals(c)), envOf(c).Now())
		},
	}
}

func runCacheLs(o cacheLsOptions, cc *cache.Cache, ui *term.UI, now time.Time) error {
	all, err := cc.List()
	if err != nil {
		return err
	}
	ents, hidden := cache.Select(all, o.Target, o.All)
	if err := cache.SortEntries(ents, o.Sort); err != nil {
		return usagef("--%v", err)
	}
	total := cache.EntriesSize(ents)
	var dirs []cache.AreaDir // trees/, devlibs/: no target, so not with --target
	if o.Target == "" {
		dirs = cc.AreaDirs()
	}
	doc := struct {
		Dir     string          `json:"dir"`
		Count   int             `json:"count"`
		Bytes   int64           `json:"bytes"`
		Entries []cache.Entry   `json:"entries"`
		Dirs    []cache.AreaDir `json:"dirs,omitempty"`
	}{cc.Dir(), len(ents), total, append([]cache.Entry{}, ents...), dirs}
	err = ui.Result("cache.ls", doc, func(w io.Writer, s *term.Styles) error {
		if ui.Quiet {
			for _, e := range ents {
				fmt.Fprintln(w, e.Action.String())
			}
			return nil
		}
		if len(ents) > 0 {
			if err := term.EntryTable(ents, s, now).Render(w, s); err != nil {
				return err
			}
		}
		_, err := fmt.Fprintf(w, "%d %s, %s in %s\n", len(ents), term.Plural(len(ents), "entry", "entries"), cache.FormatSize(total), term.Printable(cc.Dir(), ""))
		return err
	})
	if err == nil && hidden > 0 && !ui.Quiet {
		ui.Infof("(%d bookkeeping %s not shown: --all lists them)", hidden, term.Plural(hidden, "entry", "entries"))
	}
	if err == nil && len(dirs) > 0 && !ui.Quiet {
		ui.Infof("(and %d %s in trees/ and devlibs/, %s: cache stats counts them)",
			len(dirs), term.Plural(len(dirs), "directory", "directories"), cache.FormatSize(cache.AreaSize(dirs)))
	}
	return err
}

// ---- prune

type cachePruneOptions struct {
	Policy cache.Policy
}

func cachePruneCommand() *cli.Command {
	return &cli.Command{
		Name:      "prune",
		Usage:     "remove cache entries: old, over a size limit, for a target or toolchain, or all",
		ArgsUsage: " ",
		Description: `Removes the entries that match --target and --toolchain (all entries if
neither is given) and that are unused for --older-than, or all of them with
--all; then, with --max-size, the least recently used entries until the cache
is at most that size. With only --target or --toolchain, every matching entry
is removed. The directories of trees/ and devlibs/ (translated trees,
generated device libraries) go by the same rules, except that --target and
--toolchain never match them. Leftovers of killed builds (temporary files,
unreadable entries, data no entry uses) are always removed. Sizes: kB, MB, GB are decimal; KiB,
MiB, GiB binary (2GiB = 2147483648 bytes, 2GB = 2000000000 bytes).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "older-than", Usage: "remove entries unused for `AGE` (30d, 12h, 90m, 1d12h)"},
			&cli.StringFlag{Name: "max-size", Usage: "then evict least recently used entries until the cache is at most `SIZE` (2GiB, 500MB)"},
			&cli.StringFlag{Name: "target", Usage: "only entries for `TARGET` (gfx90a also matches gfx90a:xnack+)"},
			&cli.StringFlag{Name: "toolchain", Usage: "only entries whose toolchain contains `TEXT` (e.g. \"clang 15\")"},
			&cli.BoolFlag{Name: "all", Usage: "remove every (matching) entry"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print what would be removed, remove nothing"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("cache prune takes no arguments (did you mean --target %s?)", c.Args().First())
			}
			p := cache.Policy{Target: c.String("target"), Toolchain: c.String("toolchain"), All: c.Bool("all"), DryRun: c.Bool("dry-run")}
			if s := c.String("older-than"); s != "" {
				d, err := cache.ParseAge(s)
				if err != nil {
					return usagef("--older-than: %v", err)
				}
				p.OlderThan = d
			}
			if s := c.String("max-size"); s != "" {
				n, err := cache.ParseSize(s)
				if err != nil {
					return usagef("--max-size: %v", err)
				}
				if n == 0 && !p.All {
					return usagef("--max-size 0: use --all to empty the cache")
				}
				p.MaxBytes = n
			}
			if !p.All && p.OlderThan == 0 && p.MaxBytes == 0 && p.Target == "" && p.Toolchain == "" {
				return usagef("cache prune needs --older-than, --max-size, --target, --toolchain or --all")
			}
			cc, err := openCache(c)
			if err != nil {
				return err
			}
			return runCachePrune(cachePruneOptions{Policy: p}, cc, newUI(envOf(c), globals(c)), envOf(c).Now())
		},
	}
}

func runCachePrune(o cachePruneOptions, cc *cache.Cache, ui *term.UI, now time.Time) error {
	tr, err := cc.Trim(o.Policy)
	if err != nil {
		return err
	}
	doc := struct {
		DryRun     bool            `json:"dry_run"`
		Removed    []cache.Entry   `json:"removed"`
		Dirs       []cache.AreaDir `json:"removed_dirs,omitempty"` // trees/, devlibs/
		Files      int             `json:"files"`
		FreedBytes int64           `json:"freed_bytes"`
		Leftovers  int             `json:"leftovers"`
		Kept       int             `json:"kept"`
		KeptDirs   int             `json:"kept_dirs,omitempty"`
		KeptBytes  int64           `json:"kept_bytes"`
	}{o.Policy.DryRun, append([]cache.Entry{}, tr.Removed...), tr.Dirs, tr.Files, tr.Bytes, tr.Debris, tr.Kept, tr.KeptDirs, tr.KeptBytes}
	return ui.Result("cache.prune", doc, func(w io.Writer, s *term.Styles) error { return term.Pruned(w, s, tr, o.Policy.DryRun, ui.Quiet, now) })
}

// ---- stats

func cacheStatsCommand() *cli.Command {
	return &cli.Command{
		Name:      "stats",
		Usage:     "show entries, size, hits, misses and hit rate since the last reset",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "zero", Aliases: []string{"z"}, Usage: "reset the hit and miss counters (after showing them)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("cache stats takes no arguments")
			}
			cc, err := openCache(c)
			if err != nil {
				return err
			}
			return runCacheStats(c.Bool("zero"), cc, newUI(envOf(c), globals(c)), envOf(c).Now())
		},
	}
}

func runCacheStats(zero bool, cc *cache.Cache, ui *term.UI, now time.Time) error {
	st, err := cc.Stats()
	if err != nil {
		return err
	}
	if zero {
		if err := cc.ZeroStats(); err != nil {
			return err
		}
		ui.Infof("statistics zeroed")
	}
	doc := struct {
		Dir      string            `json:"dir"`
		Entries  int               `json:"entries"`
		Bytes    int64             `json:"bytes"`
		Dirs     int               `json:"dirs,omitempty"` // trees/, devlibs/
		DirBytes int64             `json:"dir_bytes,omitempty"`
		Hits     int64             `json:"hits"`
		Misses   int64             `json:"misses"`
		HitRate  float64           `json:"hit_rate"`
		Remote   cache.RemoteStats `json:"remote"`
		Since    *time.Time        `json:"since"`
		Zeroed   bool              `json:"zeroed"`
	}{Dir: cc.Dir(), Entries: st.Entries, Bytes: st.Bytes, Dirs: st.Dirs, DirBytes: st.DirBytes, Hits: st.Hits, Misses: st.Misses, HitRate: st.HitRate(), Remote: st.Remote, Zeroed: zero}
	if !st.Since.IsZero() {
		since := st.Since.UTC()
		doc.Since = &since
	}
	return ui.Result("cache.stats", doc, func(w io.Writer, s *term.Styles) error { return term.CacheStats(w, s, cc.Dir(), st, now) })
}

// ---- push

func cachePushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "upload every local code object and header list to the remote cache (seed a fresh one)",
		ArgsUsage: " ",
		Description: `Uploads every local cache entry the remote tier shares (code objects and
the header lists that lead to them) that the server does not have yet, -j
at a time, each checked against its sha256 first. The server is the one
--remote-cache, ROCMK_REMOTE_CACHE or rocmk.toml's [cache] table names; its
credentials come from ROCMK_REMOTE_CACHE_TOKEN, or ROCMK_REMOTE_CACHE_USER
and ROCMK_REMOTE_CACHE_PASSWORD. Entries over the size limit stay local.
Push is an explicit upload: it uploads in the default mode, and only a mode
set to read-only refuses it. With ROCMK_REMOTE_CACHE_KEY (or _KEY_FILE) the
records are signed, and one on the server not signed with that key is
replaced. Exit status 1 if any upload failed, 2 with no remote cache
configured or a read-only mode set.`,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("cache push takes no arguments")
			}
			env, g := envOf(c), globals(c)
			cfg, err := remoteConfig(g, env, "")
			if err != nil {
				return err
			}
			if cfg == nil {
				return usagef("cache push: no remote cache (set --remote-cache URL, %s, or remote in rocmk.toml's [cache] table)", remote.EnvURL)
			}
			switch {
			case cfg.ModeFrom == "":
				// Asking to push is asking to upload: the read-only default
				// is for builds, which upload only when told to.
				cfg.Mode, cfg.ModeFrom = remote.ReadWrite, "cache push"
			case cfg.Mode == remote.ReadOnly:
				return usagef("cache push: %v (%s)", remote.ErrReadOnly, cfg.ModeFrom)
			}
			cc, err := openCache(c)
			if err != nil {
				return err
			}
			return runCachePush(c.Context, cc, cfg, g.Jobs, newUI(env, g))
		},
	}
}

func runCachePush(ctx context.Context, cc *cache.Cache, cfg *remote.Config, jobs int, ui *term.UI) error {
	tier, err := remote.Open(cc, cfg, remote.Options{Verbose: func(m string) { ui.Verbosef(1, "%s", m) }})
	if err != nil {
		return err
	}
	ents, err := cc.List()
	if err != nil {
		return err
	}
	bar := ui.NewProgress(remote.Uploadable(ents), "pushing")
	rep, perr := tier.Push(ctx, jobs, func() { bar.Add(1) })
	bar.Finish()
	if err := tier.Close(ctx); err != nil {
		ui.Warnf("%v", err)
	}
	if err := cc.AddRemoteStats(tier.Counters()); err != nil {
		ui.Verbosef(1, "cache: %v", err)
	}
	if errors.Is(perr, context.Canceled) {
		return perr
	}
	doc := struct {
		URL string `json:"url"`
		remote.PushReport
		Error string `json:"error,omitempty"`
	}{URL: cfg.String(), PushReport: rep}
	if perr != nil {
		doc.Error = perr.Error()
	}
	if err := ui.Result("cache.push", doc, func(w io.Writer, s *term.Styles) error {
		_, err := fmt.Fprintf(w, "pushed %d %s (%s) to %s; %d already there, %d over the size limit, %d failed\n",
			rep.Uploaded, term.Plural(rep.Uploaded, "entry", "entries"), cache.FormatSize(rep.Bytes), cfg, rep.Present, rep.TooBig, rep.Failed)
		return err
	}); err != nil {
		return err
	}
	return perr
}

// ---- pull

func cachePullCommand() *cli.Command {
	return &cli.Command{
		Name:      "pull",
		Usage:     "fetch what a build would need from the remote cache, without compiling",
		ArgsUsage: "[source.hip ...]",
		Description: `Looks up every (source, target) job of the build the flags describe
(sources, else --project or ./rocmk.toml, else the bundled suite; --arch and
the flags as for 'rocmk build') and fetches each one's deps entry, shared
group and code object from the remote cache into the local one, checked as
a build checks them: a later 'rocmk build', online or not, is then all cache
hits. Nothing is compiled and no output is written; a job the server lacks
is listed as missing. Exit status 2 with no remote cache or a write-only one.`,
		Flags: planFlags(),
		Action: func(c *cli.Context) error {
			env, g := envOf(c), globals(c)
			p, err := compile.FindProject(c.String("project"))
			if err != nil {
				return err
			}
			cfg, err := remoteConfigOf(g, env, p)
			if err != nil {
				return err
			}
			switch {
			case cfg == nil:
				return usagef("cache pull: no remote cache (set --remote-cache URL, %s, or remote in rocmk.toml's [cache] table)", remote.EnvURL)
			case cfg.Mode == remote.WriteOnly:
				return usagef("cache pull: the remote cache is write-only (--remote-cache-mode)")
			}
			return runCachePull(c.Context, planOptionsOf(c), p, c.String("layout"), c.String("rocm-path"), cfg, env, g)
		},
	}
}

func runCachePull(ctx context.Context, po compile.PlanOptions, p *compile.Project, layout, rocmPath string, cfg *remote.Config, env Env, g globalOptions) error {
	ui := newUI(env, g)
	po.ReadSource = sourceReader(env)
	s, err := openSession(env, g, ui, sessionFlags{ROCmPath: rocmPath, Layout: layout, Loaded: p, Remote: cfg})
	if err != nil {
		return err
	}
	req, _, err := s.Plan(ctx, po)
	if err != nil {
		s.Close(ctx)
		return err
	}
	bar := ui.NewProgress(len(req.Sources)*len(req.Targets), "pulling")
	doc, err := s.Pull(ctx, req, buildEvents(ui, bar, req.Tree))
	bar.Finish()
	if err != nil {
		return err
	}
	return ui.Result("cache.pull", doc, func(w io.Writer, _ *term.Styles) error {
		_, err := fmt.Fprintf(w, "%d jobs: %d fetched from %s, %d already local, %d missing (they compile on the next build)\n",
			len(doc.Jobs), doc.Remote, cfg, doc.Local, doc.Missing)
		return err
	})
}

// ---- verify

func cacheVerifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "re-hash every entry; report and remove corrupt ones (exit 1 if any were found)",
		ArgsUsage: " ",
		Description: `Reads every index entry and re-hashes every data file, and checks every
directory of trees/ and devlibs/ against the marker it was published with.
Corrupt or truncated files, entries whose data is missing or corrupt, and
directories incomplete or changed since they were published are reported
and removed
(so the next build recompiles them) unless --dry-run is given. Temporary files
of running or killed builds are counted but are not problems; prune removes
them. The exit status is 1 when any problem was found, even though it was
fixed, so that scripts notice a damaged disk or cache.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "report problems, remove nothing"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("cache verify takes no arguments")
			}
			cc, err := openCache(c)
			if err != nil {
				return err
			}
			return runCacheVerify(!c.Bool("dry-run"), cc, newUI(envOf(c), globals(c)))
		},
	}
}

func runCacheVerify(fix bool, cc *cache.Cache, ui *term.UI) error {
	r, err := cc.Verify(fix)
	if err != nil {
		return err
	}
	doc := struct {
		Dir string `json:"dir"`
		OK  bool   `json:"ok"`
		cache.VerifyReport
	}{cc.Dir(), r.OK(), r.RelativeTo(cc.Dir())}
	err = ui.Result("cache.verify", doc, func(w io.Writer, s *term.Styles) error { return term.CacheVerified(w, s, doc.VerifyReport) })

	if err != nil {
		return err
	}
	if !r.OK() {
		return exitError{code: ExitFailure, err: errSilent}
	}
	return nil
}

// ---- dir

func cacheDirCommand() *cli.Command {
	return &cli.Command{
		Name:      "dir",
		Usage:     "print the cache directory (\"off\" when ROCMK_CACHE=off)",
		ArgsUsage: " ",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("cache dir takes no arguments")
			}
			dir, off, err := cacheDir(c)
			if err != nil {
				return err
			}
			ui := newUI(envOf(c), globals(c))
			doc := struct {
				Dir string `json:"dir"`
				Off bool   `json:"off"`
			}{dir, off}
			return ui.Result("cache.dir", doc, func(w io.Writer, _ *term.Styles) error {
				if off {
					dir = "off"
				}
				_, err := fmt.Fprintln(w, dir)
				return err
			})
		},
	}
}
