package outcmp

import (
	"testing"
)

// FuzzCompare: Compare never panics, a run always equals itself, and a
// verdict is symmetric in whether it passes.
func FuzzCompare(f *testing.F) {
	for _, s := range [][2]string{
		{"took 3.2 ms\n", "took 4.2 ms\n"},
		{"x = 1e-3 nan inf 0x7f3a5c000000\n", "x = 1.0e-3 -nan inf 0x7fa1bc200000\n"},
		{"GPU Device 0: \"NVIDIA H200\"\nTest passed\n", "Test passed\n"},
		{"\x00\xff\r\n", "a\tb  c\n\n\n"},
		{"-.5e+309 1.5.6 ..1 --2", "+.5E-400 sm_90"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), 0, 1)
	}
	f.Fuzz(func(t *testing.T, a, b []byte, ca, cb int) {
		r := DefaultRules()
		ra, rb := Run{Stdout: a, ExitCode: ca % 3}, Run{Stdout: b, ExitCode: cb % 3}
		if v := Compare(ra, ra, r); !v.Pass {
			t.Fatalf("%q vs itself: %s (%s)", a, v.Reason, v.Detail)
		}
		if Compare(ra, rb, r).Pass != Compare(rb, ra, r).Pass {
			t.Fatalf("not symmetric: %q vs %q", a, b)
		}
	})
}
