package term

import (
	"strings"
	"testing"

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
