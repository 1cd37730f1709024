package inspect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocmk/rocmk/cache/safefile"
)

// DefaultMaxExtractRatio is the default of Extractor.MaxRatio and of
// `rocmk inspect --max-extract-ratio`.
const DefaultMaxExtractRatio = 2

// An Extractor writes the code objects and device images of files into Dir,
// one file each, named after the input and the entry:
// "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx90a-xnack+.co". A plain code
// object is written too (a copy), so scripts need no special case.
//
// Names are unique over every file one Extractor writes, and Extract never
// replaces or follows what is already in Dir: an entry whose name is taken
// (two entries with one ID, two inputs with one base name, a file, link or
// pipe of that name in Dir) gets ".1", ".2"... and Extract reports it.
type Extractor struct {
	Dir string
	// MaxRatio caps the bytes written for one file at MaxRatio times its
	// input: its size plus what its compressed bundles decompressed to. The
	// entries of a well-formed file never overlap, so they fit in 1x; a
	// bundle of many entries each spanning the whole file does not.
	MaxRatio float64
	used     map[string]bool
}

// Extracted is what Extract wrote for one file.
type Extracted struct {
	Paths []string
	// Renamed lists the entries written under another name than their own,
	// which was taken: "ENTRY: written as PATH" (by an entry written
	// before), or "ENTRY: OLD exists, not replaced: written as PATH".
	Renamed []string
}

// ExtractLimitError reports a file whose entries add up to more than
// Extractor.MaxRatio times its input.
type ExtractLimitError struct {
	Entry         string
	Written, Size int64 // bytes written so far, and the size of Entry
	Input         int64 // the file's size plus its decompressed bytes
	Ratio         float64
}

func (e *ExtractLimitError) Error() string {
	return fmt.Sprintf("extract: stopped before %s: its %d bytes after the %d written would pass the limit of %s x the %d input bytes (overlapping entries?)",
		e.Entry, e.Size, e.Written, strconv.FormatFloat(e.Ratio, 'g', -1, 64), e.Input)
}

// Extract writes f's code objects and device images. It stops before the
// write that would pass the MaxRatio limit.
func (x *Extractor) Extract(f *File) (Extracted, error) {
	var out Extracted
	if err := os.MkdirAll(x.Dir, 0o755); err != nil {
		return out, err
	}
	if x.used == nil {
		x.used = map[string]bool{}
	}
	input := f.size + f.inflated
	limit := int64(x.MaxRatio * float64(input))
	var written int64
	base := filepath.Base(f.Name)
	write := func(where string, parts []string, ext string, data []byte) error {
		if written+int64(len(data)) > limit {
			return &ExtractLimitError{Entry: where, Written: written, Size: int64(len(data)), Input: input, Ratio: x.MaxRatio}
		}
		for i := range parts {
			parts[i] = sanitize(strings.NewReplacer("[", "", "]", "").Replace(parts[i]))
		}
		stem := strings.Join(parts, ".")
		name, existing := stem+ext, ""
		for n := 1; ; n++ {
			if !x.used[strings.ToLower(name)] { // case-insensitive file systems
				err := reserve(filepath.Join(x.Dir, name))
				if err == nil {
					break
				}
				if !errors.Is(err, fs.ErrExist) {
					return err
				}
				if existing == "" {
					existing = filepath.Join(x.Dir, name)
				}
			}
			name = stem + "." + strconv.Itoa(n) + ext
		}
		x.used[strings.ToLower(name)] = true
		p := filepath.Join(x.Dir, name)
		switch {
		case existing != "":
			out.Renamed = append(out.Renamed, where+": "+existing+" exists, not replaced: written as "+p)
		case name != stem+ext:
			out.Renamed = append(out.Renamed, where+": written as "+p)
		}
		// The data replaces the empty file reserved above in one rename, so
		// the name holds an empty file or the whole entry; the rename replaces
		// whatever is at p, never following it.
		if err := safefile.Write(p, data, safefile.Options{Owned: true}); err != nil {
			os.Remove(p)
			return err
		}
		written += int64(len(data))
		out.Paths = append(out.Paths, p)
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
		if err := write(co.Location(f.Name), parts, ".co", co.Data); err != nil {
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
		if err := write(f.Name+"#"+im.Where, parts, ext, im.Data); err != nil {
			return out, err
		}
	}
	return out, nil
}

// reserve creates name, an empty file, failing with fs.ErrExist when
// anything is there already: a file of an earlier run or of someone else, a
// named pipe, or a symbolic link (O_EXCL does not follow it, even dangling).
// So extraction never replaces a file nor writes through a link in Dir.
func reserve(name string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
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
