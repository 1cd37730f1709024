package inspect

import (
	"fmt"
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
// Names are unique over every file one Extractor writes: an entry whose name
// is taken (two entries with one ID, two inputs with one base name) gets
// ".1", ".2"... and Extract reports it.
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
	// which was taken: "ENTRY: written as PATH".
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
		name := stem + ext
		for n := 1; x.used[strings.ToLower(name)]; n++ { // case-insensitive file systems
			name = stem + "." + strconv.Itoa(n) + ext
		}
		x.used[strings.ToLower(name)] = true
		p := filepath.Join(x.Dir, name)
		if name != stem+ext {
			out.Renamed = append(out.Renamed, where+": written as "+p)
		}
		if err := safefile.Write(p, data, safefile.Options{}); err != nil {
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
