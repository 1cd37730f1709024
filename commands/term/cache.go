package term

import (
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/rocmk/rocmk/cache"
)

func EntryTable(ents []cache.Entry, s *Styles, now time.Time) Table {
	t := Table{
		Header: []string{"KEY", "KIND", "SOURCE", "TARGET", "TOOLCHAIN", "ROCM", "SIZE", "CREATED", "USED"},
		Right:  map[int]bool{6: true},
		Style: func(col int, _ []string) *lipgloss.Style {
			return map[int]*lipgloss.Style{0: &s.Dim, 3: &s.Target}[col]
		},
	}
	for _, e := range ents {
		t.Rows = append(t.Rows, []string{
			e.Action.String()[:12], OrDash(e.Meta.Kind), OrDash(e.Meta.Source), OrDash(e.Meta.Target),
			OrDash(e.Meta.Toolchain), OrDash(e.Meta.ROCm), cache.FormatSize(e.Size),
			cache.FormatAge(now, e.Created), cache.FormatAge(now, e.Used),
		})
	}
	return t
}

// Pruned is cache prune's text: the entries removed (or that would be) and
// what remains.
func Pruned(w io.Writer, s *Styles, tr cache.Trimmed, dryRun, quiet bool, now time.Time) error {
	verb, did := "removed", "freed"
	if dryRun {
		verb, did = "would remove", "would free"
	}
	if !quiet && len(tr.Removed)+len(tr.Dirs) > 0 {
		t := Table{Right: map[int]bool{4: true}, Header: []string{"", "SOURCE", "TARGET", "TOOLCHAIN", "SIZE", "USED"}}
		for _, e := range tr.Removed {
			t.Rows = append(t.Rows, []string{verb, OrDash(e.Meta.Source), OrDash(e.Meta.Target), OrDash(e.Meta.Toolchain), cache.FormatSize(e.Size), cache.FormatAge(now, e.Used)})
		}
		for _, d := range tr.Dirs {
			t.Rows = append(t.Rows, []string{verb, Printable(d.Path()+"/", ""), "-", "-", cache.FormatSize(d.Size), cache.FormatAge(now, d.Used)})
		}
		if err := t.Render(w, s); err != nil {
			return err
		}
	}
	left := ""
	if tr.Debris > 0 {
		left = fmt.Sprintf(" and %d %s of interrupted builds", tr.Debris, Plural(tr.Debris, "leftover", "leftovers"))
	}
	dirs, keptDirs := "", ""
	if len(tr.Dirs) > 0 {
		dirs = fmt.Sprintf(", %d %s", len(tr.Dirs), Plural(len(tr.Dirs), "directory", "directories"))
	}
	if tr.KeptDirs > 0 {
		keptDirs = fmt.Sprintf(" and %d %s", tr.KeptDirs, Plural(tr.KeptDirs, "directory", "directories"))
	}
	_, err := fmt.Fprintf(w, "%s %d %s%s%s, %s %s; %d %s%s (%s) %s\n",
		verb, len(tr.Removed), Plural(len(tr.Removed), "entry", "entries"), dirs, left,
		did, cache.FormatSize(tr.Bytes),
		tr.Kept, Plural(tr.Kept, "entry", "entries"), keptDirs, cache.FormatSize(tr.KeptBytes), map[bool]string{true: "would remain", false: "remain"}[dryRun])
	return err
}

// CacheStats is cache stats' text: one labelled line per figure, the
// remote tier's once a remote was used.
func CacheStats(w io.Writer, s *Styles, dir string, st cache.Stats, now time.Time) error {
	rate, since := "-", "-"
	if st.Hits+st.Misses > 0 {
		rate = fmt.Sprintf("%.1f%%", 100*st.HitRate())
	}
	if !st.Since.IsZero() {
		since = st.Since.UTC().Format("2006-01-02 15:04 UTC") + " (" + cache.FormatAge(now, st.Since) + ")"
	}
	rows := [][2]string{
		{"cache", dir},
		{"entries", fmt.Sprint(st.Entries)},
		{"size", cache.FormatSize(st.Bytes)},
	}
	if st.Dirs > 0 {
		// Translated trees and generated device libraries.
		rows = append(rows, [2]string{"directories", fmt.Sprintf("%d, %s", st.Dirs, cache.FormatSize(st.DirBytes))})
	}
	rows = append(rows, [][2]string{
		{"hits", fmt.Sprint(st.Hits)},
		{"misses", fmt.Sprint(st.Misses)},
		{"hit rate", rate},
	}...)
	if r := st.Remote; r != (cache.RemoteStats{}) {
		// The remote tier's share: lookups that reached the server
		// (a local hit never does), failures, and traffic.
		rows = append(rows, [][2]string{
			{"remote hits", fmt.Sprint(r.Hits)},
			{"remote misses", fmt.Sprint(r.Misses)},
			{"remote errors", fmt.Sprint(r.Errors)},
			{"downloaded", cache.FormatSize(r.BytesDown)},
			{"uploaded", fmt.Sprintf("%s in %d %s", cache.FormatSize(r.BytesUp), r.Uploads, Plural(int(r.Uploads), "entry", "entries"))},
		}...)
	}
	rows = append(rows, [2]string{"since", since})
	width := 8
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s  %s\n", s.Header.Render(PadRight(r[0], width)), r[1])
	}
	return nil
}

// CacheVerified is cache verify's text: each problem, then the verdict.
func CacheVerified(w io.Writer, s *Styles, r cache.VerifyReport) error {
	for _, p := range r.Problems {
		state := ""
		if p.Fixed {
			state = " (removed)"
		}
		fmt.Fprintf(w, "%s %s: %s%s\n", s.Err.Render("corrupt"), Printable(p.Path, ""), p.Reason, state)
	}
	verdict := s.OK.Render("ok")
	if !r.OK() {
		verdict = s.Err.Render(fmt.Sprintf("%d %s, %d %s removed", len(r.Problems), Plural(len(r.Problems), "problem", "problems"), r.Removed, Plural(r.Removed, "file", "files")))
	}
	what := fmt.Sprintf("%d %s and %d data %s", r.Entries, Plural(r.Entries, "entry", "entries"), r.DataFiles, Plural(r.DataFiles, "file", "files"))
	if r.Dirs > 0 {
		what = fmt.Sprintf("%d %s, %d data %s and %d %s", r.Entries, Plural(r.Entries, "entry", "entries"), r.DataFiles, Plural(r.DataFiles, "file", "files"), r.Dirs, Plural(r.Dirs, "directory", "directories"))
	}
	_, err := fmt.Fprintf(w, "checked %s (%s): %s\n", what, cache.FormatSize(r.Bytes), verdict)
	return err
}
