package includes

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScanIncludes(t *testing.T) {
	src := `// #include "in-line-comment.h"
#include "a.h"
  #  include <b/c.h> // trailing
/* #include "in-block-comment.h"
#include "still-comment.h" */ #include "after-multi-line-comment.h"
/* c */ #include "after-comment.h"
#include_next <n.h>
#import "imp.h"
#include MACRO_NAME
#inc\
lude "spliced.h"
const char* s = "#include \"in-string.h\"";
const char* r = R"x(
#include "in-raw-string.h"
)x";
#if __has_include("opt.h") && __has_include_next(<nx.h>) || defined(__has_include)
#endif
#define HAVE_TBB __has_include(<tbb/tbb.h>)
#define LOCAL __has_include("local.h")
#if __has_include(HEADER_MACRO)
#endif
char c = '"'; // a quote in a character literal
#include "last.h"
`
	fs := Scan([]byte(src))
	var got []string
	for _, r := range fs.Refs {
		got = append(got, r.String()+" @"+strconv.Itoa(r.Line)+map[bool]string{true: " macro-body"}[r.InMacro])
	}
	assert.Equal(t, []string{
		`#include "a.h" @2`,
		`#include <b/c.h> @3`,
		`#include "after-multi-line-comment.h" @5`, // the comment is one space: # starts the line
		`#include "after-comment.h" @6`,
		`#include_next <n.h> @7`,
		`#include "imp.h" @8`,
		`#include "" @9`,
		`#include "spliced.h" @10`,
		`__has_include("opt.h") @16`,
		`__has_include_next(<nx.h>) @16`,
		`__has_include(<tbb/tbb.h>) @18 macro-body`,
		`__has_include("local.h") @19 macro-body`,
		`__has_include("") @20`,
		`#include "last.h" @23`,
	}, got)
	assert.False(t, fs.Clock)
	got2, joins := removeSplices([]byte("a\\b\\\nc\\\r\nd"))
	assert.Equal(t, "a\\bcd", string(got2), "a backslash before the first splice is kept")
	assert.Equal(t, []int{3, 4}, joins)
	assert.True(t, Scan([]byte("const char* t = __TIME__;\n")).Clock)
	assert.False(t, Scan([]byte("// __TIME__\nconst char* t = \"__DATE__\";\n")).Clock)
}

var spliceRE = regexp.MustCompile(`\\\r?\n`)

func FuzzScanIncludes(f *testing.F) {
	f.Add([]byte("#include \"a.h\"\n#if __has_include(<b>)\n#endif\n"))
	f.Add([]byte("R\"(\n#include \"x\"\n)\"\n/* */ # include_next <y> \\\n\n"))
	f.Add([]byte("\"a\\b\" x \\\n y \\\r\n z \\\\\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// One pass, as translation phase 2: a splice that appears only once
		// another is removed is not itself removed.
		want := spliceRE.ReplaceAllString(string(b), "")
		if got, _ := removeSplices(b); string(got) != want {
			t.Fatalf("removeSplices(%q) = %q, want %q", b, got, want)
		}
		fs := Scan(b)
		lines := strings.Count(string(b), "\n") + 1
		last := 0
		for _, r := range fs.Refs {
			if r.Line < last || r.Line > lines {
				t.Fatalf("line %d after %d in a %d-line input", r.Line, last, lines)
			}
			last = r.Line
			if strings.ContainsAny(r.Name, "\n") {
				t.Fatalf("name %q spans lines", r.Name)
			}
		}
	})
}
