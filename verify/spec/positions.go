package spec

import (
	"bytes"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// positions maps the dotted path of every key and array element of a spec
// file ("verify.0.steps.1.args.2.dtype") to where it is, so that a message
// about a key can say line and column (go-toml's decoder keeps no
// positions; its unstable parser does).
type positions map[string]place

// place is where a key (or an array element) and its value start.
type place struct {
	line, col int
	// value: where the value starts; plain is set when it is a one-line
	// string whose text is the value as written (no escapes), so a column
	// inside it maps to a column of the file.
	valueLine, valueCol int
	plain               bool
}

// indexPositions walks data with go-toml's parser. A document it cannot
// parse yields what was read before the error (the decoder reports the
// error itself).
func indexPositions(data []byte) positions {
	pos := positions{}
	p := &parser{lines: lineStarts(data)}
	p.Reset(data)
	prefix := ""
	arrays := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			prefix = keyPath(e.Key())
		case unstable.ArrayTable:
			name := keyPath(e.Key())
			prefix = name + "." + strconv.Itoa(arrays[name])
			arrays[name]++
		case unstable.KeyValue:
			pos.keyValue(p, prefix, e)
		}
	}
	return pos
}

// parser is go-toml's parser with the offsets where lines start: its Shape
// counts the lines from the top of the file for every node, which made a
// spec with a list of 10^5 sizes take seconds to parse (quadratic).
type parser struct {
	unstable.Parser
	lines []int
}

func lineStarts(data []byte) []int {
	lines := []int{0}
	for i, c := range data {
		if c == '\n' {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// place is the line and column (1-based; the column in bytes, as go-toml
// counts it) of offset.
func (p *parser) place(offset int) place {
	i := sort.SearchInts(p.lines, offset+1) - 1 // the last line starting at or before offset
	return place{line: i + 1, col: offset - p.lines[i] + 1}
}

func keyPath(it unstable.Iterator) string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return strings.Join(parts, ".")
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func (pos positions) keyValue(p *parser, prefix string, kv *unstable.Node) {
	it := kv.Key()
	first := true
	var at place
	var parts []string
	for it.Next() {
		k := it.Node()
		if first {
			at = pos.start(p, k)
			first = false
		}
		parts = append(parts, string(k.Data))
	}
	path := join(prefix, strings.Join(parts, "."))
	v := kv.Value()
	vp := pos.start(p, v)
	at.valueLine, at.valueCol, at.plain = vp.line, vp.col, vp.plain
	pos[path] = at
	pos.value(p, path, v)
}

// value indexes the elements of arrays and the keys of inline tables.
func (pos positions) value(p *parser, path string, v *unstable.Node) {
	switch v.Kind {
	case unstable.Array:
		i := 0
		for it := v.Children(); it.Next(); {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			at := pos.start(p, c)
			at.valueLine, at.valueCol = at.line, at.col
			elem := join(path, strconv.Itoa(i))
			pos[elem] = at
			pos.value(p, elem, c)
			i++
		}
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				pos.keyValue(p, path, c)
			}
		}
	}
}

// start is where node n begins: its raw bytes, or for an array (which has
// none) its first element's.
func (pos positions) start(p *parser, n *unstable.Node) place {
	for n != nil && n.Raw.Length == 0 {
		n = n.Child()
	}
	if n == nil {
		return place{}
	}
	at := p.place(int(n.Raw.Offset))
	if n.Kind == unstable.String {
		raw := p.Raw(n.Raw)
		at.plain = len(raw) >= 2 && bytes.Equal(raw[1:len(raw)-1], n.Data) && !bytes.ContainsAny(raw, "\n")
	}
	return at
}
