package hipify

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// ptxStress returns a kernel with n single-instruction asm statements,
// each as the shape says: "plain" (translatable), "if" (the same, each in
// #if __CUDA_ARCH__ >= 800 ... #else a fallback #endif), "if-ptx" (PTX
// rocmk keeps, routed around by the #else) or "one-if" (all in one #if).
func ptxStress(n int, shape string) []byte {
	const tr = `  asm("tanh.approx.f32 %0, %1;" : "=f"(x) : "f"(y));` + "\n"
	const kept = `  asm volatile("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(u) : "r"(a), "r"(b), "r"(c));` + "\n"
	var b strings.Builder
	b.WriteString("__global__ void k(float *p) {\n  float x = 0, y = p[0];\n  unsigned u, a = 1, b = 2, c = 3;\n")
	if shape == "one-if" {
		b.WriteString("#if __CUDA_ARCH__ >= 800\n")
	}
	for i := 0; i < n; i++ {
		switch shape {
		case "plain", "one-if":
			b.WriteString(tr)
		case "if":
			b.WriteString("#if __CUDA_ARCH__ >= 800\n" + tr + "#else\n  x = tanhf(y);\n#endif\n")
		case "if-ptx":
			b.WriteString("#if __CUDA_ARCH__ >= 800\n" + kept + "#else\n  u = a ^ b ^ c;\n#endif\n")
		}
	}
	if shape == "one-if" {
		b.WriteString("#else\n  x = tanhf(y);\n#endif\n")
	}
	b.WriteString("  p[0] = x + u;\n}\n")
	return []byte(b.String())
}

var ptxShapes = []string{"plain", "if", "if-ptx", "one-if"}

// BenchmarkTranslatePTX translates 10,000 and 20,000 asm statements of
// each shape: the time per op must double, not quadruple (docs/hipify.md,
// "Speed").
func BenchmarkTranslatePTX(b *testing.B) {
	Entries()
	for _, shape := range ptxShapes {
		for _, n := range []int{10_000, 20_000} {
			src := ptxStress(n, shape)
			b.Run(fmt.Sprintf("%s/n=%d", shape, n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, _, err := Translate("ptx.cu", src, Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestTranslatePTXOutput checks what the stress inputs translate to: every
// statement translated (or, for kept PTX, routed around by its #else) and
// no inline-asm hazard left for any of them.
func TestTranslatePTXOutput(t *testing.T) {
	const n = 300
	for _, shape := range ptxShapes {
		out, rep, err := Translate("ptx.cu", ptxStress(n, shape), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, got := n, 0
		switch shape {
		case "if-ptx":
			got = strings.Count(string(out), ") && !defined(__HIP__)\n  asm volatile(\"lop3")
		default:
			got = strings.Count(string(out), "(x) = rocmk_ptx_tanh_approx_f32((y));")
		}
		if got != want {
			t.Errorf("%s: %d of %d statements translated or routed:\n%s", shape, got, want, out)
		}
		for _, d := range rep.Hazards {
			if d.Code == "inline-asm" {
				t.Errorf("%s: inline-asm hazard left: %s", shape, d.Where)
			}
		}
	}
}

// TestTranslatePTXLinear checks that 4 times the asm statements take about
// 4 times as long, not 16 (issue 19: translating each statement sorted all
// the edits and filtered all the hazards again). Timed, so not with -short,
// and with generous slack: the best of 3 runs, ratio under 8.
func TestTranslatePTXLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timed")
	}
	Entries()
	best := func(src []byte) time.Duration {
		d := time.Duration(1 << 62)
		for range 3 {
			runtime.GC()
			t0 := time.Now()
			if _, _, err := Translate("ptx.cu", src, Options{}); err != nil {
				t.Fatal(err)
			}
			d = min(d, time.Since(t0))
		}
		return d
	}
	const n = 3000
	for _, shape := range ptxShapes {
		small, large := best(ptxStress(n, shape)), best(ptxStress(4*n, shape))
		if r := float64(large) / float64(small); r >= 8 {
			t.Errorf("%s: %d statements took %v, %d took %v: %.1f times as long (linear: 4, quadratic: 16)", shape, n, small, 4*n, large, r)
		} else {
			t.Logf("%s: %v -> %v (%.1fx)", shape, small, large, r)
		}
	}
}
