package spec

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unicode"

	"github.com/expr-lang/expr/vm"
)

// view presents flat data with a shape as what expressions index: []float64
// for one dimension, [][]float64 for two, up to six levels of nesting (the
// rows share data's memory).
func view(data []float64, shape []int) any {
	r := len(shape)
	if r <= 1 {
		return data
	}
	lead := func(k int) int { // elements of the first k dimensions
		n := 1
		for _, d := range shape[:k] {
			n *= d
		}
		return n
	}
	l1 := group(data, lead(r-1), shape[r-1])
	if r == 2 {
		return l1
	}
	l2 := group(l1, lead(r-2), shape[r-2])
	if r == 3 {
		return l2
	}
	l3 := group(l2, lead(r-3), shape[r-3])
	if r == 4 {
		return l3
	}
	l4 := group(l3, lead(r-4), shape[r-4])
	if r == 5 {
		return l4
	}
	return group(l4, lead(r-5), shape[r-5])
}

// group splits items into count slices of size elements.
func group[T any](items []T, count, size int) [][]T {
	out := make([][]T, count)
	for i := range out {
		out[i] = items[i*size : (i+1)*size : (i+1)*size]
	}
	return out
}

// nilView is a null buffer of rank dimensions: a nil slice of the type view
// gives, so that "x == nil" is true and reading it is an error.
func nilView(rank int) any {
	t := reflect.TypeOf([]float64(nil))
	for i := 1; i < rank; i++ {
		t = reflect.SliceOf(t)
	}
	return reflect.Zero(t).Interface()
}

// Reference computes the expected contents of the case's output buffers, in
// float64, from the case's inputs (filling them first). Lines run in order;
// each line reads the values as they were before it (so "x[i] = 2 * x[i]"
// reads the input x), elements a line does not assign keep their initial
// values.
func (c *Case) Reference() (map[string][]float64, error) {
	return c.ReferenceContext(context.Background())
}

// ReferenceContext is Reference that stops, with ctx's error, when ctx
// ends (a reference can take long: each element may sum a whole row).
func (c *Case) ReferenceContext(ctx context.Context) (map[string][]float64, error) {
	if err := c.Fill(); err != nil {
		return nil, err
	}
	return c.reference(ctx)
}

// env is what the case's expressions see: sizes, scalars, structs and
// buffers (data: the buffers' current values by name).
func (c *Case) env(data map[string][]float64) map[string]any {
	s := c.Spec
	env := map[string]any{}
	for k, v := range c.Sizes {
		env[k] = int(v)
	}
	for i := range c.Args {
		v := &c.Args[i]
		n := s.names[v.Arg.Name]
		if n == nil || n.decl != v.Arg || n.ambiguous {
			continue // a later step's own value of a scalar
		}
		switch {
		case v.Arg.IsStruct():
			env[v.Arg.Name] = structValue(v.Arg, v.Fields)
		case v.Arg.IsBuffer() && v.Null:
			env[v.Arg.Name] = nilView(len(v.Shape))
		case v.Arg.IsBuffer():
			data[v.Arg.Name] = v.Data
			env[v.Arg.Name] = view(v.Data, v.Shape)
		case v.DType.Float:
			env[v.Arg.Name] = v.Scalar
		default:
			env[v.Arg.Name] = int(v.Scalar)
		}
	}
	return env
}

