package hipify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type tokLit struct {
	pos string
	tok Token
	lit string
}

func scanAll(t *testing.T, src string) ([]tokLit, []string) {
	t.Helper()
	var errs []string
	var s Scanner
	s.Init("x.cu", []byte(src), func(p Position, msg string) { errs = append(errs, p.String()+": "+msg) })
	var out []tokLit
	for i := 0; ; i++ {
		require.Less(t, i, 10000, "scanner does not terminate")
		pos, tok, lit := s.Scan()
		if tok == EOF {
			break
		}
		out = append(out, tokLit{pos.String(), tok, lit})
	}
	return out, errs
}

func TestScanTokens(t *testing.T) {
	src := "#include <cuda_runtime.h>\n" +
		"  # define N \\\n  32 // width\n" +
		"/* cudaMalloc */ k<<<g, b>>>(x); a >> b; a>>=1;\n" +
		"auto s = R\"xy(a \"cudaFree\" )\" b)xy\"; char c = '\\''; float f = 1.5e-3f;\n" +
		"u8\"x\" L'a' 1'000 0x1p+3 ::x->y\n"
	got, errs := scanAll(t, src)
	assert.Empty(t, errs)
	want := []tokLit{
		{"1:1", HASH, "#include"}, {"1:10", HEADER, "<cuda_runtime.h>"}, {"1:26", PPEND, ""},
		{"2:3", HASH, "#define"}, {"2:12", IDENT, "N"}, {"3:3", NUMBER, "32"}, {"3:6", COMMENT, "// width"}, {"3:14", PPEND, ""},
		{"4:1", COMMENT, "/* cudaMalloc */"}, {"4:18", IDENT, "k"}, {"4:19", LAUNCH, "<<<"}, {"4:22", IDENT, "g"},
		{"4:23", PUNCT, ","}, {"4:25", IDENT, "b"}, {"4:26", ENDLAUNCH, ">>>"}, {"4:29", PUNCT, "("}, {"4:30", IDENT, "x"},
		{"4:31", PUNCT, ")"}, {"4:32", PUNCT, ";"}, {"4:34", IDENT, "a"}, {"4:36", PUNCT, ">>"}, {"4:39", IDENT, "b"},
		{"4:40", PUNCT, ";"}, {"4:42", IDENT, "a"}, {"4:43", PUNCT, ">>="}, {"4:46", NUMBER, "1"}, {"4:47", PUNCT, ";"},
		{"5:1", IDENT, "auto"}, {"5:6", IDENT, "s"}, {"5:8", PUNCT, "="}, {"5:10", STRING, `R"xy(a "cudaFree" )" b)xy"`},
		{"5:36", PUNCT, ";"}, {"5:38", IDENT, "char"}, {"5:43", IDENT, "c"}, {"5:45", PUNCT, "="}, {"5:47", CHAR, `'\''`},
		{"5:51", PUNCT, ";"}, {"5:53", IDENT, "float"}, {"5:59", IDENT, "f"}, {"5:61", PUNCT, "="}, {"5:63", NUMBER, "1.5e-3f"},
		{"5:70", PUNCT, ";"},
		{"6:1", STRING, `u8"x"`}, {"6:7", CHAR, "L'a'"}, {"6:12", NUMBER, "1'000"}, {"6:18", NUMBER, "0x1p+3"},
		{"6:25", PUNCT, "::"}, {"6:27", IDENT, "x"}, {"6:28", PUNCT, "->"}, {"6:30", IDENT, "y"},
	}
	assert.Equal(t, want, got)
}

func TestScanPositionsAfterMultilineTokens(t *testing.T) {
	src := "/* a\nb */ x\nR\"(1\n2)\" y\n\"s\\\nt\" z"
	got, _ := scanAll(t, src)
	var ids []string
	for _, tl := range got {
		if tl.tok == IDENT {
			ids = append(ids, tl.lit+"@"+tl.pos)
		}
	}
	assert.Equal(t, []string{"x@2:6", "y@4:5", "z@6:4"}, ids)
}

func TestScanErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"/* open", "x.cu:1:1: comment not terminated"},
		{"x = \"open\n", "x.cu:1:5: string literal not terminated"},
		{"a\nR\"d(open", "x.cu:2:1: raw string literal not terminated"},
	} {
		_, errs := scanAll(t, tc.src)
		assert.Equal(t, []string{tc.want}, errs, tc.src)
	}
}

// The concatenation of the tokens and the text between them is the source.
func TestScanCoversSource(t *testing.T) {
	src := "#if X \\\n && Y\nint a = b<<<1,2>>>(c); // z\n#endif\n'x' \"q\"\n"
	var s Scanner
	s.Init("", []byte(src), nil)
	var b strings.Builder
	last := 0
	for {
		pos, tok, lit := s.Scan()
		if tok == EOF {
			break
		}
		require.GreaterOrEqual(t, pos.Offset, last, fmt.Sprint(tok, lit))
		b.WriteString(src[last:pos.Offset])
		b.WriteString(lit)
		last = pos.Offset + len(lit)
	}
	b.WriteString(src[last:])
	assert.Equal(t, src, b.String())
}

// BenchmarkScan measures the scanner alone over the benchmark corpus.
func BenchmarkScan(b *testing.B) {
	corpus, _ := benchCorpus(b)
	b.SetBytes(int64(len(corpus)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var s Scanner
		s.Init("corpus.cu", corpus, nil)
		for {
			if _, tok, _ := s.Scan(); tok == EOF {
				break
			}
		}
	}
}
