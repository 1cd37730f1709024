package spec

import (
	"bytes"
	"debug/elf"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
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

// Resolve finds the spec's kernel among kernels: by symbol, by its C++ name
// with template arguments ("scale<float, 4>", spaces ignored), or by a plain
// name when exactly one kernel has it. An unknown name lists the kernels the
// code object has.
func Resolve(s *Spec, kernels []KernelInfo) (*KernelInfo, error) {
	want := squash(s.Kernel)
	for i := range kernels {
		if kernels[i].Name == s.Kernel {
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
		if squash(full) == want {
			byTemplate = append(byTemplate, k)
		}
		base, _ := demangle.ToString(k.Name, demangle.NoParams, demangle.NoTemplateParams)
		if base == s.Kernel {
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
		return nil, s.errf("kernel %q matches %d kernels: %s; name one by its symbol", s.Kernel, len(ks), strings.Join(names, ", "))
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
		return nil, s.errf("kernel %q not found: the code object has no kernels", s.Kernel)
	}
	return nil, s.errf("kernel %q not found; the code object has: %s", s.Kernel, strings.Join(names, ", "))
}

// pointee maps a pointer's .type_name to the dtypes it can hold.
var pointee = map[string][]string{
	"float": {"f32"}, "double": {"f64"}, "int": {"i32"}, "unsigned int": {"u32"}, "uint32_t": {"u32"},
	"int32_t": {"i32"}, "long": {"i64"}, "long long": {"i64"}, "int64_t": {"i64"},
	"__half": {"f16"}, "half": {"f16"}, "_Float16": {"f16"}, "__hip_bfloat16": {"bf16"}, "__nv_bfloat16": {"bf16"},
	"unsigned char": {"u8"}, "uint8_t": {"u8"},
}

// CheckArgs compares the spec's arguments with the kernel's metadata: their
// number, and for each whether it is a pointer or a value of the right size.
// A kernel without metadata (cubin, PTX) is not checked.
func CheckArgs(s *Spec, k *KernelInfo) error {
	if k.Args == nil {
		return nil
	}
	var args []ArgInfo
	for _, a := range k.Args {
		if !a.hidden() {
			args = append(args, a)
		}
	}
	if len(args) != len(s.Args) {
		var names []string
		for _, a := range s.Args {
			names = append(names, a.Name)
		}
		return s.errf("kernel %s takes %d arguments, the spec gives %d (%s)", k.display(), len(args), len(s.Args), strings.Join(names, ", "))
	}
	for i, m := range args {
		a := &s.Args[i]
		d, _ := parseDType(a.DType)
		kernelSide := fmt.Sprintf("a %d-byte value", m.Size)
		if m.Kind == "global_buffer" {
			kernelSide = "a pointer"
		}
		if m.TypeName != "" {
			kernelSide += " (" + m.TypeName + ")"
		}
		where := fmt.Sprintf("argument %d (%s)", i, a.Name)
		if m.Name != "" && m.Name != a.Name {
			where = fmt.Sprintf("argument %d (%s; the kernel calls it %s)", i, a.Name, m.Name)
		}
		switch {
		case a.IsBuffer() && m.Kind != "global_buffer":
			return s.errf("%s: the spec passes a buffer of %s, the kernel takes %s", where, d.Name, kernelSide)
		case !a.IsBuffer() && m.Kind == "global_buffer":
			return s.errf("%s: the spec passes a %s value, the kernel takes %s", where, d.Name, kernelSide)
		case !a.IsBuffer() && m.Kind == "by_value" && m.Size != d.Size:
			return s.errf("%s: the spec passes %s (%d bytes), the kernel takes %s", where, d.Name, d.Size, kernelSide)
		case a.IsBuffer() && m.TypeName != "":
			t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m.TypeName), "*"))
			t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSuffix(t, " const"), "const "))
			if ok, known := pointee[t]; known && !contains(ok, d.Name) {
				return s.errf("%s: the spec's buffer holds %s, the kernel's pointer is %s", where, d.Name, m.TypeName)
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var ptxEntry = regexp.MustCompile(`(?m)^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z_$][\w$]*)`)

// ImageKernels lists the kernel symbols of a loadable image that carries no
// argument metadata: an NVIDIA cubin (ELF functions in .text.<name>) or PTX
// text (.entry). Names are demangled for display.
func ImageKernels(img []byte) ([]KernelInfo, error) {
	var names []string
	if bytes.HasPrefix(img, []byte(elf.ELFMAG)) {
		f, err := elf.NewFile(bytes.NewReader(img))
		if err != nil {
			return nil, err
		}
		syms, err := f.Symbols()
		if err != nil {
			return nil, err
		}
		// NVIDIA marks kernel entries with STO_CUDA_ENTRY (0x10) in
		// st_other; device functions also live in .text.<name>. Without
		// any marked symbol (another producer), every candidate counts.
		var entries []string
		for _, sy := range syms {
			if elf.ST_TYPE(sy.Info) != elf.STT_FUNC || int(sy.Section) >= len(f.Sections) || sy.Section == elf.SHN_UNDEF {
				continue
			}
			sec := f.Sections[sy.Section].Name
			// Template instances are weak, extern "C" kernels global.
			bind := elf.ST_BIND(sy.Info)
			if sec == ".text."+sy.Name && (bind == elf.STB_GLOBAL || bind == elf.STB_WEAK) {
				names = append(names, sy.Name)
				if sy.Other&0x10 != 0 {
					entries = append(entries, sy.Name)
				}
			}
		}
		if len(entries) > 0 {
			names = entries
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
