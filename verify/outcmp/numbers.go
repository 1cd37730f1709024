package outcmp

import (
	"math"
	"regexp"
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

// numberRE finds number candidates: hex and decimal integers, decimals with
// exponents, inf/nan as printf writes them (glibc: "-nan", "inf").
var numberRE = regexp.MustCompile(`[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|(?i:infinity|inf|nan)(?:\([0-9a-zA-Z_]*\))?)`)

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
	for _, loc := range numberRE.FindAllStringIndex(line, -1) {
		s, e := loc[0], loc[1]
		if s < last {
			continue
		}
		if (line[s] == '-' || line[s] == '+') && s > 0 && (isWordByte(line[s-1]) || line[s-1] == '.' || line[s-1] == ')') {
			s++
		}
		tok, ok := parseNumber(line[s:e])
		glued := s > 0 && (isWordByte(line[s-1]) || line[s-1] == '.') || e < len(line) && isWordByte(line[e]) && !isDigitStart(line[s:e])
		if !ok || glued {
			continue
		}
		text(line[last:s])
		toks = append(toks, tok)
		last = e
	}
	text(line[last:])
	for i := range toks {
		if !toks[i].isNum {
			toks[i].text = collapseSpace(toks[i].text)
		}
	}
	return toks
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
	if !strings.ContainsAny(s, " \t") {
		return s
	}
	return blanks.ReplaceAllString(s, " ")
}

var blanks = regexp.MustCompile(`[ \t]+`)

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
