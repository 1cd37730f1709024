package spec

import (
	"fmt"
	"math"
	"reflect"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker/nature"
)

// Integer rules of spec expressions, added to expr-lang by patching the
// tree it parsed (expr.Patch) rather than by rewriting text:
//
//   - a // b is floor division of whole numbers (an integer). expr reads //
//     as the start of a comment, so markFloorDivs turns each // (outside
//     string literals) into "/ " before parsing, keeping every column, and
//     the patcher turns the division at those columns into __floordiv.
//   - a % b on whole floats (an integer element, floor(x)) is the remainder
//     of C (its sign is the dividend's), as expr's own % on ints.
//   - an index that is a whole float (x[idx[i]], x[floor(i / 2)]) indexes;
//     one that is not, or is negative, is an error naming the buffer (expr
//     would truncate 1.5 and count -1 from the end).
//   - a number used as a condition (mask[i] ? a : b) is true when non-zero.
//   - reading a buffer that is null in the case is an error naming it.

// markFloorDivs returns src with each // outside string literals replaced
// by "/ ", and the rune offsets of those operators.
func markFloorDivs(src string) (string, map[int]bool) {
	rs := []rune(src)
	var at map[int]bool
	var quote rune
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == '\\' && quote != '`' {
				i++
			} else if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'' || r == '`':
			quote = r
		case r == '/' && i+1 < len(rs) && rs[i+1] == '/':
			if at == nil {
				at = map[int]bool{}
			}
			at[i] = true
			rs[i+1] = ' '
			i++
		}
	}
	if at == nil {
		return src, nil
	}
	return string(rs), at
}

// intPatcher applies the rules above to one expression.
type intPatcher struct {
	floorDivs map[int]bool   // rune offsets of // operators
	env       map[string]any // a nil slice in it is a null buffer
	// natural are names that are never negative (sizes, a reference's
	// indices): x[i] needs no check (expr's own bound check stays), which
	// keeps the hot path of a reference a plain index.
	natural map[string]bool
}

var (
	intType   = reflect.TypeOf(0)
	boolType  = reflect.TypeOf(true)
	floatType = reflect.TypeOf(0.0)
)

func (p *intPatcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.BinaryNode:
		switch {
		case n.Operator == "/" && p.floorDivs[n.Location().From]:
			p.call(node, "__floordiv", intType, n.Left, n.Right)
		case n.Operator == "%" && !(isInt(n.Left.Type()) && isInt(n.Right.Type())):
			p.call(node, "__mod", intType, n.Left, n.Right)
		}
	case *ast.MemberNode:
		if _, field := n.Property.(*ast.StringNode); field || !indexable(n.Node.Type()) {
			return
		}
		buf := rootName(n.Node)
		if p.isNull(buf) {
			p.call(&n.Property, "__null", intType, &ast.StringNode{Value: buf})
			return
		}
		if p.isNatural(n.Property) {
			return
		}
		p.call(&n.Property, "__index", intType, n.Property, &ast.StringNode{Value: bufLabel(buf)})
	case *ast.SliceNode:
		buf := rootName(n.Node)
		if p.isNull(buf) {
			p.call(&n.Node, "__null", intType, &ast.StringNode{Value: buf})
			return
		}
		for _, e := range []*ast.Node{&n.From, &n.To} {
			if *e != nil && !isInt((*e).Type()) {
				p.call(e, "__whole", intType, *e, &ast.StringNode{Value: "slice bound"})
			}
		}
	case *ast.ConditionalNode:
		if t := n.Cond.Type(); isInt(t) || t == floatType {
			cond := &ast.BinaryNode{Operator: "!=", Left: n.Cond, Right: &ast.IntegerNode{Value: 0}}
			ast.Patch(&n.Cond, cond)
			cond.SetType(boolType)
		}
	}
}

// retype forgets the types the checker gave each node while patching:
// expr's checker does not look into a call that already has a type, so
// without this an unknown name in a function's arguments (exp(z)) would pass
// the final check. It is a "repeatable" patcher (Reset, ShouldRepeat) so
// that expr runs it last, after the check that precedes the final one.
type retype struct{}

