package commands

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/hipify"
)

// compatPath is where a job's translation finds rocmk_hip_compat.h: the
// root of the output tree, or beside the output file.
func compatPath(j hipifyJob) string {
	dir := j.compatDir
	if dir == "" {
		dir = filepath.Dir(j.dst)
	}
	return filepath.Join(dir, hipify.CompatHeaderName)
}

// compatOptions are the translation options for one job: the compat header
// is included by its path relative to the output file, or inlined when the
// translation goes to stdout.
func compatOptions(o hipifyOptions, j hipifyJob) hipify.Options {
	t := o.Translate
	switch {
	case j.dst == "" && !o.Diff && !o.Check && !o.NoOutput:
		t.CompatInline = true
	case j.compatDir != "" && j.dst != "":
		if rel, err := filepath.Rel(filepath.Dir(j.dst), compatPath(j)); err == nil {
			t.CompatInclude = filepath.ToSlash(rel)
		}
	}
	return t
}

// checkCompatPath refuses an output that needs the compat header where a
// file of that name exists that rocmk did not write.
func checkCompatPath(j hipifyJob, rep *hipify.Report) error {
	if len(rep.Compat) == 0 {
		return nil
	}
	p := compatPath(j)
	if p == j.dst {
		return nil
	}
	data, err := readCompatHeader(p)
	if errors.Is(err, fs.ErrNotExist) || err == nil && hipify.IsCompatHeader(data) {
		return nil
	}
	return fmt.Errorf("%s: the translation needs rocmk's %s, but %s exists and was not written by rocmk: not overwritten, %s not written",
		j.name, hipify.CompatHeaderName, p, j.dst)
}

// writeCompatHeaders writes rocmk_hip_compat.h where written translations
// include it (never over a user's file, never over an output of the run). A
// failure is the failure of the files that need the header.
func writeCompatHeaders(results []hipifyResult) {
	outputs := map[string]bool{}
	for _, r := range results {
		if r.wrote {
			outputs[r.job.dst] = true
		}
	}
	errs := map[string]error{}
	for i := range results {
		r := &results[i]
		if !r.wrote || r.rep == nil || len(r.rep.Compat) == 0 {
			continue
		}
		p := compatPath(r.job)
		if outputs[p] {
			continue
		}
		err, done := errs[p]
		if !done {
			err = writeCompatHeader(p)
			errs[p] = err
		}
		if err != nil {
			r.err = fmt.Errorf("%s: %w", r.job.name, err)
		}
	}
}

func writeCompatHeader(p string) error {
	want := hipify.CompatHeader()
	old, err := readCompatHeader(p)
	switch {
	case err == nil && bytes.Equal(old, want):
		return nil
	case err == nil && !hipify.IsCompatHeader(old), err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s exists and was not written by rocmk: not overwritten", p)
	}
	return safefile.Write(p, want, safefile.Options{Perm: 0o644})
}

// readCompatHeader reads an existing rocmk_hip_compat.h: a regular file of at
// most a few times the header's size (a named pipe or a device of that name
// is refused, never read).
func readCompatHeader(p string) ([]byte, error) {
	return safefile.Read(p, int64(4*len(hipify.CompatHeader())))
}
