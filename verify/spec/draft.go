package spec

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rocmk/rocmk/hipify"
)

// Signature is a __global__ function found in a CUDA or HIP source.
type Signature struct {
	Name     string
	Scope    string // enclosing named namespaces: "vllm::"
	Line     int
	ExternC  bool
	Template []TemplateParam // nil when not a template
	Params   []Param
}

// TemplateParam is one template parameter: a type (typename T) or a value
// (bool IS_NEOX, int N).
type TemplateParam struct {
	Name string
	Type string // "typename" for a type parameter
}

// Param is one kernel parameter as written.
type Param struct {
	Name    string // "" when unnamed
	Type    string // as written, qualifiers included: "const float* __restrict__"
	Base    string // without pointer and qualifiers: "float"
	Pointer bool
	Const   bool // a pointer whose pointee is const (an input)
}

type token struct {
	kind hipify.Token
	lit  string
	line int
}

// tokens scans src with hipify's scanner, dropping comments and
// preprocessor directives.
func tokens(name string, src []byte) []token {
	var s hipify.Scanner
	s.Init(name, src, func(hipify.Position, string) {})
	var out []token
	inPP := false
	for {
		pos, tok, lit := s.Scan()
		switch {
		case tok == hipify.EOF:
			return out
		case tok == hipify.HASH:
			inPP = true
		case tok == hipify.PPEND:
			inPP = false
		case tok == hipify.COMMENT || inPP:
		default:
			out = append(out, token{tok, lit, pos.Line})
		}
	}
}

// structDefs are the plain structs a source defines (struct NAME { T a; U b; }).
type structDef struct {
	fields []Param
	align  int
}

// Kernels lists the __global__ functions of a source, in order.
func Kernels(name string, src []byte) []Signature {
	sigs, _ := scanSource(name, src)
	return sigs
}

func scanSource(name string, src []byte) ([]Signature, map[string]structDef) {
	ts := tokens(name, src)
	var sigs []Signature
	structs := map[string]structDef{}
	var tmpl []TemplateParam
	externBlocks := []int{} // brace depths of extern "C" { blocks
	type namespace struct {
		name  string
		depth int
	}
	var namespaces []namespace
	depth := 0
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		switch {
		case t.lit == "template" && i+1 < len(ts) && ts[i+1].lit == "<":
			var end int
			tmpl, end = templateParams(ts, i+1)
			i = end
			continue
		case t.lit == "extern" && i+2 < len(ts) && ts[i+1].lit == `"C"` && ts[i+2].lit == "{":
			depth++
			externBlocks = append(externBlocks, depth)
			i += 2
			continue
		case t.lit == "namespace" && i+1 < len(ts) && (ts[i+1].lit == "{" || i+2 < len(ts) && ts[i+2].lit == "{"):
			name := ""
			if ts[i+1].lit != "{" {
				name = ts[i+1].lit
				i++
			}
			i++
			depth++
			namespaces = append(namespaces, namespace{name, depth})
			continue
		case t.lit == "struct" && i+2 < len(ts) && ts[i+1].kind == hipify.IDENT:
			if def, ok := structFields(ts, i+1); ok {
				structs[ts[i+1].lit] = def
			}
		case t.lit == "{":
			depth++
		case t.lit == "}":
			if n := len(externBlocks); n > 0 && externBlocks[n-1] == depth {
				externBlocks = externBlocks[:n-1]
			}
			if n := len(namespaces); n > 0 && namespaces[n-1].depth == depth {
				namespaces = namespaces[:n-1]
			}
			depth--
			tmpl = nil
		case t.lit == ";":
			tmpl = nil
		case t.lit == "__global__":
			sig, end, ok := signature(ts, i)
			if ok {
				sig.Template = tmpl
				for _, ns := range namespaces {
					if ns.name != "" { // an anonymous namespace is left out, as Resolve allows
						sig.Scope += ns.name + "::"
					}
				}
				sig.ExternC = len(externBlocks) > 0 || i >= 2 && ts[i-2].lit == "extern" && ts[i-1].lit == `"C"`
				sigs = append(sigs, sig)
			}
			tmpl = nil
			i = end
		}
	}
	return sigs, structs
}

