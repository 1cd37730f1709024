package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOneExecPath keeps every program run in one place, the Runner (cf.
// cmd/go's Shell): outside compile/runner/runner.go, rocmk's code may use os/exec
// only to look a program up (LookPath and its errors), and never
// os.StartProcess or syscall's exec calls. Tests are exempt: they build rocmk
// and run it and helper processes; so are the test-helper packages that only
// tests import (remotetest, slurmtest), which start servers and daemons.
func TestOneExecPath(t *testing.T) {
	lookups := map[string]bool{"LookPath": true, "ErrNotFound": true, "ErrDot": true, "Error": true}
	banned := map[string]map[string]bool{"os": {"StartProcess": true}, "syscall": {"Exec": true, "ForkExec": true, "StartProcess": true}}
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "../.." && (n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../.."+string(filepath.Separator)))
		testHelper := strings.HasSuffix(filepath.Base(filepath.Dir(path)), "test")
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || testHelper || rel == "compile/runner/runner.go" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		names := map[string]string{} // local name -> import path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			local := filepath.Base(p)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			if p == "os/exec" && local == "." {
				t.Errorf("%s: dot-imports os/exec", rel)
			}
			names[local] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch p := names[x.Name]; {
			case p == "os/exec" && !lookups[sel.Sel.Name],
				banned[p][sel.Sel.Name]:
				t.Errorf("%s: %s.%s runs a program outside the Runner (use runner.Runner)", fset.Position(sel.Pos()), x.Name, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 50, "the walk saw rocmk's sources")
}
