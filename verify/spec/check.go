package spec

import (
	"bytes"
	"debug/elf"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/rocmk/rocmk/inspect"
)

// KernelInfo is what a code object says about one kernel.
type KernelInfo struct {
	Name      string    // the symbol
	Demangled string    // full C++ name with parameters; "" when not mangled
	Args      []ArgInfo // explicit and hidden arguments in order; nil when unknown (cubin, PTX)
}

// ArgInfo is one kernel argument in the code object's metadata.
type ArgInfo struct {
	Name     string // the parameter's name, when the metadata has it
	TypeName string // ".type_name", when present ("float*")
	Offset   int
	Size     int
	Kind     string // ".value_kind": global_buffer, by_value, hidden_*...
}

// hidden reports whether the runtime, not the user, passes the argument.
func (a ArgInfo) hidden() bool { return strings.HasPrefix(a.Kind, "hidden_") }

func (k *KernelInfo) display() string {
	if k.Demangled == "" {
		if d, err := demangle.ToString(k.Name); err == nil {
			k.Demangled = d
		}
	}
	if k.Demangled == "" || k.Demangled == k.Name {
		return k.Name
	}
	return fmt.Sprintf("%s (%s)", k.Demangled, k.Name)
}

func squash(s string) string { return strings.Join(strings.Fields(s), "") }

// unscoped drops the namespaces that qualify a name: vllm::f<a::b> is
// f<a::b>.
func unscoped(name string) string {
	end := strings.IndexByte(name, '<')
	if end < 0 {
		end = len(name)
	}
	if i := strings.LastIndex(name[:end], "::"); i >= 0 {
		return name[i+2:]
	}
	return name
}

// Resolve finds the spec's kernel among kernels: by symbol, by its C++ name
// with template arguments ("scale<float, 4>", spaces ignored), or by a plain
// name when exactly one kernel has it. An unknown name lists the kernels the
// code object has. A spec with steps has every step's kernel resolved (an
// error names the step): Resolve returns the first and records them all in
// s for CheckArgs and Run.
func Resolve(s *Spec, kernels []KernelInfo) (*KernelInfo, error) {
	if len(s.steps) == 0 {
		return resolveOne(s, s.Kernel, "", kernels)
	}
	var infos []*KernelInfo
	for _, st := range s.steps {
		prefix := ""
		if st.label != "" {
			prefix = st.label + ": "
		}
		k, err := resolveOne(s, st.kernel, prefix, kernels)
		if err != nil {
			return nil, err
		}
		infos = append(infos, k)
	}
	s.resolved = infos
	s.symbols = nil
	for _, k := range infos {
		s.symbols = append(s.symbols, k.Name)
	}
	return infos[0], nil
}

func resolveOne(s *Spec, kernel, prefix string, kernels []KernelInfo) (*KernelInfo, error) {
	want := squash(kernel)
	for i := range kernels {
		if kernels[i].Name == kernel {
			return &kernels[i], nil
		}
	}
	var byTemplate, byName []*KernelInfo
	for i := range kernels {
		k := &kernels[i]
		full, err := demangle.ToString(k.Name, demangle.NoParams)
		if err != nil {
			continue
		}
		// A name without its namespaces matches too ("rope<float>" is
		// "vllm::rope<float>", "k" is "(anonymous namespace)::k").
		if squash(full) == want || unscoped(squash(full)) == want {
			byTemplate = append(byTemplate, k)
		}
		base, _ := demangle.ToString(k.Name, demangle.NoParams, demangle.NoTemplateParams)
		if base == kernel || unscoped(base) == kernel {
			byName = append(byName, k)
		}
	}
	pick := func(ks []*KernelInfo) (*KernelInfo, error) {
		if len(ks) == 1 {
			return ks[0], nil
		}
		var names []string
		for _, k := range ks {
			names = append(names, k.display())
		}
		return nil, s.errf("%skernel %q matches %d kernels: %s; name one by its symbol", prefix, kernel, len(ks), strings.Join(names, ", "))
	}
	if len(byTemplate) > 0 {
		return pick(byTemplate)
	}
	if len(byName) > 0 {
		return pick(byName)
	}
	var names []string
	for i := range kernels {
		names = append(names, kernels[i].display())
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, s.errf("%skernel %q not found: the code object has no kernels", prefix, kernel)
	}
	return nil, s.errf("%skernel %q not found; the code object has: %s", prefix, kernel, strings.Join(names, ", "))
}

