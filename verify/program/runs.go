package program

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/verify/outcmp"
)

// reference is the original's run: the recording's, or one run now.
func (r *run) reference(ctx context.Context) *outcmp.Run {
	if r.ref != nil {
		return &r.ref.Run
	}
	return r.runSide(ctx, r.rep.Original)
}

// translated is the translation's run, or its stored output.
func (r *run) translated(ctx context.Context) *outcmp.Run {
	if r.o.Record != "" {
		return &outcmp.Run{}
	}
	if r.o.GotOutput == "" {
		return r.runSide(ctx, r.rep.Translation)
	}
	b, err := safefile.Read(r.o.GotOutput, maxOutput)
	if err != nil {
		r.rep.Translation.RunError = err.Error()
		return nil
	}
	// a stored output is a run that ended well: only its text is compared
	return &outcmp.Run{Stdout: b, Files: map[string][]byte{}}
}

// runSide runs a built side in a fresh copy of the program's data.
func (r *run) runSide(ctx context.Context, s *Side) *outcmp.Run {
	dir := filepath.Join(r.o.Work, "run-"+s.Name)
	if err := copyData(r.dataDir, dir, r.units[0] != r.prog); err != nil {
		s.RunError = err.Error()
		return nil
	}
	// both run as ./NAME: programs print argv[0] (the H200 run: "[.../original/prog]
	// - Starting..." against ".../translation/prog")
	name := strings.TrimSuffix(filepath.Base(r.prog), filepath.Ext(r.prog))
	if err := copyFile(s.Binary, filepath.Join(dir, name)); err != nil {
		s.RunError = err.Error()
		return nil
	}
	r.o.Info("%s: running the %s (time limit %s)", r.o.Program, s.Name, r.o.Timeout)
	res, err := r.o.Exec.Run(ctx, Cmd{Argv: append([]string{"./" + name}, r.o.Args...), Dir: dir, Timeout: r.o.Timeout})
	if err != nil {
		s.RunError = err.Error()
		return nil
	}
	res.Files = map[string][]byte{}
	for _, f := range r.o.Rules.Files {
		if b, err := safefile.Read(filepath.Join(dir, filepath.FromSlash(f)), maxOutput); err == nil {
			res.Files[f] = b
		}
	}
	s.Ran, s.Status, s.Elapsed = true, res.Status(), res.Elapsed
	s.Run = &res
	return &res
}

// record saves the original's run for --against.
func (r *run) record(ref outcmp.Run) {
	rec := outcmp.Recording{Program: r.o.Program, Args: r.rep.Args, Toolchain: r.rep.Original.Toolchain,
		Device: r.o.Tools.Device, Run: ref, Created: time.Now().UTC()}
	if err := outcmp.WriteRecording(r.o.Record, rec); err != nil {
		r.rep.Note = "recording not written: " + err.Error()
		return
	}
	r.rep.Recorded = r.o.Record
	r.rep.Stage = StageRecorded
}

// copyData copies the program directory's files (its data: inputs, and
// the sources, which programs rarely read) into a fresh dir, skipping
// hidden ones; for a one-file program, only the files beside it. A directory too large to copy for every run is an error.
func copyData(from, to string, recursive bool) error {
	if err := os.RemoveAll(to); err != nil {
		return err
	}
	var total int64
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if rel != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() && rel != "." && !recursive {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if total += fi.Size(); total > maxDataBytes {
			return fmt.Errorf("%s: more than %d MiB of data to copy for each run", from, maxDataBytes>>20)
		}
		return copyFile(p, dst)
	})
}

// copyFile copies a regular file with its permissions (and write for us).
func copyFile(from, to string) error {
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, fi.Mode().Perm()|0o200)
}
