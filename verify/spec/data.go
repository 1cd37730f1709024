package spec

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"

	"github.com/expr-lang/expr/vm"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/verify"
)

// DType is an element type of a buffer or scalar: verify's DType with the
// facts a spec needs.
type DType struct {
	Name   string // "f32"
	Size   int    // bytes
	Float  bool
	Signed bool
	V      verify.DType
}

func parseDType(s string) (DType, bool) {
	switch s {
	case "half":
		s = "f16"
	case "float":
		s = "f32"
	case "double":
		s = "f64"
	case "int":
		s = "i32"
	}
	v, err := verify.ParseDType(s)
	if err != nil {
		return DType{}, false
	}
	return DType{Name: v.String(), Size: v.Size(), Float: v.IsFloat(), Signed: v.IsSigned(), V: v}, true
}

// round converts x to the nearest value the dtype can hold (what the device
// sees), so references are computed from exactly the device's inputs (see
// verify.DType.Round: integers truncate and saturate, fp8 saturates).
func (d DType) round(x float64) float64 { return d.V.Round(x) }

// Encode writes vals as little-endian dtype elements.
func (d DType) Encode(vals []float64) []byte {
	out := verify.NewBuffer(d.V, len(vals))
	for i, v := range vals {
		verify.Encode(d.V, out, i, d.round(v))
	}
	return out
}

// Decode reads little-endian dtype elements as float64.
func (d DType) Decode(b []byte) []float64 {
	out := make([]float64, verify.Len(d.V, b))
	for i := range out {
		out[i] = verify.Decode(d.V, b, i)
	}
	return out
}

// Init is how a buffer's initial contents are made.
type Init struct {
	Kind     string // "zero", "random", "iota", "constant", "values", "expr", "file"
	Seed     uint64
	Min, Max float64
	Start    float64
	Step     float64
	Value    float64
	Path     string
	Values   []string // expressions, one per element
	Expr     string   // expression of the flat index i, for every element
	// Pointers names the buffer a table of device addresses points into:
	// element j is its address plus j*Stride elements (the reference sees
	// the offsets j*Stride).
	Pointers string
	Stride   string
}

// parseInit reads an init value: absent (zeros), "iota", "zero", or a table
// with one key: random = {seed, min, max}, iota = {start, step},
// constant = V, values = [...], expr = "f(i)", file = "path",
// pointers = { buffer = "name", stride = "expr" }.
func parseInit(v any) (Init, error) {
	switch x := v.(type) {
	case nil:
		return Init{Kind: "zero"}, nil
	case string:
		switch x {
		case "zero", "zeros":
			return Init{Kind: "zero"}, nil
		case "iota":
			return Init{Kind: "iota", Step: 1}, nil
		case "random":
			return Init{Kind: "random", Seed: 1, Min: -1, Max: 1}, nil
		}
		return Init{}, fmt.Errorf("unknown init %q (want random, iota, constant, values, expr, file, pointers or zero)", x)
	case map[string]any:
		if len(x) != 1 {
			var keys []string
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return Init{}, fmt.Errorf("want one of random, iota, constant, values, expr, file, pointers; got %s", strings.Join(keys, ", "))
		}
		for k, val := range x {
			return parseInitKey(k, val)
		}
	}
	return Init{}, fmt.Errorf("want a string or a table, got %v", v)
}

// parseInitKey reads an init table's one key.
func parseInitKey(k string, val any) (Init, error) {
	switch k {
	case "random":
		return parseRandom(val)
	case "iota":
		return parseIota(val)
	case "constant":
		f, ok := number(val)
		if !ok {
			return Init{}, fmt.Errorf("constant: want a number, got %v", val)
		}
		return Init{Kind: "constant", Value: f}, nil
	case "values":
		list, ok := val.([]any)
		if !ok || len(list) == 0 {
			return Init{}, fmt.Errorf("values: want a list of numbers or expressions, got %v", val)
		}
		in := Init{Kind: "values"}
		for _, e := range list {
			src, err := exprSource(e)
			if err != nil {
				return Init{}, fmt.Errorf("values: %v", err)
			}
			in.Values = append(in.Values, src)
		}
		return in, nil
	case "expr":
		src, ok := val.(string)
		if !ok || strings.TrimSpace(src) == "" {
			return Init{}, fmt.Errorf("expr: want an expression of the element index i, got %v", val)
		}
		return Init{Kind: "expr", Expr: src}, nil
	case "pointers":
		return parsePointers(val)
	case "file":
		p, ok := val.(string)
		if !ok || p == "" {
			return Init{}, fmt.Errorf("file: want a path, got %v", val)
		}
		return Init{Kind: "file", Path: p}, nil
	}
	return Init{}, fmt.Errorf("unknown init %q (want random, iota, constant, values, expr, file, pointers or zero)", k)
}

