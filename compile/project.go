package compile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile/embedding"
	"github.com/rocmk/rocmk/compile/slurm"
)

// ProjectFile is the project manifest `rocmk build` reads when run with no
// sources.
const ProjectFile = "rocmk.toml"

// Project is a rocmk.toml: what `rocmk build` builds with no arguments.
// Paths in it are relative to the file's directory. Top-level tables this
// type does not name (such as [[verify]]) belong to other commands and are
// ignored here.
type Project struct {
	Sources []string      `toml:"sources"` // globs ("kernels/*.hip") or directories (their kernel sources); no **
	Targets []string      `toml:"targets"` // target IDs; --arch overrides
	Flags   []string      `toml:"flags"`   // extra compiler flags
	Defines []string      `toml:"defines"` // NAME or NAME=VALUE, passed as -D
	Include []string      `toml:"include"` // include directories, passed as -I
	Output  ProjectOutput `toml:"output"`
	Hipify  ProjectHipify `toml:"hipify"`
	Cache   ProjectCache  `toml:"cache"`
	// Executor runs the compiles: "local" (default) or "slurm", with
	// the [slurm] table's options.
	Executor string        `toml:"executor"`
	Slurm    slurm.Options `toml:"slurm"`

	Path string `toml:"-"` // the file read
	Dir  string `toml:"-"` // its directory (absolute)
}

// ProjectOutput is the [output] table.
type ProjectOutput struct {
	Dir       string   `toml:"dir"`        // output directory (default "build/hsaco")
	Bundle    bool     `toml:"bundle"`     // also write <stem>.hipfb per source
	Embed     []string `toml:"embed"`      // "rust", "go", "c"
	GoPackage string   `toml:"go_package"` // package of the Go embedding file (default "hsaco")
}

// ProjectHipify is the [hipify] table: .cu sources are translated to HIP
// before building.
type ProjectHipify struct {
	Dir    string `toml:"dir"`    // where translated sources go (default "<output.dir>/hipified")
	Strict bool   `toml:"strict"` // unsupported CUDA APIs are errors
}

// ProjectCache is the [cache] table: the remote cache tier (cache/remote
// checks the values; its Settings type has the same fields).
type ProjectCache struct {
	Remote     string `toml:"remote"`          // http(s):// or redis(s):// URL, no credentials
	RemoteMode string `toml:"remote_mode"`     // read-write, read-only, write-only
	CAFile     string `toml:"remote_ca_file"`  // PEM CA bundle, relative to the file's directory
	Timeout    string `toml:"remote_timeout"`  // per request, e.g. "10s"
	MaxSize    string `toml:"remote_max_size"` // bigger outputs are not uploaded, e.g. "64MiB"
	Prefix     string `toml:"redis_prefix"`    // Redis key prefix (default "rocmk:")
	TTL        string `toml:"redis_ttl"`       // Redis key lifetime, e.g. "30d"
}

// DefaultOutDir is the output directory of a project that names none.
const DefaultOutDir = "build/hsaco"

// maxProjectSize bounds what LoadProject reads: a manifest is a few lines.
const maxProjectSize = 16 << 20

// FindProject loads the project file a command reads: path (--project),
// else ./rocmk.toml when there is one; nil: none. A command loads it once
// and hands it to what reads it (the remote cache's [cache] table, Plan
// through SessionOptions.Project, port's targets).
func FindProject(path string) (*Project, error) {
	if path == "" {
		if _, err := os.Stat(ProjectFile); err != nil {
			return nil, nil
		}
		path = ProjectFile
	}
	return LoadProject(path)
}

// LoadProject reads and checks a rocmk.toml (a regular file: a named pipe
// is refused, not waited on).
func LoadProject(path string) (*Project, error) {
	data, err := safefile.Read(path, maxProjectSize)
	if err != nil {
		return nil, err
	}
	p, err := ParseProject(data)
	if err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("%s:%d:%d: %s", path, row, col, de.Error())
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	p.Path, p.Dir = abs, filepath.Dir(abs)
	return p, nil
}

