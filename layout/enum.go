package layout

import (
	"bytes"
	"fmt"
)

// enum prints a Rust enum in pahole's skeleton: the tag as a member, then
// each variant as a block of its fields at offsets from the start of the
// enum, then the holes no variant uses and the trailer:
//
//	enum layouts::Shape2 {
//		u32                        tag;                  /*     0     4 */
//		Circle {                                         /* discr: 0 */
//			f32                __0;                  /*     4     4 */
//		};
//		...
func (p *printer) enum(b *bytes.Buffer, l *Layout, in *conf) {
	c := *in
	indent := c.indent
	if c.prefix != "" {
		b.WriteString(c.prefix + " ")
	}
	b.WriteString("enum")
	if l.Type.Name != "" {
		b.WriteString(" " + l.Type.Name)
	}
	b.WriteString(" {\n")
	c.indent = indent + 1
	t := tabs(c.indent)
	initial := *c.cacheline
	if l.Tag != nil {
		tag := *l.Tag
		if tag.Member.Name == "" {
			m := *tag.Member
			m.Name = "<discriminant>"
			tag.Member = &m
		}
		b.WriteString(t)
		p.member(b, l, &tag, true, &c)
		b.WriteByte('\n')
	}
	for i := range l.Members {
		b.WriteString(t)
		p.member(b, l, &l.Members[i], true, &c)
		b.WriteByte('\n')
	}
	for i := range l.Variants {
		v := &l.Variants[i]
		*c.cacheline = initial
		fmt.Fprintf(b, "%s%-*s/* %s */\n", t, c.typeSpacing+c.nameSpacing, v.Name+" {", discrText(v))
		vc := c
		vc.indent = c.indent + 1
		vc.typeSpacing -= 8
		for j := range v.Members {
			b.WriteString(tabs(vc.indent))
			p.member(b, l, &v.Members[j], true, &vc)
			b.WriteByte('\n')
		}
		b.WriteString(t + "};\n")
	}
	for _, h := range l.Holes {
		fmt.Fprintf(b, "\n%s/* XXX %d byte%s hole at offset %d: no variant uses it */\n", t, h.Size, plural(h.Size), h.Offset)
	}
	if c.emitStats {
		p.stats(b, l, t, c.baseOffset, trailer{})
	}
	b.WriteString(tabs(indent) + "}")
	if c.hasSuffix {
		b.WriteString(" " + c.suffix)
	}
}

func discrText(v *VariantLayout) string {
	if v.Default {
		return "default"
	}
	return "discr: " + v.DiscrString()
}
