package spec

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode"

	"github.com/expr-lang/expr/vm"
)

// view presents flat data with a shape as what expressions index:
// []float64, [][]float64 or [][][]float64 (rows share data's memory).
func view(data []float64, shape []int) any {
	switch len(shape) {
	case 2:
		rows := make([][]float64, shape[0])
		for r := range rows {
			rows[r] = data[r*shape[1] : (r+1)*shape[1] : (r+1)*shape[1]]
		}
		return rows
	case 3:
		planes := make([][][]float64, shape[0])
		for p := range planes {
			planes[p] = view(data[p*shape[1]*shape[2]:(p+1)*shape[1]*shape[2]], shape[1:]).([][]float64)
		}
		return planes
	}
	return data
}

// Reference computes the expected contents of the case's output buffers, in
// float64, from the case's inputs. Lines run in order; each line reads the
// values as they were before it (so "x[i] = 2 * x[i]" reads the input x),
// elements a line does not assign keep their initial values.
func (c *Case) Reference() (map[string][]float64, error) {
	out, err := c.reference()
	if err != nil {
		msg := err.Error()
		if sizes := c.SortedSizes(); sizes != "" {
			msg = "with " + strings.ReplaceAll(sizes, " ", ", ") + ": " + msg
		}
		return nil, &Error{File: c.Spec.file, Spec: c.Spec.Label(), Msg: msg}
	}
	return out, nil
}

func (c *Case) reference() (map[string][]float64, error) {
	s := c.Spec
	env := map[string]any{}
	shapes := map[string][]int{}
	data := map[string][]float64{}
	for k, v := range c.Sizes {
		env[k] = int(v)
	}
	for i := range c.Args {
		v := &c.Args[i]
		if !v.Arg.IsBuffer() {
			if v.DType.Float {
				env[v.Arg.Name] = v.Scalar
			} else {
				env[v.Arg.Name] = int(v.Scalar)
			}
			continue
		}
		d := append([]float64(nil), v.Data...)
		data[v.Arg.Name] = d
		shapes[v.Arg.Name] = v.Shape
		env[v.Arg.Name] = view(d, v.Shape)
	}
	for k, dims := range s.Temps {
		var shape []int
		for _, d := range dims.([]any) {
			src, _ := exprSource(d)
			n, err := evalInt(src, env)
			if err != nil {
				return nil, fmt.Errorf("temps.%s: %v", k, err)
			}
			shape = append(shape, int(n))
		}
		n := int64(1)
		for _, d := range shape {
			if d < 0 || int64(d) > maxBufferBytes {
				return nil, fmt.Errorf("temps.%s: dimension %d is out of range", k, d)
			}
			if d > 0 && n > maxBufferBytes/8/int64(d) {
				return nil, fmt.Errorf("temps.%s: %v is over the %s limit", k, shape, fmtBytes(maxBufferBytes))
			}
			n *= int64(d)
		}
		data[k] = make([]float64, n)
		shapes[k] = shape
		env[k] = view(data[k], shape)
	}
	for li, l := range s.lines {
		for _, ix := range l.indices {
			env[ix] = 0
		}
		prog, err := compileExpr(l.rhs, env)
		for _, ix := range l.indices {
			delete(env, ix)
		}
		if err != nil {
			var ee *ExprError
			if errors.As(err, &ee) {
				err = ee.shift(l.rhsOff, l.src)
			}
			return nil, fmt.Errorf("reference[%d]: %v", li, err)
		}
		next := append([]float64(nil), data[l.target]...)
		if err := evalLine(prog, env, l, shapes[l.target], next); err != nil {
			return nil, fmt.Errorf("reference[%d] (%s): %v", li, l.src, err)
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
func evalLine(prog *vm.Program, env map[string]any, l *refLine, shape []int, out []float64) error {
	total := len(out)
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
