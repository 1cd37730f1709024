package hipify

// A FileCheck subset, enough for HIPIFY's unit tests: CHECK, CHECK-NEXT,
// CHECK-SAME, CHECK-EMPTY, CHECK-NOT, CHECK-DAG, CHECK-LABEL, CHECK-COUNT-n,
// {{regex}}, [[VAR:regex]] / [[VAR]] and [[@LINE+-n]]. After a failed
// directive the matcher re-synchronises (the next CHECK-NEXT/SAME is searched
// like a plain CHECK), so later directives still get partial credit; a test
// passes only if every directive holds (same scoring as hipify-score.py).

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

type directive struct {
	kind  string // CHECK NEXT SAME EMPTY NOT DAG LABEL COUNT
	pat   string
	line  int
	count int
}

type checkResult struct {
	d      directive
	ok     bool
	reason string
}

var (
	countRe = regexp.MustCompile(`^-COUNT-(\d+):`)
	wsRe    = regexp.MustCompile(`[ \t]+`)
	posix   = strings.NewReplacer("[:alpha:]", "a-zA-Z", "[:digit:]", "0-9", "[:alnum:]", "a-zA-Z0-9",
		"[:upper:]", "A-Z", "[:lower:]", "a-z", "[:space:]", `\s`, "[:blank:]", ` \t`, "[:xdigit:]", "0-9A-Fa-f", "[:word:]", `\w`)
)

var suffixes = []struct{ suf, kind string }{
	{"-NEXT:", "NEXT"}, {"-NOT:", "NOT"}, {"-SAME:", "SAME"}, {"-EMPTY:", "EMPTY"},
	{"-DAG:", "DAG"}, {"-LABEL:", "LABEL"}, {":", "CHECK"},
}

func isWordByte(c byte) bool {
	return c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func parseChecks(text, prefix string) []directive {
	var ds []directive
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		start := 0
		for {
			i := strings.Index(line[start:], prefix)
			if i < 0 {
				break
			}
			i += start
			if i > 0 && isWordByte(line[i-1]) {
				start = i + 1
				continue
			}
			rest := line[i+len(prefix):]
			kind, count, skip := "", 1, 0
			if m := countRe.FindStringSubmatch(rest); m != nil {
				kind, skip = "COUNT", len(m[0])
				count, _ = strconv.Atoi(m[1])
			} else {
				for _, s := range suffixes {
					if strings.HasPrefix(rest, s.suf) {
						kind, skip = s.kind, len(s.suf)
						break
					}
				}
			}
			if kind == "" {
				start = i + 1
				continue
			}
			pat := wsRe.ReplaceAllString(strings.Trim(rest[skip:], " \t"), " ")
			ds = append(ds, directive{kind: kind, pat: pat, line: n + 1, count: count})
			break
		}
	}
	return ds
}

// canonOutput applies run_test.sh's `sed -Ee 's|//.+|// |g'` and FileCheck's
// blank canonicalisation to the tool output.
func canonOutput(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, l := range lines {
		if j := strings.Index(l, "//"); j >= 0 && j+2 < len(l) {
			lines[i] = l[:j] + "// "
		}
	}
	return wsRe.ReplaceAllString(strings.Join(lines, "\n"), " ")
}

type matcher struct {
	lit  string
	re   *regexp.Regexp
	defs []string
}

func buildPattern(pat string, line int, vars map[string]string) (matcher, error) {
	if !strings.Contains(pat, "{{") && !strings.Contains(pat, "[[") {
		return matcher{lit: pat}, nil
	}
	var b strings.Builder
	var defs []string
	for i := 0; i < len(pat); {
		switch {
		case strings.HasPrefix(pat[i:], "{{"):
			j := strings.Index(pat[i+2:], "}}")
			if j < 0 {
				return matcher{}, fmt.Errorf("unterminated {{")
			}
			j += i + 2
			for strings.HasPrefix(pat[j:], "}}}") {
				j++
			}
			b.WriteString("(?:" + posix.Replace(pat[i+2:j]) + ")")
			i = j + 2
		case strings.HasPrefix(pat[i:], "[["):
			j := strings.Index(pat[i+2:], "]]")
			if j < 0 {
				return matcher{}, fmt.Errorf("unterminated [[")
			}
			j += i + 2
			body := pat[i+2 : j]
			switch {
			case strings.HasPrefix(body, "@LINE"):
				n := line
				if rest := body[5:]; rest != "" {
					d, err := strconv.Atoi(rest)
					if err != nil {
						return matcher{}, fmt.Errorf("bad %s", body)
					}
					n += d
				}
				b.WriteString(regexp.QuoteMeta(strconv.Itoa(n)))
			case strings.Contains(body, ":"):
				name, rx, _ := strings.Cut(body, ":")
				name = strings.TrimPrefix(name, "$")
				b.WriteString("(?P<" + name + ">" + posix.Replace(rx) + ")")
				defs = append(defs, name)
			default:
				v, ok := vars[strings.TrimPrefix(body, "$")]
				if !ok {
					return matcher{}, fmt.Errorf("undefined variable %s", body)
				}
				b.WriteString(regexp.QuoteMeta(v))
			}
			i = j + 2
		default:
			j := len(pat)
			for _, k := range []int{strings.Index(pat[i:], "{{"), strings.Index(pat[i:], "[[")} {
				if k >= 0 && i+k < j {
					j = i + k
				}
			}
			b.WriteString(regexp.QuoteMeta(pat[i:j]))
			i = j
		}
	}
	re, err := regexp.Compile("(?m)" + b.String())
	if err != nil {
		return matcher{}, err
	}
	return matcher{re: re, defs: defs}, nil
}

