package hipify

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The --diff output applies: go-udiff's ApplyUnified (and patch(1)) turn the
// input into the translation, also when lines are added or removed.
func TestUnifiedDiffApplies(t *testing.T) {
	cases := [][2]string{
		{"a\nb\nc\n", "a\nB\nc\n"},
		{"x\n", "#include <hip/hip_runtime.h>\nx\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n", "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\n11\n12\nY\nZ\n14\n"},
		{"no newline", "no newline either"},
		{"a\nb\n", "a\n"},
		{"x\n1\n2\n3\n4\n5\n6\n7\n8\n9\nlast\n", "#include <hip/hip_runtime.h>\nx\n1\n2\n3\n4\n5\n6\n7\n8\n9\nLAST\n"},
		{"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "a\nc\nd\ne\nf\ng\nh\ni\nJ\n"},
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "hipify", "cuda", "*.cu"))
	for _, f := range files {
		in, err := os.ReadFile(f)
		require.NoError(t, err)
		out, err := os.ReadFile(strings.TrimSuffix(f, ".cu") + ".hip.golden")
		require.NoError(t, err)
		cases = append(cases, [2]string{string(in), string(out)})
	}
	for _, c := range cases {
		d := UnifiedDiff("a/x", "b/x", c[0], c[1])
		got, err := applyUnified(d, c[0])
		require.NoError(t, err, d)
		assert.Equal(t, c[1], got, d)
	}
	assert.Empty(t, UnifiedDiff("a", "b", "same\n", "same\n"))
}

var hunkRe = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// applyUnified applies a unified diff strictly: hunk headers must give the
// exact line numbers and counts, and context and removed lines must match.
func applyUnified(d, before string) (string, error) {
	old := splitLines(before)
	var out []string
	pos := 0 // next old line to copy
	lines := strings.SplitAfter(d, "\n")
	atoi := func(s string, def int) int {
		if s == "" {
			return def
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	for i := 2; i < len(lines) && lines[i] != ""; {
		m := hunkRe.FindStringSubmatch(strings.TrimSuffix(lines[i], "\n"))
		if m == nil {
			return "", fmt.Errorf("bad hunk header %q", lines[i])
		}
		os, on, ns, nn := atoi(m[1], 0), atoi(m[2], 1), atoi(m[3], 0), atoi(m[4], 1)
		start := os - 1
		if on == 0 {
			start = os
		}
		if start < pos || start > len(old) {
			return "", fmt.Errorf("hunk %q out of order", lines[i])
		}
		out = append(out, old[pos:start]...)
		if nn > 0 && ns-1 != len(out) || nn == 0 && ns != len(out) {
			return "", fmt.Errorf("hunk %q: new start %d, but the output has %d lines before it", lines[i], ns, len(out))
		}
		pos = start
		i++
		gotOld, gotNew := 0, 0
		for ; i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@"); i++ {
			l := lines[i]
			if strings.HasPrefix(l, "\\ No newline") {
				last := len(out) - 1
				if strings.HasPrefix(lines[i-1], "-") {
					continue
				}
				out[last] = strings.TrimSuffix(out[last], "\n")
				continue
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(old) || strings.TrimSuffix(old[pos], "\n") != strings.TrimSuffix(l[1:], "\n") {
					return "", fmt.Errorf("line %d does not match %q", pos+1, l)
				}
				if l[0] == ' ' {
					out = append(out, old[pos])
					gotNew++
				}
				pos++
				gotOld++
			case '+':
				out = append(out, l[1:])
				gotNew++
			default:
				return "", fmt.Errorf("unexpected line %q", l)
			}
		}
		if gotOld != on || gotNew != nn {
			return "", fmt.Errorf("hunk counts -%d +%d, body -%d +%d", on, nn, gotOld, gotNew)
		}
	}
	out = append(out, old[pos:]...)
	return strings.Join(out, ""), nil
}