// templateParams reads <...> starting at ts[open].
func templateParams(ts []token, open int) ([]TemplateParam, int) {
	var params []TemplateParam
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			p := TemplateParam{Name: cur[len(cur)-1], Type: strings.Join(cur[:len(cur)-1], " ")}
			if p.Type == "class" {
				p.Type = "typename"
			}
			params = append(params, p)
		}
		cur = nil
	}
	depth := 0
	for i := open; i < len(ts); i++ {
		switch ts[i].lit {
		case "<":
			depth++
			if depth == 1 {
				continue
			}
		case ">", ">>", ">>>":
			depth -= len(ts[i].lit)
			if depth <= 0 {
				flush()
				return params, i
			}
		case ",":
			if depth == 1 {
				flush()
				continue
			}
		case "=": // a default: keep the name before it
			if depth == 1 {
				for i+1 < len(ts) && ts[i+1].lit != "," && ts[i+1].lit != ">" {
					i++
				}
				continue
			}
		}
		if depth == 1 && ts[i].kind == hipify.IDENT {
			cur = append(cur, ts[i].lit)
		}
	}
	return params, len(ts) - 1
}

// macros that take arguments between __global__ and the kernel's name.
var attributeMacros = map[string]bool{"__launch_bounds__": true, "__attribute__": true, "__declspec": true,
	"__cluster_dims__": true, "__maxnreg__": true, "alignas": true}

// signature reads a kernel declaration from the __global__ at ts[at].
func signature(ts []token, at int) (Signature, int, bool) {
	for i := at + 1; i < len(ts); i++ {
		t := ts[i]
		if t.lit == ";" || t.lit == "{" || t.lit == "}" {
			return Signature{}, i, false
		}
		if t.lit != "(" {
			continue
		}
		prev := ts[i-1]
		if attributeMacros[prev.lit] {
			i = matching(ts, i)
			continue
		}
		if prev.kind != hipify.IDENT {
			return Signature{}, i, false
		}
		sig := Signature{Name: prev.lit, Line: prev.line}
		end := matching(ts, i)
		var cur []token
		depth := 0
		for j := i + 1; j < end; j++ {
			switch ts[j].lit {
			case "(", "<", "[":
				depth++
			case ")", ">", "]":
				depth--
			case ">>":
				depth -= 2
			case ",":
				if depth == 0 {
					sig.Params = append(sig.Params, param(cur))
					cur = nil
					continue
				}
			}
			cur = append(cur, ts[j])
		}
		if len(cur) > 0 && !(len(cur) == 1 && cur[0].lit == "void") {
			sig.Params = append(sig.Params, param(cur))
		}
		return sig, end, true
	}
	return Signature{}, len(ts), false
}