func (m matcher) find(buf string, start, end int) (int, int, map[string]string, bool) {
	if end > len(buf) {
		end = len(buf)
	}
	if start > end {
		return 0, 0, nil, false
	}
	if m.re == nil {
		k := strings.Index(buf[start:end], m.lit)
		if k < 0 {
			return 0, 0, nil, false
		}
		return start + k, start + k + len(m.lit), nil, true
	}
	loc := m.re.FindStringSubmatchIndex(buf[start:end])
	if loc == nil {
		return 0, 0, nil, false
	}
	vars := map[string]string{}
	for _, d := range m.defs {
		if k := m.re.SubexpIndex(d); k >= 0 && loc[2*k] >= 0 {
			vars[d] = buf[start+loc[2*k] : start+loc[2*k+1]]
		}
	}
	return start + loc[0], start + loc[1], vars, true
}

// fileCheck evaluates the directives against the canonicalised output.
func fileCheck(ds []directive, buf string) []checkResult {
	var res []checkResult
	pos := 0
	anchored := true
	var pendingNot []directive
	vars := map[string]string{}
	settle := func(limit int) {
		for _, c := range pendingNot {
			m, err := buildPattern(c.pat, c.line, vars)
			if err != nil {
				res = append(res, checkResult{c, false, err.Error()})
				continue
			}
			if s, _, _, ok := m.find(buf, pos, limit); ok {
				res = append(res, checkResult{c, false, fmt.Sprintf("CHECK-NOT pattern found at line %d", strings.Count(buf[:s], "\n")+1)})
			} else {
				res = append(res, checkResult{c, true, ""})
			}
		}
		pendingNot = pendingNot[:0]
	}
	for i := 0; i < len(ds); {
		c := ds[i]
		switch c.kind {
		case "NOT":
			pendingNot = append(pendingNot, c)
			i++
			continue
		case "DAG":
			type span struct{ s, e int }
			var used []span
			maxEnd, first := pos, -1
			for ; i < len(ds) && ds[i].kind == "DAG"; i++ {
				g := ds[i]
				m, err := buildPattern(g.pat, g.line, vars)
				if err != nil {
					res = append(res, checkResult{g, false, err.Error()})
					continue
				}
				found := false
				for from := pos; ; {
					s, e, vs, ok := m.find(buf, from, len(buf))
					if !ok {
						break
					}
					overlap := false
					for _, u := range used {
						if s < u.e && u.s < e {
							overlap = true
						}
					}
					if overlap {
						from = s + 1
						continue
					}
					used = append(used, span{s, e})
					for k, v := range vs {
						vars[k] = v
					}
					maxEnd = max(maxEnd, e)
					if first < 0 || s < first {
						first = s
					}
					found = true
					break
				}
				res = append(res, checkResult{g, found, map[bool]string{false: "CHECK-DAG pattern not found"}[found]})
			}
			if first >= 0 {
				settle(first)
				pos = maxEnd
			}
			continue
		case "EMPTY":
			nl := strings.IndexByte(buf[pos:], '\n')
			ok := nl >= 0 && (pos+nl+1 == len(buf) || buf[pos+nl+1] == '\n')
			if ok && anchored {
				settle(pos + nl + 1)
				pos += nl + 1
				res = append(res, checkResult{c, true, ""})
			} else {
				res = append(res, checkResult{c, false, "next line is not empty"})
				anchored = false
			}
			i++
			continue
		}
		m, err := buildPattern(c.pat, c.line, vars)
		if err != nil {
			res = append(res, checkResult{c, false, err.Error()})
			anchored = false
			i++
			continue
		}
		reps := 1
		if c.kind == "COUNT" {
			reps = c.count
		}
		s0, cur, ok, reason := -1, pos, true, ""
		newVars := map[string]string{}
		for r := 0; r < reps; r++ {
			s, e, vs, found := m.find(buf, cur, len(buf))
			if !found {
				ok, reason = false, fmt.Sprintf("pattern not found after line %d", strings.Count(buf[:pos], "\n")+1)
				break
			}
			if s0 < 0 {
				s0 = s
			}
			cur = e
			for k, v := range vs {
				newVars[k] = v
			}
		}
		if ok && (c.kind == "NEXT" || c.kind == "SAME") && anchored {
			want := 1
			if c.kind == "SAME" {
				want = 0
			}
			if n := strings.Count(buf[pos:s0], "\n"); n != want {
				ok, reason = false, fmt.Sprintf("CHECK-%s matched %d lines after the previous match", c.kind, n)
			}
		}
		if ok {
			settle(s0)
			pos = cur
			for k, v := range newVars {
				vars[k] = v
			}
			res = append(res, checkResult{c, true, ""})
			anchored = true
		} else {
			res = append(res, checkResult{c, false, reason})
			anchored = false
		}
		i++
	}
	settle(len(buf))
	return res
}
