package layout

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// PrintOptions configure the printers. A nil *PrintOptions means the
// defaults: pahole's text, decimal, nested named types not expanded.
type PrintOptions struct {
	// Hex prints member offsets and sizes in hexadecimal (--hex).
	Hex bool
	// Expand expands the types of members inline, named ones included
	// (-E); anonymous structs and unions are always expanded.
	Expand bool
	// DeclInfo prints where each type was declared, "/* file:line */"
	// (-I), when known.
	DeclInfo bool
	// RelOffset prints the offsets of members of expanded inner types
	// relative to the inner type instead of to the outer one (-r).
	RelOffset bool
	// Native makes WriteText and WriteReorganized print each type in its
	// own language's syntax, as WriteNative does (--syntax=native).
	Native bool
	// DataOnly leaves out C++ member functions (-M,
	// --show_only_data_members).
	DataOnly bool
	// ClassesAsStructs prints the keyword struct for C++ classes
	// (--classes_as_structs).
	ClassesAsStructs bool
	// Quiet leaves out every comment: offsets and sizes, holes, the
	// trailer (-q).
	Quiet bool
	// FlatArrays prints a multi-dimensional array as one dimension of
	// all its elements: a[3][4] as a[12] (--flat_arrays).
	FlatArrays bool
	// NoAligned leaves out the __aligned__ attributes and the forced
	// alignment counts (--suppress_aligned_attribute); NoPacked the
	// __packed__ attributes (--suppress_packed).
	NoAligned, NoPacked bool
	// FixSillyBitfields prints a bitfield as wide as its type (int x:32)
	// as the plain member it is (--fixup_silly_bitfields).
	FixSillyBitfields bool
	// ExpandPointers expands the struct a member points to, as an
	// anonymous one is (-p, --expand_pointers); a struct already being
	// expanded on the way there is not expanded again.
	ExpandPointers bool
	// ForcePadding prints pahole's "Force padding:" guess at the anonymous
	// bitfields in a struct's tail padding, which pahole makes for formats
	// that record alignment (DWARF, not BTF).
	ForcePadding bool
}

const (
	typeSpacing       = 26
	nameSpacing       = 23
	unionNameSpacing  = 21
	expandNameSpacing = 55
)

// conf is the state pahole threads through its printers (conf_fprintf).
type conf struct {
	indent      int
	typeSpacing int
	nameSpacing int
	baseOffset  int64
	cacheline   *int64
	prefix      string
	suffix      string
	hasSuffix   bool
	emitStats   bool
	// keepStats makes the next composite keep emitStats (a const
	// anonymous struct prints its statistics, constAnon).
	keepStats   bool
	unionMember bool
	firstMember bool
	lastMember  bool
	// noOffsets leaves out the members' offset comments (inside the
	// structs -p expands).
	noOffsets bool
}

// printer formats layouts as pahole does.
type printer struct {
	opts PrintOptions
	cl   int64
	lang types.Lang
	memo map[*types.Struct]*Layout
	// walk guards the recursion of member types into the bodies
	// they expand (typeDecl).
	walk types.Walk
	// expanding are the named structs -p is expanding, outermost
	// first.
	expanding []*types.Struct
}

func newPrinter(l *Layout, opts *PrintOptions) *printer {
	p := &printer{cl: l.CachelineSize, lang: l.Lang}
	if opts != nil {
		p.opts = *opts
	}
	if p.cl <= 0 {
		p.cl = DefaultCachelineSize
	}
	return p
}

const manyTabs = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"

