package verify

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoreLoadsOnce: 64 goroutines asking for one module (run with -race)
// build its image once and load it once; a failure is kept, not retried.
func TestStoreLoadsOnce(t *testing.T) {
	rt := NewFakeRuntime()
	s := NewStore(rt)
	var builds atomic.Int32
	image := func(context.Context) (Image, error) {
		builds.Add(1)
		return Image{Data: []byte("obj"), Explain: "test"}, nil
	}
	var wg sync.WaitGroup
	got := make([]*Loaded, 64)
	for i := range got {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			l, err := s.Get(context.Background(), "m", image)
			assert.NoError(t, err)
			got[i] = l
		}(i)
	}
	wg.Wait()
	assert.Equal(t, int32(1), builds.Load())
	assert.Equal(t, 1, rt.Loads)
	for _, l := range got {
		assert.Same(t, got[0], l)
	}
	assert.Same(t, got[0], s.Loaded("m"))
	assert.Nil(t, s.Loaded("other"), "a lookup does not load")

	bad := func(context.Context) (Image, error) { builds.Add(1); return Image{}, errors.New("no compiler") }
	_, err := s.Get(context.Background(), "bad", bad)
	assert.ErrorContains(t, err, "no compiler")
	_, err = s.Get(context.Background(), "bad", bad)
	assert.ErrorContains(t, err, "no compiler")
	assert.Equal(t, int32(2), builds.Load(), "a failed module is not built again")

	_, err = s.Get(context.Background(), "empty", func(context.Context) (Image, error) { return Image{Explain: "chose x"}, nil })
	assert.ErrorContains(t, err, `module "empty": chose x: fakeModuleLoadData`)
	require.NoError(t, s.Close())
}

// TestOneLoader keeps module loading in one place: outside this file's
// Store, no non-test code calls a Runtime's Load (verify's suite runner,
// port and verify/gpu all go through the Store).
func TestOneLoader(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != ".." && (n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, ".."+string(filepath.Separator)))
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == "verify/store.go" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			// rt.Load(image): a method Load with one argument. Atomic and
			// sync.Map loads take none or a key and are not on a Runtime;
			// those are told apart by the receiver's name below.
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Load" && len(call.Args) == 1 {
				if !isSyncMapLoad(sel) {
					t.Errorf("%s: %s calls Load outside verify.Store", rel, fset.Position(call.Pos()))
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, files, 100, "the walk saw rocmk's sources")
}

// isSyncMapLoad is true for m.Load(key) on a sync.Map (compile's caches):
// their receivers are named by what they cache, never rt/runtime.
func isSyncMapLoad(sel *ast.SelectorExpr) bool {
	var recv string
	switch x := sel.X.(type) {
	case *ast.Ident:
		recv = x.Name
	case *ast.SelectorExpr:
		recv = x.Sel.Name
	}
	r := strings.ToLower(recv)
	return !strings.Contains(r, "rt") && !strings.Contains(r, "runtime") && !strings.Contains(r, "gpu")
}
