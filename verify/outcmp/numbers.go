package outcmp

import (
	"math"
	"strconv"
	"strings"
)

// token is a piece of a line: a number or the text between numbers.
type token struct {
	text  string
	isNum bool
	val   float64
	unit  float64 // one unit in the last printed digit; 0 for an integer
	exact bool    // hex: a bit pattern (a checksum, a mask), not a quantity
}

// numberAt is the end of the number that starts at line[i], or -1: a
// hex or decimal integer, a decimal with an exponent, or inf/nan as printf
// writes them (glibc: "-nan", "inf"), with an optional sign. (A scanner,
// not a regular expression: it runs on every differing line.)
func numberAt(line string, i int) int {
	j := i
	if j < len(line) && (line[j] == '+' || line[j] == '-') {
		j++
	}
	if j+2 < len(line) && line[j] == '0' && (line[j+1] == 'x' || line[j+1] == 'X') && isHex(line[j+2]) {
		j += 3
		for j < len(line) && isHex(line[j]) {
			j++
		}
		return j
	}
	if e := decimalAt(line, j); e > j {
		return e
	}
	return specialAt(line, j)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func digitsAt(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// decimalAt: digits, an optional point and digits (at least one digit in
// all), an optional exponent.
func decimalAt(s string, i int) int {
	j := digitsAt(s, i)
	ints := j - i
	if j < len(s) && s[j] == '.' {
		k := digitsAt(s, j+1)
		if ints == 0 && k == j+1 {
			return -1
		}
		j = k
	} else if ints == 0 {
		return -1
	}
	if j+1 < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if s[k] == '+' || s[k] == '-' {
			k++
		}
		if e := digitsAt(s, k); e > k {
			j = e
		}
	}
	return j
}

// specialAt: inf, infinity or nan in any case, with glibc's optional
// "(payload)".
func specialAt(s string, i int) int {
	if i >= len(s) || strings.IndexByte("iInN", s[i]) < 0 {
		return -1
	}
	j := -1
	for _, w := range []string{"infinity", "inf", "nan"} {
		if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
			j = i + len(w)
			break
		}
	}
	if j < 0 || j >= len(s) || s[j] != '(' {
		return j
	}
	k := j + 1
	for k < len(s) && isWordByte(s[k]) {
		k++
	}
	if k < len(s) && s[k] == ')' {
		return k + 1
	}
	return j
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// tokenize splits a line into numbers and text. Digits glued to a
// preceding letter belong to a name ("sm_90", "float4", "H200") and stay
// text, and so do "inf"/"nan" inside words ("info"); a sign glued to a word
// ("a-1") is text too. Runs of white space in text are one space, so a
// number printed one column wider does not make its line differ.
func tokenize(line string) []token {
	var toks []token
	text := func(s string) {
		if s == "" {
			return
		}
		if n := len(toks); n > 0 && !toks[n-1].isNum {
			toks[n-1].text += s
			return
		}
		toks = append(toks, token{text: s})
	}
	last := 0
	for _, sp := range numberSpans(line) {
		tok, ok := parseNumber(line[sp[0]:sp[1]])
		if !ok {
			continue
		}
		text(line[last:sp[0]])
		toks = append(toks, tok)
		last = sp[1]
	}
	text(line[last:])
	for i := range toks {
		if !toks[i].isNum {
			toks[i].text = collapseSpace(toks[i].text)
		}
	}
	return toks
}

// numberSpans are where the numbers of a line are, by the rules of
// tokenize.
func numberSpans(line string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(line); i++ {
		s, e := i, numberAt(line, i)
		if e < 0 {
			continue
		}
		i = e - 1
		if (line[s] == '-' || line[s] == '+') && s > 0 && (isWordByte(line[s-1]) || line[s-1] == '.' || line[s-1] == ')') {
			s++
		}
		glued := s > 0 && (isWordByte(line[s-1]) || line[s-1] == '.') || e < len(line) && isWordByte(line[e]) && !isDigitStart(line[s:e])
		if !glued {
			spans = append(spans, [2]int{s, e})
		}
	}
	return spans
}

// isDigitStart: a decimal number may be followed by letters (a unit, "3ms",
// "1.5x"); inf, nan and hex may not ("info", "0xffg").
func isDigitStart(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return false
	}
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '.')
}

// collapseSpace makes each run of blanks one space.
func collapseSpace(s string) string {
	if !strings.Contains(s, "  ") && !strings.ContainsRune(s, '\t') {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		blank := s[i] == ' ' || s[i] == '\t'
		if blank && len(b) > 0 && b[len(b)-1] == ' ' {
			continue
		}
		if blank {
			b = append(b, ' ')
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// parseNumber parses a number token and works out its printed precision.
func parseNumber(s string) (token, bool) {
	t := token{text: s, isNum: true}
	body := strings.TrimLeft(s, "+-")
	neg := strings.HasPrefix(s, "-")
	if i := strings.IndexByte(body, '('); i >= 0 { // nan(0x7fc00000)
		body = body[:i]
	}
	switch {
	case strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X"):
		u, err := strconv.ParseUint(body[2:], 16, 64)
		if err != nil {
			return t, false
		}
		t.val, t.exact = float64(u), true
	default:
		v, err := strconv.ParseFloat(body, 64)
		if err != nil && !isRangeErr(err) {
			return t, false
		}
		t.val = v
		t.unit = lastDigitUnit(body)
	}
	if neg {
		t.val = -t.val
	}
	return t, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// lastDigitUnit is one unit in the last printed digit of a decimal with a
// point or an exponent ("0.125" -> 0.001, "1.5e-03" -> 1e-4), 0 for an
// integer: an integer is exact as printed.
func lastDigitUnit(s string) float64 {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return 0
		}
		exp = e
	} else if !strings.Contains(s, ".") {
		return 0
	}
	dec := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		dec = len(mant) - i - 1
	}
	return math.Pow(10, float64(exp-dec))
}

// closeEnough compares two numbers: hex exactly, NaN equals NaN (of either sign), an
// infinity only itself, and finite numbers within the tolerance plus half
// a printed unit for each side (two values within tolerance may round to
// neighbouring last digits).
func closeEnough(a, b token, r Rules) bool {
	x, y := a.val, b.val
	switch {
	case a.exact || b.exact:
		return a.exact && b.exact && x == y
	case math.IsNaN(x) || math.IsNaN(y):
		return math.IsNaN(x) && math.IsNaN(y)
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		return x == y
	case x == y:
		return true
	}
	bound := r.AbsTol + r.RelTol*math.Max(math.Abs(x), math.Abs(y)) + (a.unit+b.unit)/2
	return math.Abs(x-y) <= bound*(1+1e-9)
}
