package layout

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/binscope/binscope/types"
)

// WriteNative prints l in its own language's syntax, members in memory
// order, each with its offset and size, and pahole's hole, cacheline and
// trailer comments as the language writes comments:
//
//	type main.Holey struct {
//		A bool  // offset 0, size 1
//
//		// XXX 7 bytes hole, try to pack
//
//		B int64 // offset 8, size 8
//		...
//		// size: 32, cachelines: 1, members: 5
//	}
//
// Rust types read "struct layouts::Holey {" with "    a: u8," fields and
// Rust enums "enum Name { Variant { fields } }", Zig types
// "const layouts.Holey = struct {" with "    a: u8," fields. C and C++
// types print as WriteText does. Nested types are not expanded.
func WriteNative(w io.Writer, l *Layout, opts *PrintOptions) error {
	var b strings.Builder
	nativeBody(&b, l, opts, "")
	_, err := io.WriteString(w, b.String())
	return err
}

// nativeBody prints l; trail, when not empty, is a comment put after the
// closing brace.
func nativeBody(b *strings.Builder, l *Layout, opts *PrintOptions, trail string) {
	var o PrintOptions
	if opts != nil {
		o = *opts
	}
	o.Native = false
	n := &native{printer: newPrinter(l, &o), l: l}
	switch l.Lang {
	case types.LangGo:
		n.indent, n.footer = "\t", "}"
		n.header = fmt.Sprintf("type %s struct {", l.Name)
		if l.Kind == types.KindUnion {
			n.header = fmt.Sprintf("type %s union {", l.Name)
		}
	case types.LangRust:
		n.indent, n.footer = "    ", "}"
		n.header = fmt.Sprintf("%s %s {", rustKeyword(l), l.Name)
	case types.LangZig:
		n.indent, n.footer = "    ", "};"
		kw := "struct"
		switch {
		case l.Kind == types.KindUnion:
			kw = "union"
		case l.Type.Packed:
			kw = "packed struct"
		}
		n.header = fmt.Sprintf("const %s = %s {", l.Name, kw)
	default:
		var tb bytes.Buffer
		newPrinter(l, &o).top(&tb, l)
		b.Write(tb.Bytes())
		b.WriteString(";")
		if trail != "" {
			b.WriteString("   /* " + trail + " */")
		}
		b.WriteString("\n")
		return
	}
	if o.DeclInfo && l.Type.Decl.File != "" {
		fmt.Fprintf(b, "// %s:%d\n", l.Type.Decl.File, l.Type.Decl.Line)
	}
	n.body(b, trail)
}

func rustKeyword(l *Layout) string {
	switch {
	case l.IsEnum():
		return "enum"
	case l.Kind == types.KindUnion:
		return "union"
	}
	return "struct"
}

// native prints one type in Go, Rust or Zig syntax.
type native struct {
	*printer
	l              *Layout
	indent, header string
	footer         string
	cacheline      int64
}

// field is the declaration of a member without its comment.
func (n *native) field(s *Slot) string {
	m := s.Member
	t := TypeString(m.Type, n.l.Lang)
	switch n.l.Lang {
	case types.LangGo:
		if m.Embedded {
			return t
		}
		return m.Name + " " + t
	}
	return m.Name + ": " + t + ","
}

// where is the comment after a member: its offset and size.
func (n *native) where(s *Slot) string {
	if s.IsBitfield() {
		return fmt.Sprintf("offset %s:%d, size %s, bits %d", n.num(s.UnitOffset, 0), int64(s.BitOffset)-s.UnitOffset*8, n.num(s.Size, 0), s.BitSize)
	}
	return fmt.Sprintf("offset %s, size %s", n.num(s.Offset, 0), n.num(s.Size, 0))
}

func (n *native) comment(b *strings.Builder, indent, s string) {
	b.WriteString(indent + "// " + s + "\n")
}

// mark prints a cacheline boundary comment as pahole's rule places it.
func (n *native) mark(b *strings.Builder, indent string, offset int64) {
	line := offset / n.cl
	if line <= n.cacheline {
		return
	}
	pos := offset % n.cl
	if pos == 0 {
		n.comment(b, indent, fmt.Sprintf("--- cacheline %d boundary (%d bytes) ---", line, offset))
	} else {
		n.comment(b, indent, fmt.Sprintf("--- cacheline %d boundary (%d bytes) was %d byte%s ago ---", line, offset-pos, pos, plural(pos)))
	}
	n.cacheline = line
}