func (c *Case) reference(ctx context.Context) (map[string][]float64, error) {
	s := c.Spec
	data := map[string][]float64{}
	shapes := map[string][]int{}
	env := c.env(data)
	for i := range c.Args {
		if v := &c.Args[i]; v.Arg.IsBuffer() {
			shapes[v.Arg.Name] = v.Shape
		}
	}
	for k, dims := range s.Temps {
		var shape []int
		n := int64(1)
		for _, d := range dims.([]any) {
			src, _ := exprSource(d)
			x, err := evalInt(src, env)
			if err != nil {
				return nil, c.errAt("temps."+k, "temps.%s: %v", k, err)
			}
			if x < 0 || x > 0 && n > maxHostBytes/16/x {
				return nil, c.errAt("temps."+k, "temps.%s: %v×%d is out of range (a temp is held twice as float64, within %s)", k, shape, x, fmtBytes(maxHostBytes))
			}
			n *= x
			shape = append(shape, int(x))
		}
		data[k] = make([]float64, n)
		shapes[k] = shape
		env[k] = view(data[k], shape)
	}
	natural := map[string]bool{}
	for k := range c.Sizes {
		natural[k] = true
	}
	for li, l := range s.lines {
		at := fmt.Sprintf("reference.%d", li)
		for _, ix := range l.indices {
			env[ix] = 0
			natural[ix] = true
		}
		prog, err := compileNatural(l.rhs, env, natural)
		for _, ix := range l.indices {
			delete(env, ix)
			delete(natural, ix)
		}
		if err != nil {
			var ee *ExprError
			if errors.As(err, &ee) {
				err = ee.shift(l.rhsOff, l.src)
			}
			return nil, c.errAt(at, "reference[%d]: %v", li, err)
		}
		next := append([]float64(nil), data[l.target]...)
		if err := evalLine(ctx, prog, env, l, shapes[l.target], next); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, c.errAt(at, "reference[%d] (%s): %v", li, l.src, err)
		}
		data[l.target] = next
		env[l.target] = view(next, shapes[l.target])
	}
	out := map[string][]float64{}
	for _, name := range s.Outputs() {
		out[name] = data[name]
	}
	return out, nil
}

// evalLine evaluates prog at every index of shape, in parallel over chunks
// of the flat index range, writing into out.
func evalLine(ctx context.Context, prog *vm.Program, env map[string]any, l *refLine, shape []int, out []float64) error {
	total := len(out)
	done := ctx.Done()
	if total == 0 {
		return nil
	}
	workers := runtime.GOMAXPROCS(0)
	if total < 4096 {
		workers = 1
	}
	chunk := (total + workers - 1) / workers
	var mu sync.Mutex
	var firstErr error
	firstAt := total
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, total)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make(map[string]any, len(env)+len(l.indices))
			for k, v := range env {
				local[k] = v
			}
			var machine vm.VM
			idx := make([]int, len(shape))
			for flat := lo; flat < hi; flat++ {
				select {
				case <-done:
					return
				default:
				}
				rem := flat
				for d := len(shape) - 1; d >= 0; d-- {
					idx[d] = rem % shape[d]
					rem /= shape[d]
				}
				for d, name := range l.indices {
					local[name] = idx[d]
				}
				v, err := machine.Run(prog, local)
				if err == nil {
					switch v.(type) {
					case float64, int, bool, int64:
						out[flat] = toF(v)
					default:
						err = fmt.Errorf("value is %T, not a number", v)
					}
				}
				if err != nil {
					mu.Lock()
					if flat < firstAt {
						firstAt, firstErr = flat, fmt.Errorf("at %s: %v", fmtIndex(l.indices, idx), oneLine(exprError(err), l))
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return firstErr
}

// oneLine turns a run-time error into one line. An index out of range names
// the buffer it happened in: the identifier just before the bracket.
func oneLine(err error, l *refLine) string {
	var ee *ExprError
	if !errors.As(err, &ee) {
		return err.Error()
	}
	col := ee.Column + l.rhsOff // 1-based in l.src
	if strings.HasPrefix(ee.Msg, "index out of range") {
		rs := []rune(l.src)
		end := col - 1 // index of '['
		if end > 0 && end <= len(rs) && rs[end-1] != ']' {
			start := end
			for start > 0 && (rs[start-1] == '_' || unicode.IsLetter(rs[start-1]) || unicode.IsDigit(rs[start-1])) {
				start--
			}
			if start < end {
				return fmt.Sprintf("reads %s out of its bounds: %s; the buffer is too small for what the reference reads", string(rs[start:end]), ee.Msg)
			}
		}
		return fmt.Sprintf("%s (at column %d); a buffer is too small for what the reference reads", ee.Msg, col)
	}
	return fmt.Sprintf("%s (at column %d)", ee.Msg, col)
}

func fmtIndex(names []string, idx []int) string {
	var parts []string
	for i, n := range names {
		parts = append(parts, fmt.Sprintf("%s=%d", n, idx[i]))
	}
	return strings.Join(parts, ", ")
}
