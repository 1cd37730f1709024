package spec

import (
	"fmt"
	"reflect"
)

// Struct arguments are laid out with C's rules: each field at the next
// offset that is a multiple of its alignment (a scalar's alignment is its
// size), the struct aligned to its largest field (or to align when given,
// as alignas), its size rounded up to that alignment.

// layout is a struct's fields' offsets, its size and its alignment.
type layout struct {
	offsets []int
	size    int
	align   int
}

func structLayout(a *Arg) layout {
	var l layout
	l.align = 1
	for _, f := range a.Struct {
		d, _ := parseDType(f.DType)
		l.size = roundUp(l.size, d.Size)
		l.offsets = append(l.offsets, l.size)
		l.size += d.Size
		l.align = max(l.align, d.Size)
	}
	l.align = max(l.align, a.Align)
	l.size = roundUp(l.size, l.align)
	return l
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// checkStruct checks a struct argument's keys and fields.
func (s *Spec) checkStruct(a *Arg, where, path string) error {
	for _, k := range []struct {
		key string
		set bool
	}{{"dtype", a.DType != ""}, {"count", a.Count != nil}, {"shape", len(a.Shape) > 0}, {"init", a.Init != nil},
		{"output", a.Output}, {"value", a.Value != nil}, {"min_count", a.MinCount != nil}, {"null", a.Null != nil}} {
		if k.set {
			return s.errAt(path+"."+k.key, "%s: %s does not apply to a struct (its fields have dtypes and values)", where, k.key)
		}
	}
	if len(a.Struct) == 0 {
		return s.errAt(path+".struct", "%s: struct: no fields", where)
	}
	seen := map[string]bool{}
	natural := 1
	for i, f := range a.Struct {
		fw, fp := fmt.Sprintf("%s: struct[%d]", where, i), fmt.Sprintf("%s.struct.%d", path, i)
		if f.Name != "" {
			fw += " (" + f.Name + ")"
		}
		if err := checkIdent(f.Name); err != nil {
			return s.errAt(fp, "%s: %v", fw, err)
		}
		if seen[f.Name] {
			return s.errAt(fp+".name", "%s: field %s is already in the struct", fw, f.Name)
		}
		seen[f.Name] = true
		d, ok := parseDType(f.DType)
		if !ok {
			return s.errAt(fp+".dtype", "%s: unknown dtype %q (want one of %s)", fw, f.DType, dtypeList())
		}
		natural = max(natural, d.Size)
		if f.Value == nil {
			if n := s.names[f.Name]; n == nil || n.kind != "size" {
				return s.errAt(fp, "%s: a field needs a value (a number or an expression over the sizes)", fw)
			}
		}
	}
	if a.Align != 0 && (a.Align < natural || a.Align&(a.Align-1) != 0 || a.Align > 256) {
		return s.errAt(path+".align", "%s: align = %d: want a power of two from %d (the largest field) to 256", where, a.Align, natural)
	}
	return nil
}

// fieldSource is a field's value expression: its value, or its name (a
// size of that name).
func fieldSource(f *Field) (string, error) {
	if f.Value == nil {
		return f.Name, nil
	}
	return exprSource(f.Value)
}

// encodeStruct lays out the field values (already rounded to their dtypes).
func encodeStruct(a *Arg, vals []float64) []byte {
	l := structLayout(a)
	out := make([]byte, l.size)
	for i, f := range a.Struct {
		d, _ := parseDType(f.DType)
		copy(out[l.offsets[i]:], d.Encode(vals[i:i+1]))
	}
	return out
}

// structValue is what expressions see for a struct: a Go struct whose
// fields are named as the spec's (p.n, p.scale), ints for integer dtypes.
func structValue(a *Arg, vals []float64) any {
	var fields []reflect.StructField
	for i, f := range a.Struct {
		t := reflect.TypeOf(0.0)
		if d, _ := parseDType(f.DType); !d.Float {
			t = reflect.TypeOf(0)
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: t, Tag: reflect.StructTag(fmt.Sprintf("expr:%q", f.Name))})
	}
	v := reflect.New(reflect.StructOf(fields)).Elem()
	for i := range a.Struct {
		if v.Field(i).Kind() == reflect.Int {
			v.Field(i).SetInt(int64(vals[i]))
		} else {
			v.Field(i).SetFloat(vals[i])
		}
	}
	return v.Interface()
}