func tabs(n int) string {
	if n >= 0 && n <= len(manyTabs) {
		return manyTabs[:n]
	}
	return strings.Repeat("\t", n)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// WriteText prints l as pahole prints a struct, union or class: members in
// memory order with "/* offset size */" comments, holes, bit holes,
// cacheline boundaries and the statistics trailer, then a newline. For C
// the output is pahole 1.24's, byte for byte (with opts.ForcePadding for
// DWARF, pahole's "Force padding:" guess too). C++ base classes print as pahole's "<ancestor>" lines but count in
// the sums, so no false alarm follows. Go, Rust and Zig types use the same
// skeleton with their languages' type names (Go types add a "pointer
// bytes" line; alignment attributes equal to the natural alignment, which
// Rust and Zig record for every field, are left out). Unions print without
// a trailer, as pahole prints them. With opts.Native it prints
// WriteNative's format instead.
func WriteText(w io.Writer, l *Layout, opts *PrintOptions) error {
	if opts != nil && opts.Native {
		return WriteNative(w, l, opts)
	}
	if bb, ok := w.(*bytes.Buffer); ok && (opts == nil || !opts.Quiet) { // a report's batch: print in place
		newPrinter(l, opts).top(bb, l)
		bb.WriteString(";\n")
		return nil
	}
	var b bytes.Buffer
	newPrinter(l, opts).top(&b, l)
	b.WriteString(";\n")
	if opts != nil && opts.Quiet {
		_, err := io.WriteString(w, quietText(b.String()))
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// top prints a type at the outermost level, without the final ";".
func (p *printer) top(b *bytes.Buffer, l *Layout) {
	if p.opts.DeclInfo && l.Type.Decl.File != "" {
		fmt.Fprintf(b, "/* %s:%d */\n", l.Type.Decl.File, l.Type.Decl.Line)
	}
	var cacheline int64
	c := conf{typeSpacing: typeSpacing, nameSpacing: nameSpacing, emitStats: true, cacheline: &cacheline}
	switch {
	case p.opts.Expand:
		c.nameSpacing = expandNameSpacing
	case l.Kind == types.KindUnion:
		c.nameSpacing = unionNameSpacing
	}
	if l.Type.Name == "" && l.Name != "" {
		c.prefix, c.suffix, c.hasSuffix = "typedef", l.Name, true
	}
	switch {
	case l.IsEnum():
		p.enum(b, l, &c)
	case l.Kind == types.KindUnion:
		p.union(b, l, &c)
	default:
		p.class(b, l, &c)
	}
}

// layoutOf analyses a nested type that -E expands, once per print.
func (p *printer) layoutOf(st *types.Struct) *Layout {
	if l, ok := p.memo[st]; ok {
		return l
	}
	l, err := Analyze(st, &Options{CachelineSize: p.cl})
	if err != nil {
		l = nil
	}
	if p.memo == nil {
		p.memo = map[*types.Struct]*Layout{}
	}
	p.memo[st] = l
	return l
}

func (p *printer) num(v int64, width int) string {
	if p.opts.Hex {
		return cHex(v, width)
	}
	return padInt(v, width)
}

// writeNum writes p.num(v, width) to b.
func (p *printer) writeNum(b *bytes.Buffer, v int64, width int) {
	if p.opts.Hex || width < 0 {
		b.WriteString(p.num(v, width))
		return
	}
	var buf [24]byte
	digits := strconv.AppendInt(buf[:0], v, 10)
	if n := width - len(digits); n > 0 {
		b.WriteString(spaces(n))
	}
	b.Write(digits)
}

// cachelineMark prints pahole's boundary comment when offset is in a later
// cacheline than the last one marked.
func (p *printer) cachelineMark(b *bytes.Buffer, c *conf, offset int64) {
	line := offset / p.cl
	if line <= *c.cacheline {
		return
	}
	pos := offset % p.cl
	if pos == 0 {
		fmt.Fprintf(b, "/* --- cacheline %d boundary (%d bytes) --- */\n", line, offset-pos)
	} else {
		fmt.Fprintf(b, "/* --- cacheline %d boundary (%d bytes) was %d byte%s ago --- */\n", line, offset-pos, pos, plural(pos))
	}
	b.WriteString(tabs(c.indent))
	*c.cacheline = line
}

// union prints a union (pahole's union__fprintf): members, no statistics.
func (p *printer) union(b *bytes.Buffer, l *Layout, in *conf) {
	indent := in.indent
	if in.prefix != "" {
		b.WriteString(in.prefix + " ")
	}
	b.WriteString("union")
	if l.Type.Name != "" {
		b.WriteString(" " + l.Type.Name)
	}
	b.WriteString(" {\n")
	u := *in
	u.indent = indent + 1
	initial := *u.cacheline
	for i := range l.Members {
		u.unionMember = true
		b.WriteString(tabs(u.indent))
		p.member(b, l, &l.Members[i], true, &u)
		b.WriteByte('\n')
		*u.cacheline = initial
	}
	b.WriteString(tabs(indent) + "}")
	if in.hasSuffix {
		b.WriteString(" " + in.suffix)
	}
}

// inlineType reports whether a member of type t is printed by expanding
// its body: anonymous structs, unions and enums always, named ones with -E.
// constAnon reports whether t is a const anonymous struct, which pahole
// prints as a type of its own: the "const " taken from its type column,
// its statistics inside, its offset one space after "};" (dwarves'
// type__fprintf reaches it through the const modifier, not as a member's
// struct). The kernel's struct vm_fault opens with one.
func constAnon(t types.Type) bool {
	q, ok := t.(*types.Qualifier)
	if !ok || q.Kind != types.Const {
		return false
	}
	st, ok := types.Unqualified(t).(*types.Struct)
	return ok && st.Name == "" && st.Kind != types.KindUnion
}

func (p *printer) inlineType(t types.Type) bool {
	switch v := t.(type) {
	case *types.Struct:
		return v.Name == "" || (p.opts.Expand && !v.Incomplete && v.Variants == nil)
	case *types.Enum:
		return v.Name == ""
	}
	return false
}

// member prints one member line without its indent (pahole's
// class_member__fprintf).
func (p *printer) member(b *bytes.Buffer, l *Layout, pos *Slot, unionMember bool, c *conf) {
	m := pos.Member
	offset := pos.UnitOffset
	sc := *c
	if !p.opts.RelOffset {
		offset += sc.baseOffset
		if !unionMember {
			sc.baseOffset = offset
		}
	}
	p.cachelineMark(b, c, offset)
	s, start := b, b.Len() // the line, written in place
	name := m.Name
	base := isCPPBase(l, m)
	if base {
		name = "<ancestor>"
		s.WriteString("/* ")
	}
	composite, anon := false, false
	switch u := types.Unqualified(m.Type).(type) {
	case *types.Struct:
		// pahole prints a const anonymous struct through its type
		// printer, as a type of its own (constAnon).
		composite, anon = u.Name != "" || !constAnon(m.Type), u.Name == ""
	case *types.Enum:
		composite, anon = true, u.Name == ""
	}
	if composite {
		s.WriteString(p.typeDeclSlot(m.Type, "", true, &sc, pos))
		if name != "" {
			if anon {
				s.WriteString(" ")
			}
			s.WriteString(name)
		}
	} else {
		p.typeDeclTo(s, m.Type, name, false, &sc)
	}
	if pos.IsBitfield() {
		s.WriteString(":" + strconv.FormatInt(int64(pos.BitSize), 10))
	}
	alignAttr := 0
	if a := p.align(l, m); a != 0 {
		a := fmt.Sprintf(" __attribute__((__aligned__(%d)))", a)
		alignAttr = len(a)
		s.WriteString(a)
	}
	s.WriteString(";")
	if c.noOffsets {
		return
	}
	sizeSpacing := 5
	if composite && anon {
		slen := alignAttr - 1
		if name != "" {
			slen = alignAttr + len(name)
		}
		if st, ok := m.Type.(*types.Struct); ok && st.Kind != types.KindUnion && pos.Inner != nil && pos.Inner.Packed && !p.opts.NoPacked {
			slen += len("__attribute__((__packed__))") + 1
		}
		s.WriteString(gap(sc.typeSpacing + sc.nameSpacing - slen - 3))
	} else {
		spacing := sc.typeSpacing + sc.nameSpacing - (s.Len() - start)
		if base {
			s.WriteString(" */")
			spacing -= 3
		}
		s.WriteString(gap(max(spacing, 0)))
	}
	s.WriteString("/* ")
	p.writeNum(s, offset, 5)
	if pos.IsBitfield() {
		bo := int64(pos.BitOffset) - pos.UnitOffset*8
		if p.opts.Hex {
			s.WriteString(":" + cHex(bo, 2))
		} else {
			s.WriteString(":" + padInt(bo, 2))
		}
		sizeSpacing -= 3
	}
	s.WriteString(" ")
	p.writeNum(s, pos.Size, sizeSpacing)
	s.WriteString(" */")
}

// dynamic prints the members whose place depends on the object at run time
// (C++ virtual bases) or could not be read, before the others and without
// an offset, as pahole prints a virtual base first (with offset -1), and a
// blank line after them.
func (p *printer) dynamic(b *bytes.Buffer, l *Layout, t string, c *conf) {
	for i := range l.Type.Dynamic {
		m := &l.Type.Dynamic[i]
		size, _ := types.Sizeof(m.Type)
		var s strings.Builder
		if m.Embedded {
			s.WriteString("/* " + p.typeDecl(m.Type, "<ancestor>", false, c) + "; */")
		} else {
			s.WriteString(p.typeDecl(m.Type, m.Name, false, c) + ";")
		}
		what := m.Dynamic.String()
		if m.Virtual && m.Dynamic == types.DynamicRuntime {
			what = "virtual base, offset read from the vtable at run time"
		}
		spacing := max(c.typeSpacing+c.nameSpacing-s.Len(), 0)
		fmt.Fprintf(b, "%s%s%*s/* %s, %d byte%s */\n", t, s.String(), spacing, " ", what, size, plural(size))
	}
	if len(l.Type.Dynamic) > 0 {
		b.WriteByte('\n')
	}
}