// pointee maps a pointer's .type_name to the dtypes it can hold. Storage
// types (unsigned char, 16-bit integers) may hold the float types of their
// size, as kernels that copy or quantize raw bits declare them.
var pointee = map[string][]string{
	"float": {"f32"}, "double": {"f64"},
	"int": {"i32"}, "int32_t": {"i32"}, "unsigned int": {"u32"}, "unsigned": {"u32"}, "uint32_t": {"u32"},
	"long": {"i64"}, "long long": {"i64"}, "int64_t": {"i64"},
	"unsigned long": {"u64"}, "unsigned long long": {"u64"}, "uint64_t": {"u64"}, "size_t": {"u64"},
	"__half": {"f16"}, "half": {"f16"}, "_Float16": {"f16"},
	"__hip_bfloat16": {"bf16"}, "__nv_bfloat16": {"bf16"}, "hip_bfloat16": {"bf16"},
	"unsigned char": {"u8", "bool", "e4m3", "e5m2"}, "uint8_t": {"u8", "bool", "e4m3", "e5m2"},
	"signed char": {"i8"}, "int8_t": {"i8"}, "char": {"i8", "u8"}, "bool": {"bool"},
	"short": {"i16", "f16", "bf16"}, "int16_t": {"i16", "f16", "bf16"},
	"unsigned short": {"u16", "f16", "bf16"}, "uint16_t": {"u16", "f16", "bf16"},
	"__hip_fp8_e4m3": {"e4m3"}, "__nv_fp8_e4m3": {"e4m3"}, "__hip_fp8_e5m2": {"e5m2"}, "__nv_fp8_e5m2": {"e5m2"},
	"__hip_fp8_storage_t": {"e4m3", "e5m2", "u8"}, "__nv_fp8_storage_t": {"e4m3", "e5m2", "u8"},
	// AMD's FNUZ formats (bias one higher, no negative zero, NaN 0x80) are
	// not the OCP formats e4m3 and e5m2 stand for.
	"__hip_fp8_e4m3_fnuz": {}, "__hip_fp8_e5m2_fnuz": {},
}

// floatTypes and integerTypes are by-value type names: a scalar of the
// other kind (f32 for an int of the same size) is an error.
var (
	floatTypes = map[string]bool{"float": true, "double": true, "__half": true, "half": true, "_Float16": true,
		"__hip_bfloat16": true, "__nv_bfloat16": true, "hip_bfloat16": true}
	integerTypes = map[string]bool{"int": true, "unsigned int": true, "unsigned": true, "long": true, "long long": true,
		"unsigned long": true, "unsigned long long": true, "int32_t": true, "uint32_t": true, "int64_t": true,
		"uint64_t": true, "size_t": true, "short": true, "unsigned short": true, "int16_t": true, "uint16_t": true,
		"char": true, "signed char": true, "unsigned char": true, "int8_t": true, "uint8_t": true, "bool": true}
)

