package spec

import (
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
)

// The line table gives go-toml's own line and column at every offset
// (it replaced Shape, which rescanned the file for every node).
func TestPlaceMatchesShape(t *testing.T) {
	data := []byte("\n[[verify]]\r\nkernel = \"k\" # ü\n\n  sizes = { n = [1,\n 2] }\n")
	p := &parser{lines: lineStarts(data)}
	p.Reset(data)
	for off := 0; off <= len(data); off++ {
		sh := p.Shape(unstable.Range{Offset: uint32(off)})
		if got := p.place(off); got.line != sh.Start.Line || got.col != sh.Start.Column {
			t.Errorf("offset %d: %d:%d, go-toml %d:%d", off, got.line, got.col, sh.Start.Line, sh.Start.Column)
		}
	}
}
