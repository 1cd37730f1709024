package hipify

import (
	"bytes"
	"testing"
)

// BenchmarkTranslateLarge translates one 100 MB file (the realistic
// kernels and launchers replicated, 2.5 million lines), as the issue that
// found big files slower per line did, and reports lines/s and the bytes
// allocated per input byte (docs/hipify.md, "Speed").
func BenchmarkTranslateLarge(b *testing.B) {
	unit, _ := benchCorpus(b)
	var src bytes.Buffer
	for src.Len() < 100_000_000 {
		src.Write(unit)
	}
	lines := bytes.Count(src.Bytes(), []byte("\n"))
	Entries()
	b.ReportAllocs()
	b.SetBytes(int64(src.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Translate("large.cu", src.Bytes(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
