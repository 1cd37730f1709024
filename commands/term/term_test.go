package term

import (
	"strings"
	"testing"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/inspect"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noEnv is an empty environment: no colour forced, no TTY.
type noEnv struct{}

func (noEnv) Getenv(string) string { return "" }
func (noEnv) Environ() []string    { return nil }

func TestMarshalDocPutsSchemaFirst(t *testing.T) {
	b, err := MarshalDoc("thing", struct {
		A int `json:"a"`
	}{3})
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"schema\": \"rocmk.thing/v1\",\n  \"a\": 3\n}\n", string(b))
	_, err = MarshalDoc("thing", []int{1})
	assert.Error(t, err)
}

func TestTableAlignsStyledCells(t *testing.T) {
	var b strings.Builder
	s := NewStyles(NewRenderer(&b, noEnv{}))
	require.NoError(t, Table{Header: []string{"NAME", "N"}, Rows: [][]string{{"a", "10"}, {"long", "2"}}, Right: map[int]bool{1: true}}.Render(&b, s))
	assert.Equal(t, "NAME   N\na     10\nlong   2\n", b.String())
}

// Names from files and file systems reach the terminal escaped in tables
// and messages (the commands' tests check inspect's text and errors).
func TestControlCharactersEscaped(t *testing.T) {
	var b strings.Builder
	s := NewStyles(NewRenderer(&b, noEnv{}))
	require.NoError(t, Table{Header: []string{"NAME", "N"}, Rows: [][]string{{"a\x1b[2J\tb\u202e", "1"}, {"\xff\n", "2"}}}.Render(&b, s))
	assert.Equal(t, "NAME                 N\n"+`a\x1b[2J\x09b\u202e`+"  1\n"+`\xff\x0a`+"             2\n", b.String())
	assert.Equal(t, "line 1\n\tline 2 \\x1b]0;x\\x07", Printable("line 1\n\tline 2 \x1b]0;x\x07", "\n\t"))
}

// TestMessagesEscapeNames (issue 19): a source name with escape codes
// reached the terminal raw in `build -v` lines, warnings and the
// "# name [target]" header of a failure.
func TestMessagesEscapeNames(t *testing.T) {
	var out, errb strings.Builder
	ui := New(Options{Stdout: &out, Stderr: &errb, Env: noEnv{}, Verbosity: 1})
	name := "k\x1b[2J\x1b]0;pwned\x07.hip"
	ui.Verbosef(1, "compiled  %s [gfx90a]", name)
	ui.Warnf("%s: spills", name)
	ui.Infof("%s", name)
	Diagnostics(ui, compile.ErrorList{{Src: name, Target: inspect.Target{Proc: "gfx90a"}, Stderr: []byte(name + ":1:1: error: x\n\tnote")}})
	assert.NotContains(t, errb.String(), "\x1b")
	assert.NotContains(t, errb.String(), "\x07")
	assert.Contains(t, errb.String(), `# k\x1b[2J\x1b]0;pwned\x07.hip [gfx90a]`)
	assert.Contains(t, errb.String(), "error: x\n\tnote", "newlines and tabs of messages stay")
}
