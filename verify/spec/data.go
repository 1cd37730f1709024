package spec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DType is an element type of a buffer or scalar.
type DType struct {
	Name   string // "f32"
	Size   int    // bytes
	Float  bool
	Signed bool
}

func parseDType(s string) (DType, bool) {
	switch s {
	case "f16", "half":
		return DType{"f16", 2, true, true}, true
	case "f32", "float":
		return DType{"f32", 4, true, true}, true
	case "f64", "double":
		return DType{"f64", 8, true, true}, true
	case "i8":
		return DType{"i8", 1, false, true}, true
	case "u8":
		return DType{"u8", 1, false, false}, true
	case "i16":
		return DType{"i16", 2, false, true}, true
	case "u16":
		return DType{"u16", 2, false, false}, true
	case "i32", "int":
		return DType{"i32", 4, false, true}, true
	case "u32":
		return DType{"u32", 4, false, false}, true
	case "i64":
		return DType{"i64", 8, false, true}, true
	case "u64":
		return DType{"u64", 8, false, false}, true
	}
	return DType{}, false
}

// round converts x to the nearest value the dtype can hold (what the device
// sees), so references are computed from exactly the device's inputs.
func (d DType) round(x float64) float64 {
	switch d.Name {
	case "f16":
		return f16ToF64(f64ToF16(x))
	case "f32":
		return float64(float32(x))
	case "f64":
		return x
	}
	if math.IsNaN(x) {
		return 0
	}
	x = math.Trunc(x)
	lo, hi := d.limits()
	return math.Max(lo, math.Min(hi, x))
}

func (d DType) limits() (lo, hi float64) {
	bits := d.Size * 8
	if d.Signed {
		return -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1) - 1
	}
	return 0, math.Ldexp(1, bits) - 1
}

// Encode writes vals as little-endian dtype elements.
func (d DType) Encode(vals []float64) []byte {
	out := make([]byte, len(vals)*d.Size)
	for i, v := range vals {
		d.put(out[i*d.Size:], v)
	}
	return out
}

func (d DType) put(b []byte, v float64) {
	le := binary.LittleEndian
	switch d.Name {
	case "f16":
		le.PutUint16(b, f64ToF16(v))
	case "f32":
		le.PutUint32(b, math.Float32bits(float32(v)))
	case "f64":
		le.PutUint64(b, math.Float64bits(v))
	case "i8", "u8":
		b[0] = byte(int64(d.round(v)))
	case "i16", "u16":
		le.PutUint16(b, uint16(int64(d.round(v))))
	case "i32":
		le.PutUint32(b, uint32(int32(d.round(v))))
	case "u32":
		le.PutUint32(b, uint32(d.round(v)))
	case "i64":
		le.PutUint64(b, uint64(int64(d.round(v))))
	case "u64":
		le.PutUint64(b, uint64(d.round(v)))
	}
}

// Decode reads little-endian dtype elements as float64.
func (d DType) Decode(b []byte) []float64 {
	n := len(b) / d.Size
	out := make([]float64, n)
	le := binary.LittleEndian
	for i := range out {
		e := b[i*d.Size:]
		switch d.Name {
		case "f16":
			out[i] = f16ToF64(le.Uint16(e))
		case "f32":
			out[i] = float64(math.Float32frombits(le.Uint32(e)))
		case "f64":
			out[i] = math.Float64frombits(le.Uint64(e))
		case "i8":
			out[i] = float64(int8(e[0]))
		case "u8":
			out[i] = float64(e[0])
		case "i16":
			out[i] = float64(int16(le.Uint16(e)))
		case "u16":
			out[i] = float64(le.Uint16(e))
		case "i32":
			out[i] = float64(int32(le.Uint32(e)))
		case "u32":
			out[i] = float64(le.Uint32(e))
		case "i64":
			out[i] = float64(int64(le.Uint64(e)))
		case "u64":
			out[i] = float64(le.Uint64(e))
		}
	}
	return out
}

// f64ToF16 rounds to IEEE half (round to nearest even).
func f64ToF16(x float64) uint16 {
	f := math.Float32bits(float32(x))
	sign := uint16(f>>16) & 0x8000
	exp := int((f>>23)&0xff) - 127 + 15
	mant := f & 0x7fffff
	switch {
	case (f>>23)&0xff == 0xff: // inf, nan
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - exp)
		h := uint16(mant >> shift)
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && h&1 == 1 {
			h++
		}
		return sign | h
	}
	h := sign | uint16(exp)<<10 | uint16(mant>>13)
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++
	}
	return h
}

func f16ToF64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(mant, -24)
	case 31:
		if mant != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1+mant/1024, exp-15)
}

// Init is how a buffer's initial contents are made.
type Init struct {
	Kind     string // "zero", "random", "iota", "constant", "file"
	Seed     uint64
	Min, Max float64
	Start    float64
	Step     float64
	Value    float64
	Path     string
	Values   []string // expressions, one per element
}

// parseInit reads an init value: absent (zeros), "iota", "zero", or a table
// with one key: random = {seed, min, max}, iota = {start, step},
// constant = V, file = "path".
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
		return Init{}, fmt.Errorf("unknown init %q (want random, iota, constant, values, file or zero)", x)
	case map[string]any:
		if len(x) != 1 {
			var keys []string
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return Init{}, fmt.Errorf("want one of random, iota, constant, values, file; got %s", strings.Join(keys, ", "))
		}
		for k, val := range x {
			switch k {
			case "random":
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
			case "iota":
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
			case "file":
				p, ok := val.(string)
				if !ok || p == "" {
					return Init{}, fmt.Errorf("file: want a path, got %v", val)
				}
				return Init{Kind: "file", Path: p}, nil
			default:
				return Init{}, fmt.Errorf("unknown init %q (want random, iota, constant, values, file or zero)", k)
			}
		}
	}
	return Init{}, fmt.Errorf("want a string or a table, got %v", v)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// fill makes count elements of dtype d; dir resolves file paths, env holds
// the sizes for values expressions.
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
	case "file":
		p := in.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if len(b) < count*d.Size {
			return nil, fmt.Errorf("%s has %d bytes, the buffer needs %d (%d × %s)", in.Path, len(b), count*d.Size, count, d.Name)
		}
		copy(out, d.Decode(b[:count*d.Size]))
	}
	return out, nil
}
