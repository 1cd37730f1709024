package outcmp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTokenize(t *testing.T) {
	type tk struct {
		text string
		num  bool
	}
	for _, c := range []struct {
		line string
		want []tk
	}{
		{"sum = 1.5e-3, n=42", []tk{{"sum = ", false}, {"1.5e-3", true}, {", n=", false}, {"42", true}}},
		{"x=-1 a-1 (-2)", []tk{{"x=", false}, {"-1", true}, {" a-", false}, {"1", true}, {" (", false}, {"-2", true}, {")", false}}},
		// digits in names stay text; a unit may follow a number.
		{"sm_90 float4 H200 3ms 1.5x", []tk{{"sm_90 float4 H200 ", false}, {"3", true}, {"ms ", false}, {"1.5", true}, {"x", false}}},
		{"inf -nan NaN info nano", []tk{{"inf", true}, {" ", false}, {"-nan", true}, {" ", false}, {"NaN", true}, {" info nano", false}}},
		{"mask 0x1F 0xffg", []tk{{"mask ", false}, {"0x1F", true}, {" 0xffg", false}}},
		{"a  \t 1", []tk{{"a ", false}, {"1", true}}},
		{"version 1.2.3", []tk{{"version ", false}, {"1.2", true}, {".3", false}}},
	} {
		var got []tk
		for _, x := range tokenize(c.line) {
			got = append(got, tk{x.text, x.isNum})
		}
		assert.Equal(t, c.want, got, c.line)
	}
}

func TestCloseEnough(t *testing.T) {
	r := DefaultRules()
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"1.000000", "1.000001", true},  // last digit, and within rtol
		{"0.000012", "0.000013", true},  // one unit in the last printed digit
		{"0.000012", "0.000014", false}, // two
		{"1.0e-07", "1.1e-07", true},    // last digit of the mantissa
		{"1.0e-07", "1.3e-07", false},
		{"100000", "100001", true}, // within rtol 1e-5
		{"100", "101", false},      // integers are exact as printed
		{"1e5", "100000", true},
		{"0xff", "0xFF", true},
		{"0x1f2e3d4c", "0x1f2e3d4d", false}, // hex is a bit pattern: exact
		{"0x10", "16", false},
		{"-0.000000", "0.000000", true},
		{"nan", "-nan", true},
		{"nan", "0", false},
		{"inf", "inf", true},
		{"inf", "-inf", false},
		{"inf", "1e308", false},
		{"1e400", "1e400", true}, // out of float64's range: both +Inf
	} {
		a, aok := parseNumber(c.a)
		b, bok := parseNumber(c.b)
		assert.True(t, aok && bok, "%s %s", c.a, c.b)
		assert.Equal(t, c.want, closeEnough(a, b, r), "%s vs %s", c.a, c.b)
		assert.Equal(t, c.want, closeEnough(b, a, r), "%s vs %s", c.b, c.a)
	}
	assert.Equal(t, 1e-6, lastDigitUnit("0.000012"))
	assert.InDelta(t, 1e-8, lastDigitUnit("1.0e-07"), 1e-22)
	assert.Equal(t, 0.0, lastDigitUnit("12"))
	assert.Equal(t, 1000.0, lastDigitUnit("1e3"))
	v, _ := parseNumber("-inf")
	assert.True(t, math.IsInf(v.val, -1))
}
