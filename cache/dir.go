package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Location is where the cache is, and what said so.
type Location struct {
	Dir    string // absolute; "" when Off
	Off    bool
	Source string // "--cache-dir", "ROCMK_CACHE=off", "ROCMK_CACHE_DIR" or "default"
}

// ResolveDir is the one answer to "which cache": the --cache-dir flag
// (flag, "" when not given) wins over the environment, as every rocmk
// flag does; then ROCMK_CACHE=off, ROCMK_CACHE_DIR and the default
// (DefaultDir). --no-cache is the flag that turns it off.
func ResolveDir(flag string, getenv func(string) string) (Location, error) {
	if flag != "" {
		abs, err := filepath.Abs(flag)
		if err != nil {
			return Location{}, fmt.Errorf("--cache-dir: %w", err)
		}
		return Location{Dir: abs, Source: "--cache-dir"}, nil
	}
	dir, off, err := DefaultDir(getenv)
	switch {
	case err != nil:
		return Location{}, err
	case off:
		return Location{Off: true, Source: "ROCMK_CACHE=off"}, nil
	case getenv != nil && getenv("ROCMK_CACHE_DIR") != "" || getenv == nil && os.Getenv("ROCMK_CACHE_DIR") != "":
		return Location{Dir: dir, Source: "ROCMK_CACHE_DIR"}, nil
	}
	return Location{Dir: dir, Source: "default"}, nil
}

// DefaultDir returns the cache directory rocmk uses and whether caching is
// off, reading the environment through getenv:
//
//   - ROCMK_CACHE=off (or ROCMK_CACHE_DIR=off) turns the cache off;
//   - ROCMK_CACHE_DIR names the directory (made absolute);
//   - otherwise it is the user cache directory + "/rocmk"
//     ($XDG_CACHE_HOME or $HOME/.cache on Linux, as os.UserCacheDir).
func DefaultDir(getenv func(string) string) (dir string, off bool, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("ROCMK_CACHE") == "off" || getenv("ROCMK_CACHE_DIR") == "off" {
		return "", true, nil
	}
	if d := getenv("ROCMK_CACHE_DIR"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", false, fmt.Errorf("ROCMK_CACHE_DIR: %w", err)
		}
		return abs, false, nil
	}
	user, uerr := UserDir(getenv)
	if uerr != nil {
		return "", false, fmt.Errorf("no cache directory: %w (set ROCMK_CACHE_DIR or use --cache-dir)", uerr)
	}
	return user, false, nil
}

// UserDir is the user cache directory + "/rocmk", the default when
// neither --cache-dir nor ROCMK_CACHE_DIR names one.
func UserDir(getenv func(string) string) (string, error) {
	base, err := userCacheDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "rocmk"), nil
}

// Usage counts the regular files under dir and their bytes, without
// opening a cache there (exists: dir is a directory).
func Usage(dir string) (files int, bytes int64, exists bool) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return 0, 0, false
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				files++
				bytes += info.Size()
			}
		}
		return nil
	})
	return files, bytes, true
}

// userCacheDir is os.UserCacheDir reading the environment through getenv.
func userCacheDir(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly", "solaris", "illumos":
		if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
			return d, nil
		}
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, ".cache"), nil
		}
		return "", errors.New("neither $XDG_CACHE_HOME nor $HOME is defined")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Caches"), nil
		}
		return "", errors.New("$HOME is not defined")
	}
	return os.UserCacheDir()
}