// matching is the index of the ) that closes the ( at ts[open].
func matching(ts []token, open int) int {
	depth := 0
	for i := open; i < len(ts); i++ {
		switch ts[i].lit {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(ts) - 1
}

var qualifiers = map[string]bool{"const": true, "volatile": true, "__restrict__": true, "__restrict": true,
	"restrict": true, "struct": true, "__grid_constant__": true}

// param reads one parameter: a type, a name, maybe a default.
func param(ts []token) Param {
	for i, t := range ts {
		if t.lit == "=" {
			ts = ts[:i]
			break
		}
	}
	var p Param
	nameAt := -1
	if n := len(ts); n > 1 && ts[n-1].kind == hipify.IDENT && !qualifiers[ts[n-1].lit] {
		nameAt = n - 1
		p.Name = ts[n-1].lit
	}
	var typ, base []string
	seenStar := false
	for i, t := range ts {
		if i == nameAt {
			break
		}
		typ = append(typ, t.lit)
		switch {
		case t.lit == "*" || t.lit == "[":
			p.Pointer = true
			seenStar = true
		case t.lit == "const" && !seenStar:
			p.Const = true
		case qualifiers[t.lit] || t.lit == "]" || t.lit == "&":
		default:
			if !seenStar {
				base = append(base, t.lit)
			}
		}
	}
	p.Const = p.Const && p.Pointer
	p.Type = strings.Join(typ, " ")
	p.Type = strings.NewReplacer(" *", "*", " ::", "::", ":: ", "::", " <", "<", "< ", "<", " >", ">", " ,", ",").Replace(p.Type)
	p.Base = strings.NewReplacer(" :: ", "::", " < ", "<", " > ", ">").Replace(strings.Join(base, " "))
	return p
}

// structFields reads struct NAME { fields }; at ts[at] (the name). Only
// structs of scalar members are drafted.
func structFields(ts []token, at int) (structDef, bool) {
	var def structDef
	if at+1 >= len(ts) || ts[at+1].lit != "{" {
		return def, false
	}
	var cur []token
	for i := at + 2; i < len(ts); i++ {
		switch ts[i].lit {
		case "}":
			return def, true
		case "{", "(":
			return def, false // nested types, methods: not a plain struct
		case ";":
			p := param(cur)
			if p.Name == "" || p.Pointer || checkIdent(p.Name) != nil {
				return def, false // a name a spec cannot spell: no struct draft
			}
			def.fields = append(def.fields, p)
			cur = nil
			continue
		}
		cur = append(cur, ts[i])
	}
	return def, false
}

// cTypes maps a C/CUDA/HIP scalar type to a dtype.
var cTypes = map[string]string{
	"float": "f32", "double": "f64", "half": "f16", "__half": "f16", "_Float16": "f16",
	"__nv_bfloat16": "bf16", "__hip_bfloat16": "bf16", "nv_bfloat16": "bf16", "hip_bfloat16": "bf16",
	"int": "i32", "signed": "i32", "signed int": "i32", "int32_t": "i32",
	"unsigned": "u32", "unsigned int": "u32", "uint32_t": "u32", "uint": "u32",
	"long": "i64", "long int": "i64", "long long": "i64", "long long int": "i64", "int64_t": "i64", "ptrdiff_t": "i64", "ssize_t": "i64",
	"unsigned long": "u64", "unsigned long long": "u64", "uint64_t": "u64", "size_t": "u64",
	"short": "i16", "int16_t": "i16", "unsigned short": "u16", "uint16_t": "u16",
	"char": "i8", "signed char": "i8", "int8_t": "i8", "unsigned char": "u8", "uint8_t": "u8",
	"bool": "bool", "__nv_fp8_e4m3": "e4m3", "__hip_fp8_e4m3": "e4m3", "__nv_fp8_e5m2": "e5m2", "__hip_fp8_e5m2": "e5m2",
	"__nv_fp8_storage_t": "u8", "__hip_fp8_storage_t": "u8",
}

// sizeName matches scalar names that are sizes: n, numel, num_heads,
// head_size, rows, ncols, seq_len, batch...
var sizeName = regexp.MustCompile(`(?i)^(n|m|k|numel|size|len|length|count|rows|cols|nrows|ncols|batch|heads|tokens|dim|width|height|depth|` +
	`n_[a-z0-9_]+|num_[a-z0-9_]+|[a-z0-9_]+_(size|len|length|count|dim|num|rows|cols|numel|tokens|heads))$`)

// Draft writes a spec for each kernel of a source (those named, or all):
// names and dtypes from the signature, const pointers as inputs and other
// pointers as outputs, integer scalars named like sizes bound to sizes, and
// every guess (launch geometry, counts, values, the reference) marked TODO.
// The draft parses. file is the source's name as the spec should give it.
func Draft(file string, src []byte, names []string) ([]byte, error) {
	sigs, structs := scanSource(file, src)
	if len(sigs) == 0 {
		return nil, fmt.Errorf("%s: no __global__ function", file)
	}
	var pick []Signature
	for _, s := range sigs {
		if len(names) == 0 || contains(names, s.Name) {
			pick = append(pick, s)
		}
	}
	for _, n := range names {
		found := false
		for _, s := range sigs {
			found = found || s.Name == n
		}
		if !found {
			var have []string
			for _, s := range sigs {
				have = append(have, s.Name)
			}
			return nil, fmt.Errorf("%s: no kernel %q (it has: %s)", file, n, strings.Join(have, ", "))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Drafted by rocmk spec init from %s: fill in every TODO, then run\n", commentSafe(file))
	fmt.Fprintf(&b, "#   rocmk port %s --spec THIS_FILE\n", commentSafe(file))
	b.WriteString("# Keys and expressions: docs/port.md.\n")
	used := map[string]int{}
	for _, s := range pick {
		b.WriteString("\n")
		draftOne(&b, file, s, structs, used)
	}
	return []byte(b.String()), nil
}

func draftOne(b *strings.Builder, file string, s Signature, structs map[string]structDef, used map[string]int) {
	name := s.Name
	if used[name]++; used[name] > 1 {
		name = fmt.Sprintf("%s_%d", s.Name, used[s.Name])
	}
	kernel, typeParams := draftKernel(s)
	// Names: the parameters' (unique, valid), then the sizes: integer
	// scalars named like sizes, or a new n.
	names := paramNames(s.Params)
	var sizes []string
	for i, p := range s.Params {
		d := cTypes[p.Base]
		if !p.Pointer && d != "" && d[0] != 'f' && d != "bool" && d != "e4m3" && d != "e5m2" && sizeName.MatchString(names[i]) {
			sizes = append(sizes, names[i])
		}
	}
	size := "n"
	for contains(names, size) {
		size += "_"
	}
	count := size
	if len(sizes) > 0 {
		count = strings.Join(sizes, " * ")
	}
	fmt.Fprintf(b, "[[verify]]\nname = %q\nsource = %q\n", name, file)
	fmt.Fprintf(b, "kernel = %q", kernel)
	if s.Template != nil {
		var ps []string
		for _, p := range s.Template {
			ps = append(ps, p.Type+" "+p.Name)
		}
		fmt.Fprintf(b, "  # TODO: the instance to verify (template <%s>)", commentSafe(strings.Join(ps, ", ")))
	}
	b.WriteString("\n")
	switch len(sizes) {
	case 0:
		fmt.Fprintf(b, "sizes = { %s = [1, 1024] }  # TODO: the problem sizes to sweep\n", size)
	case 1:
		fmt.Fprintf(b, "sizes = { %s = [1, 1024] }  # TODO: the problem sizes to sweep\n", sizes[0])
	default:
		var parts []string
		for _, n := range sizes {
			parts = append(parts, n+" = [8]")
		}
		fmt.Fprintf(b, "sizes = { %s }  # TODO: the problem sizes to sweep\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(b, "grid = \"cdiv(%s, 256)\"  # TODO: blocks per launch (an expression of the sizes)\n", count)
	b.WriteString("block = 256  # TODO: threads per block\n")
	b.WriteString("args = [\n")
	outputs, sawBuffer := draftArgs(b, s, names, sizes, count, typeParams, structs)
	if len(outputs) == 0 {
		n := "out"
		for contains(names, n) {
			n += "_"
		}
		writeArg(b, fmt.Sprintf("  { name = %q, dtype = \"f32\", count = %q, output = true },", n, count),
			"TODO: no non-const pointer: which buffer does the kernel write? (not a kernel argument as drafted)")
		outputs = append(outputs, n)
	}
	b.WriteString("]\n")
	if !sawBuffer {
		b.WriteString("# TODO: the kernel takes no pointer: the spec needs the buffer it writes\n")
	}
	b.WriteString("reference = [  # TODO: what each output must hold (these say: unchanged)\n")
	ix := "i"
	for contains(names, ix) || ix == size {
		ix += "_"
	}
	for _, o := range outputs {
		fmt.Fprintf(b, "  \"%s[%s] = %s[%s]\",\n", o, ix, o, ix)
	}
	b.WriteString("]\n")
}

// draftKernel is the kernel's name as a spec gives it (scoped, with a
// template instance of placeholders) and its type parameters.
func draftKernel(s Signature) (string, map[string]bool) {
	kernel := s.Name
	if !s.ExternC {
		kernel = s.Scope + s.Name
	}
	typeParams := map[string]bool{}
	if s.Template != nil {
		var args []string
		for _, p := range s.Template {
			switch p.Type {
			case "typename":
				typeParams[p.Name] = true
				args = append(args, "float")
			case "bool":
				args = append(args, "false")
			default:
				args = append(args, p.Name)
			}
		}
		kernel += "<" + strings.Join(args, ", ") + ">"
	}
	return kernel, typeParams
}

// draftArgs writes an args line for each parameter; it returns the
// outputs (non-const pointers) and whether any parameter is a pointer.
func draftArgs(b *strings.Builder, s Signature, names, sizes []string, count string, typeParams map[string]bool, structs map[string]structDef) (outputs []string, sawBuffer bool) {
	for i, p := range s.Params {
		n := names[i]
		d, known := cTypes[p.Base]
		todo := ""
		if typeParams[p.Base] {
			d, known, todo = "f32", true, fmt.Sprintf("TODO: %s is a template parameter", p.Base)
		}
		switch {
		case p.Pointer:
			sawBuffer = true
			if !known {
				d = "u8"
				todo = fmt.Sprintf("TODO: the dtype of %s", p.Type)
			}
			out := !p.Const
			line := fmt.Sprintf("  { name = %q, dtype = %q, count = %q", n, d, count)
			if out {
				line += ", output = true"
				outputs = append(outputs, n)
			} else {
				line += `, init = "random"`
			}
			line += " },"
			if todo == "" {
				todo = "TODO: its element count"
			}
			writeArg(b, line, todo)
		case !known && structs[p.Base].fields != nil:
			writeArg(b, fmt.Sprintf("  { name = %q, struct = [", n), fmt.Sprintf("struct %s: TODO: the fields' values", p.Base))
			for _, f := range structs[p.Base].fields {
				fd := cTypes[f.Base]
				if fd == "" {
					fd = "i32"
				}
				fmt.Fprintf(b, "      { name = %q, dtype = %q, value = %s },\n", f.Name, fd, placeholder(fd))
			}
			b.WriteString("  ] },\n")
		case !known:
			writeArg(b, fmt.Sprintf("  { name = %q, struct = [{ name = \"TODO\", dtype = \"i32\", value = 0 }] },", n),
				fmt.Sprintf("TODO: %s: list its fields in order", p.Type))
		case contains(sizes, n):
			writeArg(b, fmt.Sprintf("  { name = %q, dtype = %q },", n, d), "the size "+n)
		default:
			if todo == "" {
				todo = "TODO: its value (a number or an expression of the sizes)"
			}
			writeArg(b, fmt.Sprintf("  { name = %q, dtype = %q, value = %s },", n, d, placeholder(d)), todo)
		}
	}
	return outputs, sawBuffer
}

func writeArg(b *strings.Builder, line, comment string) {
	b.WriteString(line)
	if comment != "" {
		b.WriteString("  # " + commentSafe(comment))
	}
	b.WriteString("\n")
}

// paramNames are the parameters' names, made valid (argN for an unnamed
// one or a reserved word) and unique.
func paramNames(ps []Param) []string {
	var out []string
	for i, p := range ps {
		n := p.Name
		if n == "" || checkIdent(n) != nil {
			n = fmt.Sprintf("arg%d", i)
		}
		for contains(out, n) {
			n += "_"
		}
		out = append(out, n)
	}
	return out
}

func placeholder(d string) string {
	switch d {
	case "f32", "f64", "f16", "bf16", "e4m3", "e5m2":
		return "1.0"
	}
	return "1"
}

// commentSafe is s for a TOML comment, which may hold no control
// characters and only UTF-8: source text (a type, a file name) can.
func commentSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0x7f || r == utf8.RuneError {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}