// baseType strips the pointer and the const, volatile and restrict
// qualifiers from a .type_name ("const float* __restrict__" is float).
func baseType(t string) string {
	t = strings.ReplaceAll(t, "*", " ")
	var words []string
	for _, w := range strings.Fields(t) {
		switch w {
		case "const", "volatile", "__restrict__", "__restrict", "restrict":
		default:
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}

// CheckArgs compares the spec's arguments with the kernel's metadata: their
// number, and for each whether it is a pointer or a value of the right size
// and kind, at the offset the kernel expects (a struct's size and alignment
// come from its layout). For a spec with steps, every step is checked
// against the kernel Resolve found for it. A kernel without metadata
// (cubin, PTX) is not checked.
func CheckArgs(s *Spec, k *KernelInfo) error {
	if len(s.steps) <= 1 {
		st := &step{kernel: s.Kernel}
		if len(s.steps) == 1 {
			st = s.steps[0]
		} else {
			for i := range s.Args {
				st.args = append(st.args, &s.Args[i])
			}
		}
		return checkStep(s, st, k)
	}
	if len(s.resolved) != len(s.steps) || s.resolved[0].Name != k.Name {
		return s.errf("the kernels of the steps are not resolved (call Resolve first)")
	}
	for i, st := range s.steps {
		if err := checkStep(s, st, s.resolved[i]); err != nil {
			return err
		}
	}
	return nil
}

func checkStep(s *Spec, st *step, k *KernelInfo) error {
	if k.Args == nil {
		return nil
	}
	prefix := ""
	if st.label != "" {
		prefix = st.label + ": "
	}
	var args []ArgInfo
	for _, a := range k.Args {
		if !a.hidden() {
			args = append(args, a)
		}
	}
	if len(args) != len(st.args) {
		var names []string
		for _, a := range st.args {
			names = append(names, a.Name)
		}
		return s.errf("%skernel %s takes %d arguments, the spec gives %d (%s)", prefix, k.display(), len(args), len(st.args), strings.Join(names, ", "))
	}
	off := 0
	for i, m := range args {
		a := st.args[i]
		d, _ := parseDType(a.DType)
		size, align := d.Size, d.Size
		switch {
		case a.IsBuffer():
			size, align = 8, 8
		case a.IsStruct():
			l := structLayout(a)
			size, align = l.size, l.align
		}
		off = roundUp(off, align)
		kernelSide := fmt.Sprintf("a %d-byte value", m.Size)
		if m.Kind == "global_buffer" {
			kernelSide = "a pointer"
		}
		if m.TypeName != "" {
			kernelSide += " (" + m.TypeName + ")"
		}
		where := fmt.Sprintf("%sargument %d (%s)", prefix, i, a.Name)
		if m.Name != "" && m.Name != a.Name {
			where = fmt.Sprintf("%sargument %d (%s; the kernel calls it %s)", prefix, i, a.Name, m.Name)
		}
		t := baseType(m.TypeName)
		scalar := !a.IsBuffer() && !a.IsStruct()
		switch {
		case a.IsBuffer() && m.Kind != "global_buffer":
			return s.errf("%s: the spec passes a buffer of %s, the kernel takes %s", where, d.Name, kernelSide)
		case !a.IsBuffer() && m.Kind == "global_buffer":
			what := "a " + d.Name + " value"
			if a.IsStruct() {
				what = "a struct"
			}
			return s.errf("%s: the spec passes %s, the kernel takes %s", where, what, kernelSide)
		case a.IsStruct() && m.Kind == "by_value" && m.Size != size:
			return s.errf("%s: the spec's struct is %d bytes (align %d), the kernel takes %s: check the fields' dtypes and order (C puts each field at a multiple of its size)",
				where, size, align, kernelSide)
		case scalar && m.Kind == "by_value" && m.Size != d.Size:
			return s.errf("%s: the spec passes %s (%d bytes), the kernel takes %s", where, d.Name, d.Size, kernelSide)
		case scalar && (floatTypes[t] && !d.Float || integerTypes[t] && d.Float):
			return s.errf("%s: the spec passes %s, the kernel takes %s", where, d.Name, kernelSide)
		case a.IsBuffer() && t != "":
			if ok, known := pointee[t]; known && !contains(ok, d.Name) {
				return s.errf("%s: the spec's buffer holds %s, the kernel's pointer is %s", where, d.Name, m.TypeName)
			}
		}
		if m.Kind == "by_value" || m.Kind == "global_buffer" {
			if m.Offset != off {
				return s.errf("%s: the spec puts it at offset %d (%d bytes, align %d), the kernel at offset %d: an alignment differs (a struct's align = N is its alignas)",
					where, off, size, align, m.Offset)
			}
			off = m.Offset + m.Size
		} else {
			off += size
		}
	}
	return nil
}

var ptxEntry = regexp.MustCompile(`(?m)^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z_$][\w$]*)`)

// ImageKernels lists the kernel symbols of a loadable image that carries no
// argument metadata: an NVIDIA cubin (inspect.CubinKernels) or PTX text
// (.entry). Names are demangled for display.
func ImageKernels(img []byte) ([]KernelInfo, error) {
	var names []string
	if bytes.HasPrefix(img, []byte(elf.ELFMAG)) {
		var err error
		if names, err = inspect.CubinKernels(img); err != nil {
			return nil, err
		}
	} else if bytes.Contains(img, []byte(".entry")) {
		for _, m := range ptxEntry.FindAllSubmatch(img, -1) {
			names = append(names, string(m[1]))
		}
	} else {
		return nil, fmt.Errorf("not a cubin or PTX image")
	}
	out := []KernelInfo{}
	for _, n := range names {
		k := KernelInfo{Name: n}
		if d, err := demangle.ToString(n); err == nil {
			k.Demangled = d
		}
		out = append(out, k)
	}
	return out, nil
}
