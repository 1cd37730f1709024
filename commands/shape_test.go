package commands

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Thin commands (issue 12): commands/ is flag parsing, one call into the
// package that owns the work, and printing. Its own files stay under 3,000
// lines, and no function here or in commands/term is longer than 80 lines
// or more complex than 20 (gocyclo's count: 1 + each if, for, case and
// && or ||).
func TestCommandsStayThin(t *testing.T) {
	// 3000 until port --run (issue 24): its wiring is in commands/portrun,
	// but the flag hook, exit codes and help text (43 lines) are here
	const maxLines, maxFuncLines, maxComplexity = 3050, 80, 20
	total := 0
	for _, dir := range []string{".", "term"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			require.NoError(t, err)
			if dir == "." {
				total += bytes.Count(src, []byte("\n"))
			}
			f, err := parser.ParseFile(fset, name, src, 0)
			require.NoError(t, err)
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				where := fset.Position(fn.Pos()).String() + " " + fn.Name.Name
				lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
				assert.LessOrEqual(t, lines, maxFuncLines, "%s: %d lines", where, lines)
				c := complexity(fn)
				assert.LessOrEqual(t, c, maxComplexity, "%s: cyclomatic complexity %d", where, c)
			}
		}
	}
	assert.Less(t, total, maxLines, "commands/*.go: %d lines", total)
}

// complexity is gocyclo's cyclomatic complexity of fn.
func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil { // not default
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
