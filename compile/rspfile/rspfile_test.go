package rspfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenizeGNU(t *testing.T) {
	for in, want := range map[string][]string{
		"":                              nil,
		" -DA=1\t-O2\n-I inc \r\n":      {"-DA=1", "-O2", "-I", "inc"},
		`-DS="a b" '-DT=c d' x\ y`:      {"-DS=a b", "-DT=c d", "x y"},
		`-DQ=\"q\" "in\"side" ''`:       {`-DQ="q"`, `in"side`},
		"\uFEFF-g0":                     {"-g0"},
		`'unterminated quote -DX`:       {"unterminated quote -DX"},
		`a"b c"d`:                       {"ab cd"},
		"trailing\\":                    {"trailing\\"},
		"-DX=1 # not a comment, an arg": {"-DX=1", "#", "not", "a", "comment,", "an", "arg"},
	} {
		assert.Equal(t, want, tokenizeGNU(in), "%q", in)
	}
}

func TestExpandResponseFiles(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, dir, "a.rsp", "-DA @sub/b.rsp -DC\n")
	writeTestFile(t, dir, "sub/b.rsp", "-DB\n")
	got, err := Expand([]string{"-O2", "@a.rsp", "@", "x@y"}, dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"-O2", "-DA", "-DB", "-DC", "@", "x@y"}, got, "nested names are relative to the file naming them")

	writeTestFile(t, dir, "loop.rsp", "@loop2.rsp")
	writeTestFile(t, dir, "loop2.rsp", "-DX @loop.rsp")
	_, err = Expand([]string{"@loop.rsp"}, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "includes itself")

	_, err = Expand([]string{"@missing.rsp"}, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "response file @missing.rsp")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.rsp"), []byte(strings.Repeat("-DX ", maxRspSize/4+1)), 0o644))
	_, err = Expand([]string{"@big.rsp"}, dir)
	require.Error(t, err, "larger than maxRspSize")

	for i := 0; i <= maxRspDepth; i++ {
		writeTestFile(t, dir, "d"+string(rune('a'+i))+".rsp", "@d"+string(rune('a'+i+1))+".rsp")
	}
	_, err = Expand([]string{"@da.rsp"}, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nested more than")

	mkfifo(t, filepath.Join(dir, "fifo.rsp"))
	_, err = Expand([]string{"@fifo.rsp"}, dir)
	require.Error(t, err, "a FIFO would block: refused, not read")
}

func writeTestFile(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}
