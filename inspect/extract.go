package inspect

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Extract writes every code object and device image of f into dir, one file
// each, named after the input and the entry:
// "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx90a-xnack+.co". It returns the paths written.
// A plain code object is written too (a copy), so scripts need no special case.
func (f *File) Extract(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Base(f.Name)
	var out []string
	used := map[string]int{}
	write := func(parts []string, ext string, data []byte) error {
		for i := range parts {
			parts[i] = sanitize(strings.NewReplacer("[", "", "]", "").Replace(parts[i]))
		}
		name := strings.Join(parts, ".")
		if n := used[name]; n > 0 {
			name = fmt.Sprintf("%s.%d", name, n)
		}
		used[name]++
		p := filepath.Join(dir, name+ext)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	}
	for _, co := range f.Objects {
		parts := []string{base}
		if co.Container != "" {
			parts = append(parts, co.Container)
		}
		if co.Entry != "" {
			parts = append(parts, co.Entry)
		} else if co.Container == "" {
			parts = append(parts, co.ProcessorName())
		}
		if err := write(parts, ".co", co.Data); err != nil {
			return out, err
		}
	}
	for _, im := range f.Images {
		ext := ".bin"
		if im.Kind == "llvm-bitcode" {
			ext = ".bc"
		}
		parts := []string{base, im.Where}
		if im.Arch != "" && !strings.Contains(im.Where, im.Arch) {
			parts = append(parts, im.Arch)
		}
		if err := write(parts, ext, im.Data); err != nil {
			return out, err
		}
	}
	return out, nil
}

// sanitize keeps file names portable: [A-Za-z0-9._+-], others become '-'.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '+', c == '-':
		default:
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), ".")
}
