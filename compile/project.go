package compile

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/rocmk/rocmk/cache/safefile"
)

// ProjectFile is the project manifest `rocmk build` reads when run with no
// sources.
const ProjectFile = "rocmk.toml"

// Project is a rocmk.toml: what `rocmk build` builds with no arguments.
// Paths in it are relative to the file's directory. Top-level tables this
// type does not name (such as [[verify]]) belong to other commands and are
// ignored here.
type Project struct {
	Sources []string      `toml:"sources"` // globs: "kernels/*.hip", "cuda/**.cu" is not supported (no **)
	Targets []string      `toml:"targets"` // target IDs; --arch overrides
	Flags   []string      `toml:"flags"`   // extra compiler flags
	Defines []string      `toml:"defines"` // NAME or NAME=VALUE, passed as -D
	Include []string      `toml:"include"` // include directories, passed as -I
	Output  ProjectOutput `toml:"output"`
	Hipify  ProjectHipify `toml:"hipify"`
	Cache   ProjectCache  `toml:"cache"`

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
		for _, e := range EmbedKinds {
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
// directory), sorted, without duplicates. A pattern that matches nothing is
// an error, so a typo does not silently build less.
func (p *Project) ExpandSources() ([]string, error) {
	if len(p.Sources) == 0 {
		return nil, fmt.Errorf("%s: no sources", p.Path)
	}
	seen := map[string]bool{}
	var out []string
	for _, pat := range p.Sources {
		m, err := filepath.Glob(p.abs(pat))
		if err != nil {
			return nil, fmt.Errorf("%s: sources: %w", p.Path, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: sources: %q matches no file", p.Path, pat)
		}
		sort.Strings(m)
		for _, f := range m {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// CompileFlags is the project's flags, then -D per define, then -I per
// include directory (made absolute).
func (p *Project) CompileFlags() []string {
	out := append([]string(nil), p.Flags...)
	for _, d := range p.Defines {
		out = append(out, "-D"+d)
	}
	for _, i := range p.Include {
		out = append(out, "-I"+p.abs(i))
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
