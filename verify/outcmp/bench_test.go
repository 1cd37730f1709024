package outcmp

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCompare: 10,000 lines that all differ within tolerance, so
// every line goes through the rules and the tokenizer (the worst case;
// equal lines are a string compare).
func BenchmarkCompare(b *testing.B) {
	var x, y strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&x, "row %d: value %.6f took %.2f ms\n", i, float64(i)/7, 1.5)
		fmt.Fprintf(&y, "row %d: value %.6f took %.2f ms\n", i, float64(i)/7+1e-6, 1.7)
	}
	ref, got := Run{Stdout: []byte(x.String())}, Run{Stdout: []byte(y.String())}
	b.SetBytes(int64(x.Len()))
	for b.Loop() {
		if v := Compare(ref, got, DefaultRules()); !v.Pass {
			b.Fatal(v.Reason, v.Detail)
		}
	}
}