// parseRandom reads random = {seed, min, max}.
func parseRandom(val any) (Init, error) {
	in := Init{Kind: "random", Seed: 1, Min: -1, Max: 1}
	t, ok := val.(map[string]any)
	if !ok {
		return Init{}, errors.New("random: want a table {seed, min, max}")
	}
	for tk, tv := range t {
		f, ok := number(tv)
		if !ok {
			return Init{}, fmt.Errorf("random.%s: want a number, got %v", tk, tv)
		}
		switch tk {
		case "seed":
			in.Seed = uint64(f)
		case "min":
			in.Min = f
		case "max":
			in.Max = f
		default:
			return Init{}, fmt.Errorf("random: unknown key %q (want seed, min, max)", tk)
		}
	}
	if in.Max < in.Min {
		return Init{}, fmt.Errorf("random: max %v is below min %v", in.Max, in.Min)
	}
	return in, nil
}

// parseIota reads iota = {start, step}.
func parseIota(val any) (Init, error) {
	in := Init{Kind: "iota", Step: 1}
	t, ok := val.(map[string]any)
	if !ok {
		return Init{}, errors.New("iota: want a table {start, step}")
	}
	for tk, tv := range t {
		f, ok := number(tv)
		if !ok {
			return Init{}, fmt.Errorf("iota.%s: want a number, got %v", tk, tv)
		}
		switch tk {
		case "start":
			in.Start = f
		case "step":
			in.Step = f
		default:
			return Init{}, fmt.Errorf("iota: unknown key %q (want start, step)", tk)
		}
	}
	return in, nil
}

// parsePointers reads pointers = { buffer = "name", stride = "expr" }.
func parsePointers(val any) (Init, error) {
	t, ok := val.(map[string]any)
	in := Init{Kind: "pointers", Stride: "0"}
	if !ok {
		return Init{}, errors.New("pointers: want a table { buffer = \"name\", stride = \"elements between pointers\" }")
	}
	for tk, tv := range t {
		switch tk {
		case "buffer":
			in.Pointers, _ = tv.(string)
		case "stride":
			src, err := exprSource(tv)
			if err != nil {
				return Init{}, fmt.Errorf("pointers.stride: %v", err)
			}
			in.Stride = src
		default:
			return Init{}, fmt.Errorf("pointers: unknown key %q (want buffer, stride)", tk)
		}
	}
	if in.Pointers == "" {
		return Init{}, errors.New("pointers: want buffer = \"name\", the buffer the addresses point into")
	}
	return in, nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// fill makes count elements of dtype d; dir resolves file paths, env holds
// the sizes for values and expr expressions.
func (in Init) fill(d DType, count int, dir string, env map[string]any) ([]float64, error) {
	out := make([]float64, count)
	switch in.Kind {
	case "zero":
	case "values":
		if len(in.Values) != count {
			return nil, fmt.Errorf("values: %d values for a buffer of %d elements", len(in.Values), count)
		}
		for i, src := range in.Values {
			x, err := evalNumber(src, env)
			if err != nil {
				return nil, fmt.Errorf("values[%d]: %v", i, err)
			}
			out[i] = d.round(x)
		}
	case "expr":
		local := make(map[string]any, len(env)+1)
		for k, v := range env {
			local[k] = v
		}
		local["i"] = 0
		prog, err := compileExpr(in.Expr, local)
		if err != nil {
			return nil, fmt.Errorf("expr: %w", err)
		}
		var machine vm.VM
		for i := range out {
			local["i"] = i
			v, err := machine.Run(prog, local)
			if err != nil {
				return nil, fmt.Errorf("expr: at i=%d: %w", i, exprError(err))
			}
			x, ok := number(v)
			if !ok {
				return nil, fmt.Errorf("expr: at i=%d: %v is not a number", i, v)
			}
			out[i] = d.round(x)
		}
	case "constant":
		v := d.round(in.Value)
		for i := range out {
			out[i] = v
		}
	case "iota":
		for i := range out {
			out[i] = d.round(in.Start + float64(i)*in.Step)
		}
	case "random":
		r := rand.New(rand.NewPCG(in.Seed, 0x726f636d6b)) // "rocmk"
		span := in.Max - in.Min
		for i := range out {
			x := in.Min + r.Float64()*span
			if !d.Float {
				lo, hi := math.Ceil(in.Min), math.Floor(in.Max)
				x = lo + math.Floor(r.Float64()*(hi-lo+1))
			}
			out[i] = d.round(x)
		}
	case "pointers":
		stride, err := evalInt(in.Stride, env)
		if err != nil {
			return nil, fmt.Errorf("pointers.stride: %v", err)
		}
		for i := range out {
			out[i] = float64(int64(i) * stride)
		}
	case "file":
		b, err := readPrefix(in.Path, dir, count*d.Size)
		if err != nil {
			return nil, err
		}
		if len(b) < count*d.Size {
			return nil, fmt.Errorf("%s has %d bytes, the buffer needs %d (%d × %s)", in.Path, len(b), count*d.Size, count, d.Name)
		}
		for i := range out {
			out[i] = verify.Decode(d.V, b, i)
		}
	}
	return out, nil
}

// readPrefix reads the first n bytes of a regular file (fewer when it is
// shorter); a named pipe or a device is refused, never waited on or read
// forever.
func readPrefix(path, dir string, n int) ([]byte, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, fi, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, min(int64(n), fi.Size()))
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
