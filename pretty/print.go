package pretty

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// syntaxOf is the language values of t are written in.
func syntaxOf(t types.Type, o *Options) types.Lang {
	if o != nil && o.Syntax != types.LangUnknown {
		return o.Syntax
	}
	for i := 0; i < types.MaxDepth && t != nil; i++ {
		switch v := t.(type) {
		case *types.Struct:
			if v.Lang != types.LangUnknown {
				return v.Lang
			}
			return types.LangC
		case *types.Typedef:
			if v.Lang != types.LangUnknown {
				return v.Lang
			}
			t = v.Target
		case *types.Enum:
			if v.Lang != types.LangUnknown {
				return v.Lang
			}
			return types.LangC
		case *types.Qualifier:
			t = v.Target
		default:
			return types.LangC
		}
	}
	return types.LangC
}

// spelling is how a syntax writes records and lists.
type spelling struct {
	open, close         string // a record's braces
	listOpen, listClose string
	field               func(name string) string
}

func spellingOf(l types.Lang) spelling {
	switch l {
	case types.LangGo:
		return spelling{"{", "}", "{", "}", func(n string) string { return n + ": " }}
	case types.LangRust:
		return spelling{"{", "}", "[", "]", func(n string) string { return n + ": " }}
	case types.LangZig:
		return spelling{".{", "}", ".{", "}", func(n string) string { return "." + n + " = " }}
	}
	return spelling{"{", "}", "{", "}", func(n string) string { return "." + n + " = " }}
}

// Write prints n as the syntax of t (or o.Syntax) writes a value, pahole's
// --prettify layout for C: one member per line, nested records indented,
// lists of scalars on one line; the record ends with "}," and a newline.
func Write(w io.Writer, t types.Type, n *Node, o *Options) error {
	var b bytes.Buffer
	p := printer{sp: spellingOf(syntaxOf(t, o)), b: &b}
	p.node(n, 0, variantPrefix(n, syntaxOf(t, o)))
	b.WriteString(",\n")
	_, err := w.Write(b.Bytes())
	return err
}

func variantPrefix(n *Node, l types.Lang) string {
	if n.Variant == "" {
		return ""
	}
	if l == types.LangZig {
		return "." + n.Variant + " = "
	}
	if len(n.Fields) == 0 || tuple(n) {
		return n.Variant
	}
	return n.Variant + " "
}

type printer struct {
	sp spelling
	b  *bytes.Buffer
}

func (p *printer) node(n *Node, depth int, prefix string) {
	p.b.WriteString(prefix)
	switch n.Kind {
	case Scalar:
		p.b.WriteString(n.Text)
	case List:
		if flat(n) {
			p.b.WriteString(p.sp.listOpen + " ")
			for i, e := range n.Elems {
				if i > 0 {
					p.b.WriteString(", ")
				}
				p.b.WriteString(e.Text)
			}
			p.b.WriteString(" " + p.sp.listClose)
			return
		}
		p.b.WriteString(p.sp.listOpen + "\n")
		for _, e := range n.Elems {
			p.indent(depth + 1)
			p.node(e, depth+1, variantPrefix(e, types.LangUnknown))
			p.b.WriteString(",\n")
		}
		p.indent(depth)
		p.b.WriteString(p.sp.listClose)
	case Record:
		if n.Variant != "" && len(n.Fields) == 0 {
			return // a variant without data: its name alone
		}
		if tuple(n) && p.sp.listOpen == "[" {
			p.b.WriteString("(")
			for i, f := range n.Fields {
				if i > 0 {
					p.b.WriteString(", ")
				}
				p.node(f.Value, depth, variantPrefix(f.Value, types.LangRust))
			}
			p.b.WriteString(")")
			return
		}
		p.b.WriteString(p.sp.open + "\n")
		for _, f := range n.Fields {
			p.indent(depth + 1)
			p.node(f.Value, depth+1, p.sp.field(f.Name)+variantPrefix(f.Value, types.LangUnknown))
			p.b.WriteString(",\n")
		}
		p.indent(depth)
		p.b.WriteString(p.sp.close)
	}
}

// tuple reports whether a record's fields are a Rust tuple's (__0, __1...).
func tuple(n *Node) bool {
	for i, f := range n.Fields {
		if f.Name != "__"+strconv.Itoa(i) {
			return false
		}
	}
	return len(n.Fields) > 0
}

// flat reports whether a list holds only scalars (printed on one line).
func flat(n *Node) bool {
	for _, e := range n.Elems {
		if e.Kind != Scalar {
			return false
		}
	}
	return len(n.Elems) > 0
}

func (p *printer) indent(depth int) { p.b.WriteString(strings.Repeat("\t", depth)) }

// JSONValue is n as a value for encoding/json: objects keep member order
// (an ordered object), lists are arrays, `?` is null with the reason in a
// sibling "NAME?" key.
func JSONValue(n *Node) any {
	switch n.Kind {
	case List:
		out := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			out[i] = JSONValue(e)
		}
		return out
	case Record:
		o := object{}
		if n.Variant != "" {
			o = append(o, kv{"$variant", n.Variant})
		}
		for _, f := range n.Fields {
			o = append(o, kv{f.Name, JSONValue(f.Value)})
			if f.Value.Unknown != "" {
				o = append(o, kv{f.Name + "?", f.Value.Unknown})
			}
		}
		return o
	}
	if n.Unknown != "" {
		return nil
	}
	return n.JSON
}

type kv struct {
	k string
	v any
}

// object is a JSON object that keeps its keys' order.
type object []kv

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Text is n on one line, as the syntax of t (or o.Syntax) writes a value:
// {a: 1, b: "x"} in Go and Rust, {.a = 1, .b = "x"} in C and Zig.
func Text(t types.Type, n *Node, o *Options) string {
	var b bytes.Buffer
	l := syntaxOf(t, o)
	p := printer{sp: spellingOf(l), b: &b}
	p.line(n, variantPrefix(n, l))
	return b.String()
}

func (p *printer) line(n *Node, prefix string) {
	p.b.WriteString(prefix)
	switch n.Kind {
	case Scalar:
		p.b.WriteString(n.Text)
	case List:
		p.b.WriteString(strings.TrimSpace(p.sp.listOpen))
		for i, e := range n.Elems {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.line(e, variantPrefix(e, types.LangUnknown))
		}
		p.b.WriteString(p.sp.listClose)
	case Record:
		if n.Variant != "" && len(n.Fields) == 0 {
			return
		}
		open, close := p.sp.open, p.sp.close
		if tuple(n) && p.sp.listOpen == "[" {
			open, close = "(", ")"
		}
		p.b.WriteString(open)
		for i, f := range n.Fields {
			if i > 0 {
				p.b.WriteString(", ")
			}
			name := p.sp.field(f.Name)
			if open == "(" {
				name = ""
			}
			p.line(f.Value, name+variantPrefix(f.Value, types.LangUnknown))
		}
		p.b.WriteString(close)
	}
}
