package hipify

import (
	"fmt"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// UnifiedDiff renders a unified diff (3 lines of context) of before and
// after. The line-level edits come from go-udiff; the hunks are formatted
// here so their headers count lines exactly as patch(1) expects.
func UnifiedDiff(from, to, before, after string) string {
	if before == after {
		return ""
	}
	edits := udiff.Lines(before, after)
	sort.Slice(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	oldLines := splitLines(before)
	// line index of each byte offset that starts a line
	lineAt := map[int]int{}
	off := 0
	for i, l := range oldLines {
		lineAt[off] = i
		off += len(l)
	}
	lineAt[off] = len(oldLines)
	type change struct {
		oldStart, oldEnd int // old line range [oldStart, oldEnd)
		newText          []string
	}
	var cs []change
	for _, e := range edits {
		s, ok1 := lineAt[e.Start]
		en, ok2 := lineAt[e.End]
		if !ok1 || !ok2 { // not line-aligned (cannot happen with Lines): fall back to whole file
			return fmt.Sprintf("--- %s\n+++ %s\n%s", from, to, wholeFileHunk(oldLines, splitLines(after)))
		}
		cs = append(cs, change{s, en, splitLines(e.New)})
	}
	const ctx = 3
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
	delta := 0 // new line number - old line number before the current position
	for i := 0; i < len(cs); {
		j := i
		for j+1 < len(cs) && cs[j+1].oldStart-cs[j].oldEnd <= 2*ctx {
			j++
		}
		hs := max(0, cs[i].oldStart-ctx)
		he := min(len(oldLines), cs[j].oldEnd+ctx)
		var body strings.Builder
		oldN, newN := 0, 0
		pos := hs
		d := delta
		for k := i; k <= j; k++ {
			for ; pos < cs[k].oldStart; pos++ {
				body.WriteString(" " + withNL(oldLines[pos]))
				oldN++
				newN++
			}
			for ; pos < cs[k].oldEnd; pos++ {
				body.WriteString("-" + withNL(oldLines[pos]))
				oldN++
			}
			for _, l := range cs[k].newText {
				body.WriteString("+" + withNL(l))
				newN++
			}
			d += len(cs[k].newText) - (cs[k].oldEnd - cs[k].oldStart)
		}
		for ; pos < he; pos++ {
			body.WriteString(" " + withNL(oldLines[pos]))
			oldN++
			newN++
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(hs, oldN), hunkRange(hs+delta, newN))
		b.WriteString(body.String())
		delta = d
		i = j + 1
	}
	return b.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func wholeFileHunk(a, b []string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "@@ -%s +%s @@\n", hunkRange(0, len(a)), hunkRange(0, len(b)))
	for _, l := range a {
		s.WriteString("-" + withNL(l))
	}
	for _, l := range b {
		s.WriteString("+" + withNL(l))
	}
	return s.String()
}

// splitLines splits s after each newline; a last line without one is kept.
func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func withNL(l string) string {
	if strings.HasSuffix(l, "\n") {
		return l
	}
	return l + "\n\\ No newline at end of file\n"
}