// lines prints members with aligned comments and their holes. Go fields
// align names and types in columns, as gofmt does.
func (n *native) lines(b *strings.Builder, indent string, slots []Slot, holes bool) {
	fields := make([]string, len(slots))
	nameW := 0
	for i := range slots {
		if m := slots[i].Member; n.l.Lang == types.LangGo && !m.Embedded {
			nameW = max(nameW, len(m.Name))
		}
	}
	width := 0
	for i := range slots {
		fields[i] = n.field(&slots[i])
		if m := slots[i].Member; n.l.Lang == types.LangGo && !m.Embedded {
			fields[i] = fmt.Sprintf("%-*s %s", nameW, m.Name, TypeString(m.Type, n.l.Lang))
		}
		width = max(width, len(fields[i]))
	}
	for i := range slots {
		s := &slots[i]
		n.mark(b, indent, s.UnitOffset)
		fmt.Fprintf(b, "%s%-*s // %s\n", indent, width, fields[i], n.where(s))
		if !holes {
			continue
		}
		if s.BitHole > 0 {
			b.WriteString("\n")
			n.comment(b, indent, fmt.Sprintf("XXX %d bit%s hole, try to pack", s.BitHole, plural(int64(s.BitHole))))
		}
		if s.Hole > 0 {
			b.WriteString("\n")
			n.comment(b, indent, fmt.Sprintf("XXX %d byte%s hole, try to pack", s.Hole, plural(s.Hole)))
		}
		if s.Hole > 0 || s.BitHole > 0 {
			b.WriteString("\n")
		}
	}
}

func (n *native) body(b *strings.Builder, trail string) {
	l := n.l
	b.WriteString(n.header + "\n")
	in := n.indent
	if l.preHole > 0 {
		n.comment(b, in, fmt.Sprintf("XXX %d byte%s hole, try to pack", l.preHole, plural(l.preHole)))
		b.WriteString("\n")
	}
	if l.IsEnum() {
		n.enum(b)
	} else {
		n.lines(b, in, l.Members, l.Kind != types.KindUnion)
	}
	var tr trailer
	for i := range l.Members {
		s := &l.Members[i]
		if _, ok := s.Member.Type.(*types.Struct); ok && s.TypePadding > 0 && l.Kind != types.KindUnion {
			tr.nrPaddings++
			tr.sumPaddings += s.TypePadding
		}
	}
	lines := n.statsLines(l, 0, tr)
	if l.Kind == types.KindUnion {
		// pahole prints no trailer for unions; a union's size is still
		// worth a line.
		lines = lines[:2]
		if l.Padding > 0 {
			lines = append(lines, fmt.Sprintf("padding: %d", l.Padding))
		}
	}
	for _, s := range lines {
		if s == "" {
			b.WriteString("\n")
			continue
		}
		n.comment(b, in, s)
	}
	b.WriteString(n.footer)
	if trail != "" {
		b.WriteString(" // " + trail)
	}
	b.WriteString("\n")
}

// enum prints a Rust enum's tag and variants.
func (n *native) enum(b *strings.Builder) {
	l := n.l
	in := n.indent
	if l.Tag != nil {
		name := l.Tag.Member.Name
		if name != "" {
			name = " " + name
		}
		n.comment(b, in, fmt.Sprintf("discriminant%s: %s, %s", name, TypeString(l.Tag.Member.Type, l.Lang), n.where(l.Tag)))
	}
	n.lines(b, in, l.Members, false)
	initial := n.cacheline
	for i := range l.Variants {
		v := &l.Variants[i]
		n.cacheline = initial
		if len(v.Members) == 0 {
			fmt.Fprintf(b, "%s%s, // %s\n", in, v.Name, discrText(v))
			continue
		}
		fmt.Fprintf(b, "%s%s { // %s\n", in, v.Name, discrText(v))
		n.lines(b, in+in, v.Members, false)
		b.WriteString(in + "},\n")
	}
	for _, h := range l.Holes {
		b.WriteString("\n")
		n.comment(b, in, fmt.Sprintf("XXX %d byte%s hole at offset %d: no variant uses it", h.Size, plural(h.Size), h.Offset))
	}
}
