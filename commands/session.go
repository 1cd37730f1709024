package commands

import (
	"os"
	"path/filepath"

	"github.com/rocmk/rocmk/commands/term"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/remote"
	"github.com/rocmk/rocmk/compile"
)

// sessionFlags are the flags of the commands that build.
type sessionFlags struct {
	ROCmPath, Layout, Clang string
	NoCache                 bool
	// DryRun (build -n) builds nothing: no remote tier, and the local
	// cache only if there is one (toolchain probes and generated device
	// libraries are kept there).
	DryRun  bool
	Project string // --project: where the [cache] table is read ("" = ./rocmk.toml)
	// Loaded and Remote are the project file and remote cache the command
	// resolved already (cache pull); nil: resolved here.
	Loaded *compile.Project
	Remote *remote.Config
}

// clangFlag is --clang: the clang of every target.
func clangFlag() cli.Flag {
	return &cli.StringFlag{Name: "clang", Usage: "the clang++ to build every target with (default: ROCMK_CLANG, else the ROCm install's, then a newer clang for the targets it lacks)"}
}

// openSession opens the command's compile.Session: one Runner, one
// toolchain discovery, one cache with its remote tier.
func openSession(env Env, g globalOptions, ui *term.UI, f sessionFlags) (*compile.Session, error) {
	o := compile.SessionOptions{ROCmPath: f.ROCmPath, Clang: f.Clang, Getenv: env.Getenv, Root: env.Root, LookPath: env.LookPath,
		Runner: env.Runner, Layout: f.Layout, CacheDir: g.CacheDir, NoCache: f.NoCache, CacheIfPresent: f.DryRun, Jobs: g.Jobs,
		DebugLog: env.Stderr, Warn: ui.Warnf, Verbose: func(format string, a ...any) { ui.Verbosef(1, format, a...) }, Project: f.Loaded}
	if !f.NoCache && !f.DryRun {
		cfg, err := f.Remote, error(nil)
		if cfg == nil {
			// The project file, loaded once: its [cache] table, and Plan's.
			if o.Project, err = compile.FindProject(f.Project); err != nil {
				return nil, err
			}
			if cfg, err = remoteConfigOf(g, env, o.Project); err != nil {
				return nil, err
			}
		}
		if cfg != nil {
			o.OpenTier = func(local *cache.Cache) (compile.Tier, error) { return openTier(local, cfg, ui) }
		}
	}
	s, err := compile.OpenSession(o)
	if err == nil && s.CacheDir() != "" {
		ui.Verbosef(2, "cache: %s", s.CacheDir())
	}
	return s, err
}

// openTier puts the remote cache cfg names behind local; its one warning
// and its -v details go through ui.
func openTier(local *cache.Cache, cfg *remote.Config, ui *term.UI) (*remote.Tier, error) {
	t, err := remote.Open(local, cfg, remote.Options{
		Warn:    func(m string) { ui.Warnf("%s", m) },
		Verbose: func(m string) { ui.Verbosef(1, "%s", m) },
	})
	if err != nil {
		return nil, err
	}
	ui.Verbosef(1, "remote cache: %s (%s)", cfg, cfg.Describe())
	return t, nil
}

// remoteConfig is remoteConfigOf with the project file at project (""
// = ./rocmk.toml when there is one).
func remoteConfig(g globalOptions, env Env, project string) (*remote.Config, error) {
	p, err := compile.FindProject(project)
	if err != nil {
		return nil, err
	}
	return remoteConfigOf(g, env, p)
}

// remoteConfigOf resolves the remote cache tier: --remote-cache and
// --remote-cache-mode (or --remote-upload), the environment, then the
// [cache] table of the project file p (nil: none). nil: no tier.
func remoteConfigOf(g globalOptions, env Env, p *compile.Project) (*remote.Config, error) {
	mode := g.RemoteCacheMode
	if g.RemoteUpload {
		// --remote-upload is read-write, as a flag: it wins over the
		// environment and the file, and contradicts another --remote-cache-mode.
		if mode != "" && mode != string(remote.ReadWrite) {
			return nil, usagef("--remote-upload and --remote-cache-mode %s: --remote-upload is read-write; give one of them", mode)
		}
		mode = string(remote.ReadWrite)
	}
	var s remote.Settings
	if p != nil {
		s = remote.Settings(p.Cache)
		if s.CAFile != "" && !filepath.IsAbs(s.CAFile) {
			s.CAFile = filepath.Join(p.Dir, s.CAFile)
		}
	}
	cfg, err := remote.Resolve(g.RemoteCache, mode, s, env.Getenv)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return cfg, nil
}

// sourceReader reads the sources a user names: regular files within the
// input limit (ROCMK_MAX_INPUT), with the errors saying what to do.
func sourceReader(env Env) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		limit, err := inputLimit(env, maxSourceSize)
		if err != nil {
			return nil, err
		}
		return readInput(name, limit)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