// ParseProject decodes rocmk.toml text.
func ParseProject(data []byte) (*Project, error) {
	var p Project
	dec := toml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&p); err != nil {
		return nil, err
	}
	for _, k := range p.Output.Embed {
		ok := false
		for _, e := range embedding.Kinds {
			ok = ok || k == e
		}
		if !ok {
			return nil, fmt.Errorf("output.embed: unknown kind %q (want rust, go or c)", k)
		}
	}
	for _, d := range p.Defines {
		if d == "" || strings.HasPrefix(d, "=") {
			return nil, fmt.Errorf("defines: bad entry %q (want NAME or NAME=VALUE)", d)
		}
	}
	return &p, nil
}

func (p *Project) abs(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(p.Dir, rel)
}

// ExpandSources expands the source globs (relative to the project's
// directory), sorted, without duplicates; a directory stands for the
// kernel sources under it (KernelDir). A pattern that matches nothing is
// an error, so a typo does not silently build less.
func (p *Project) ExpandSources() ([]string, error) {
	files, _, err := p.ExpandSourceDirs()
	return files, err
}

// ExpandSourceDirs is ExpandSources, and the directories the globs matched.
func (p *Project) ExpandSourceDirs() (files, dirs []string, err error) {
	if len(p.Sources) == 0 {
		return nil, nil, fmt.Errorf("%s: no sources", p.Path)
	}
	seen := map[string]bool{}
	for _, pat := range p.Sources {
		m, err := filepath.Glob(p.abs(pat))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: sources: %w", p.Path, err)
		}
		if len(m) == 0 {
			return nil, nil, fmt.Errorf("%s: sources: %q matches no file", p.Path, pat)
		}
		sort.Strings(m)
		for _, f := range m {
			units := []string{f}
			if fi, err := os.Stat(f); err == nil && fi.IsDir() {
				if units, err = KernelDir(f); err != nil {
					return nil, nil, fmt.Errorf("%s: sources: %w", p.Path, err)
				}
				dirs = append(dirs, f)
			}
			for _, u := range units {
				if !seen[u] {
					seen[u] = true
					files = append(files, u)
				}
			}
		}
	}
	return files, dirs, nil
}

// KernelDir returns the kernel sources under dir (.cu and .hip files, hidden
// directories skipped), sorted; a directory with none is an error.
func KernelDir(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext == ".cu" || ext == ".hip" {
			if ok, err := safefile.WalkedFile(p, d); !ok {
				return err
			}
			if len(out) >= maxTreeFiles {
				return fmt.Errorf("%s: more than %d kernel sources", dir, maxTreeFiles)
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no kernel source (.cu or .hip) in the directory", dir)
	}
	sort.Strings(out)
	return out, nil
}

// CompileFlags is the project's flags, then -D per define (the include
// directories are IncludeDirs: a build of CUDA sources passes their
// translations instead).
func (p *Project) CompileFlags() []string {
	out := append([]string(nil), p.Flags...)
	for _, d := range p.Defines {
		out = append(out, "-D"+d)
	}
	return out
}

// IncludeDirs is the include directories, absolute.
func (p *Project) IncludeDirs() []string {
	var out []string
	for _, i := range p.Include {
		out = append(out, p.abs(i))
	}
	return out
}

// OutDir is the output directory, absolute.
func (p *Project) OutDir() string {
	if p.Output.Dir == "" {
		return p.abs(DefaultOutDir)
	}
	return p.abs(p.Output.Dir)
}

// HipifyDir is where translated .cu sources go.
func (p *Project) HipifyDir() string {
	if p.Hipify.Dir != "" {
		return p.abs(p.Hipify.Dir)
	}
	return filepath.Join(p.OutDir(), "hipified")
}
