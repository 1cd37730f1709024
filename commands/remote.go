package commands

import (
	"context"
	"path/filepath"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/remote"
	"github.com/rocmk/rocmk/compile"
)

// remoteConfig resolves the remote cache tier: --remote-cache and
// --remote-cache-mode, the environment, then the [cache] table of the
// project file (project, else ./rocmk.toml when there is one). nil: none.
func remoteConfig(g globalOptions, env Env, project string) (*remote.Config, error) {
	var s remote.Settings
	if project == "" && fileExists(compile.ProjectFile) {
		project = compile.ProjectFile
	}
	if project != "" {
		p, err := compile.LoadProject(project)
		if err != nil {
			return nil, err
		}
		s = remote.Settings(p.Cache)
		if s.CAFile != "" && !filepath.IsAbs(s.CAFile) {
			s.CAFile = filepath.Join(p.Dir, s.CAFile)
		}
	}
	cfg, err := remote.Resolve(g.RemoteCache, g.RemoteCacheMode, s, env.Getenv)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return cfg, nil
}

// openTier puts the remote cache cfg names behind local; its one warning
// and its -v details go through ui.
func openTier(local *cache.Cache, cfg *remote.Config, ui *UI) (*remote.Tier, error) {
	t, err := remote.Open(local, cfg, remote.Options{
		Warn:    func(m string) { ui.Warnf("%s", m) },
		Verbose: func(m string) { ui.Verbosef(1, "%s", m) },
	})
	if err != nil {
		return nil, err
	}
	ui.Verbosef(1, "remote cache: %s (%s)", cfg, cfg.Mode)
	return t, nil
}

// closeTier flushes the tier's uploads (within its deadline, not past an
// interrupt) and adds its counters to the local cache's statistics.
func closeTier(ctx context.Context, t *remote.Tier, ui *UI) cache.RemoteStats {
	if err := t.Close(ctx); err != nil {
		ui.Warnf("%v", err)
	}
	c := t.Counters()
	if err := t.Local().AddRemoteStats(c); err != nil {
		ui.Verbosef(1, "cache: %v", err)
	}
	return c
}