func (retype) Visit(node *ast.Node) { (*node).SetNature(nature.Nature{}) }
func (retype) Reset()               {}
func (retype) ShouldRepeat() bool   { return false }

// call replaces *node with a call of fn on args, of type t.
func (p *intPatcher) call(node *ast.Node, fn string, t reflect.Type, args ...ast.Node) {
	c := &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: args}
	ast.Patch(node, c)
	c.SetType(t)
}

// isNatural: an index known not to be negative (a non-negative literal,
// a natural name).
func (p *intPatcher) isNatural(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.IntegerNode:
		return x.Value >= 0
	case *ast.IdentifierNode:
		return p.natural[x.Value]
	}
	return false
}

func (p *intPatcher) isNull(name string) bool {
	if name == "" {
		return false
	}
	v := reflect.ValueOf(p.env[name])
	return v.Kind() == reflect.Slice && v.IsNil()
}

func isInt(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// indexable: a list, or a value of unknown type (the result of map(), a
// let variable) that may be one.
func indexable(t reflect.Type) bool {
	if t == nil {
		return true
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Interface:
		return true
	}
	return false
}

// rootName is the identifier an index expression starts from: x in
// x[r][c]; "" for anything else (map(...)[0]).
func rootName(n ast.Node) string {
	for {
		switch x := n.(type) {
		case *ast.MemberNode:
			n = x.Node
		case *ast.IdentifierNode:
			return x.Value
		default:
			return ""
		}
	}
}

func bufLabel(name string) string {
	if name == "" {
		return "a list"
	}
	return name
}

// whole converts v to an int when it is a whole number.
func whole(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.Abs(x) > 1<<62 {
			return 0, false
		}
		return int(x), true
	case int64:
		return int(x), true
	case int32:
		return int(x), true
	case uint8:
		return int(x), true
	}
	return 0, false
}

// intOps are the functions the patcher calls.
var intOps = []expr.Option{
	expr.Function("__index", func(p ...any) (any, error) {
		i, ok := whole(p[0])
		switch {
		case !ok:
			return nil, fmt.Errorf("index %v of %s is not a whole number (use floor, ceil or //)", p[0], p[1])
		case i < 0:
			return nil, fmt.Errorf("reads %s out of its bounds: index %d is negative", p[1], i)
		}
		return i, nil
	}, new(func(any, string) int)),
	expr.Function("__whole", func(p ...any) (any, error) {
		i, ok := whole(p[0])
		if !ok {
			return nil, fmt.Errorf("%s %v is not a whole number (use floor, ceil or //)", p[1], p[0])
		}
		return i, nil
	}, new(func(any, string) int)),
	expr.Function("__null", func(p ...any) (any, error) {
		return nil, fmt.Errorf("reads %s, which is null in this case (test it with %s == nil)", p[0], p[0])
	}, new(func(string) int)),
	expr.Function("__floordiv", func(p ...any) (any, error) {
		a, b, err := wholePair(p, "//", "floor(a / b)")
		if err != nil {
			return nil, err
		}
		q := a / b
		if (a%b != 0) && ((a < 0) != (b < 0)) {
			q--
		}
		return q, nil
	}, new(func(any, any) int)),
	expr.Function("__mod", func(p ...any) (any, error) {
		a, b, err := wholePair(p, "%", "fmod(a, b)")
		if err != nil {
			return nil, err
		}
		return a % b, nil
	}, new(func(any, any) int)),
}

func wholePair(p []any, op, float string) (int, int, error) {
	a, okA := whole(p[0])
	b, okB := whole(p[1])
	switch {
	case !okA || !okB:
		return 0, 0, fmt.Errorf("%v %s %v: %s is for whole numbers (use %s for others)", p[0], op, p[1], op, float)
	case b == 0:
		return 0, 0, fmt.Errorf("%v %s 0: division by zero", p[0], op)
	}
	return a, b, nil
}
