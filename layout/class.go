package layout

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// Structs and classes as pahole prints them: the head with its bases,
// the members with their holes and bitfield notes, the statistics.

// isCPPBase reports whether a member is a C++ base class.
func isCPPBase(l *Layout, m *types.Member) bool {
	return m.Embedded && l.Lang == types.LangCPlusPlus
}

// class prints a struct or class (pahole's __class__fprintf).
func (p *printer) class(b *bytes.Buffer, l *Layout, in *conf) {
	c := *in
	indent := c.indent
	if c.prefix != "" {
		b.WriteString(c.prefix + " ")
	}
	p.classHead(b, l)
	c.indent = indent + 1
	t := tabs(c.indent)
	p.dynamic(b, l, t, &c)
	access := sections{kind: l.Kind, cur: types.AccessNone.Effective(l.Kind), on: l.Lang == types.LangCPlusPlus}
	tr := p.classMembers(b, l, t, indent, &access, &c)
	p.forcePadding(b, l, t, &c)
	if !p.opts.DataOnly {
		p.methods(b, l, &access, indent)
	}
	if c.emitStats {
		p.stats(b, l, t, c.baseOffset, tr)
	}
	b.WriteString(tabs(indent) + "}")
	if l.Packed && !p.opts.NoPacked {
		b.WriteString(" __attribute__((__packed__))")
	}
	if c.hasSuffix {
		b.WriteString(" " + c.suffix)
	}
	if a := typeAlign(l); a != 0 && !l.Packed && !p.opts.NoAligned {
		fmt.Fprintf(b, " __attribute__((__aligned__(%d)))", a)
	}
}

// classHead prints "struct NAME : BASES {" (or "class"), C++ bases with
// their access, virtual ones too.
func (p *printer) classHead(b *bytes.Buffer, l *Layout) {
	kw := "struct"
	if l.Kind == types.KindClass && !p.opts.ClassesAsStructs {
		kw = "class"
	}
	b.WriteString(kw)
	if l.Type.Name != "" {
		b.WriteString(" " + l.Type.Name)
	}
	first := true
	sep := func() {
		if first {
			b.WriteString(" :")
			first = false
		} else {
			b.WriteString(",")
		}
	}
	for i := range l.Members {
		if m := l.Members[i].Member; isCPPBase(l, m) {
			sep()
			if m.Access != types.AccessNone {
				b.WriteString(" " + m.Access.String())
			}
			b.WriteString(" " + m.Type.TypeName())
		}
	}
	for i := range l.Type.Dynamic {
		if m := &l.Type.Dynamic[i]; m.Embedded {
			sep()
			if m.Virtual {
				b.WriteString(" virtual")
			}
			if m.Access != types.AccessNone {
				b.WriteString(" " + m.Access.String())
			}
			b.WriteString(" " + m.Type.TypeName())
		}
	}
	b.WriteString(" {\n")
}

// blank writes, before a member's comments, the empty line that sets
// them off, once, and after them the one that ends them.
type blank struct {
	b    *bytes.Buffer
	open bool
}

// before starts the comments' block, once.
func (n *blank) before() {
	if !n.open {
		n.b.WriteByte('\n')
		n.open = true
	}
}

// after ends the block, when one started.
func (n *blank) after() {
	if n.open {
		n.b.WriteByte('\n')
		n.open = false
	}
}

// classMembers prints l's members, each with the holes, padding and
// bitfield notes pahole prints around it, and returns the counts the
// statistics at the end need.
func (p *printer) classMembers(b *bytes.Buffer, l *Layout, t string, indent int, access *sections, c *conf) trailer {
	nl := &blank{b: b}
	if l.preBitHole > 0 {
		nl.before()
		fmt.Fprintf(b, "%s/* XXX %d bit%s hole, try to pack */\n", t, l.preBitHole, plural(int64(l.preBitHole)))
	}
	if l.preHole > 0 {
		nl.before()
		fmt.Fprintf(b, "%s/* XXX %d byte%s hole, try to pack */\n", t, l.preHole, plural(l.preHole))
	}
	var (
		last     *Slot
		lastSize int64
		tr       trailer
	)
	for i := range l.Members {
		pos := &l.Members[i]
		m := pos.Member
		if p.align(l, m) != 0 {
			hole := l.preHole
			if last != nil {
				hole = last.Hole
			}
			if hole != 0 {
				tr.nrForcedHoles++
				tr.sumForcedHoles += hole
			}
			tr.nrForced++
		}
		if last != nil && !isCPPBase(l, m) && lastSize != 0 {
			p.bitfieldNotes(b, last, lastSize, pos, t, c, nl)
		}
		nl.after()
		access.label(b, m.Access, indent)
		c.lastMember = i == len(l.Members)-1
		c.firstMember = last == nil
		b.WriteString(t)
		p.member(b, l, pos, false, c)
		holeNotes(b, pos, t, nl, &tr)
		b.WriteByte('\n')
		if isCPPBase(l, m) {
			continue
		}
		if last == nil || lastSize == 0 || last.UnitOffset != pos.UnitOffset ||
			(!last.IsBitfield() && pos.IsBitfield()) {
			lastSize = pos.Size
		}
		last = pos
	}
	return tr
}

// bitfieldNotes prints, before the member at pos, the bitfield that fills
// the previous one's bit hole and pahole's notes on bitfields combined
// with the fields around them.
func (p *printer) bitfieldNotes(b *bytes.Buffer, last *Slot, lastSize int64, pos *Slot, t string, c *conf, nl *blank) {
	if last.BitHole != 0 && pos.IsBitfield() {
		width := last.BitHole
		if last.UnitOffset != pos.UnitOffset {
			fmt.Fprintf(b, "\n%s/* Force alignment to the next boundary: */\n", t)
			width = 0
		}
		b.WriteString(t)
		b.WriteString(p.typeDecl(pos.Member.Type, "", false, c))
		fmt.Fprintf(b, ":%d;\n", width)
	}
	if pos.UnitOffset < last.UnitOffset ||
		(pos.UnitOffset == last.UnitOffset && !last.IsBitfield() && pos.IsBitfield()) {
		nl.before()
		fmt.Fprintf(b, "%s/* Bitfield combined with previous fields */\n", t)
	} else if d := pos.UnitOffset - last.UnitOffset; d > 0 && d < lastSize {
		nl.before()
		fmt.Fprintf(b, "%s/* Bitfield combined with next fields */\n", t)
	}
}

// holeNotes prints, after the member at pos, the padding its struct type
// ends in and the holes after it, counting the padding in tr.
func holeNotes(b *bytes.Buffer, pos *Slot, t string, nl *blank, tr *trailer) {
	if st, ok := pos.Member.Type.(*types.Struct); ok && st.Kind != types.KindUnion {
		lastStruct(b, st, pos.TypePadding, t, nl, tr)
	}
	if pos.BitHole != 0 {
		nl.before()
		b.WriteString("\n" + t + "/* XXX " + itoa(int64(pos.BitHole)) + " bit" + plural(int64(pos.BitHole)) + " hole, try to pack */")
	}
	if pos.Hole > 0 {
		nl.before()
		b.WriteString("\n" + t + "/* XXX " + itoa(pos.Hole) + " byte" + plural(pos.Hole) + " hole, try to pack */")
	}
}

// lastStruct prints, after a member of struct type st, what pahole
// notes of st: that it ends in a flexible array, that it holds a struct
// that does, its padding (pahole 1.24 notes the padding alone; the
// flexible arrays are later pahole's), counting them in tr.
func lastStruct(b *bytes.Buffer, st *types.Struct, padding int64, t string, nl *blank, tr *trailer) {
	var notes []string
	if endsInFlexible(st) {
		tr.nrFlexible++
		notes = append(notes, " a flexible array")
	}
	if embedsFlexible(st) {
		tr.nrEmbedded++
		notes = append(notes, " embedded flexible array(s)")
	}
	if padding > 0 {
		tr.nrPaddings++
		tr.sumPaddings += padding
		notes = append(notes, " "+itoa(padding)+" byte"+plural(padding)+" of padding")
	}
	if len(notes) > 0 {
		nl.before()
		b.WriteString("\n" + t + "/* XXX last struct has" + strings.Join(notes, ",") + " */")
	}
}

// forcePadding prints pahole's guess at the anonymous bitfields that fill
// a struct's tail padding (glibc's struct timex ends in eleven "int :32;",
// which DWARF does not record): when the format records alignment
// (PrintOptions.ForcePadding), the type has no alignment attribute, the
// last declared member's type has a power-of-two size and the padding is
// more than a pointer, one anonymous bitfield of that type per its size
// of padding (dwarves' class__fprintf).
func (p *printer) forcePadding(b *bytes.Buffer, l *Layout, t string, c *conf) {
	if !p.opts.ForcePadding || !c.emitStats || l.Padding == 0 || l.Type.Align != 0 || len(l.Type.Members) == 0 {
		return
	}
	last := l.Type.Members[len(l.Type.Members)-1].Type
	size, err := types.Sizeof(last)
	if err != nil || size <= 0 || size&(size-1) != 0 || l.Padding <= 8 {
		return
	}
	fmt.Fprintf(b, "\n%s/* Force padding: */\n", t)
	decl := p.typeDecl(last, "", false, c)
	for added := int64(0); added < l.Padding; added += size {
		fmt.Fprintf(b, "%s%s:%d;\n", t, decl, size*8)
	}
}

// explicitAlign returns the alignment attribute a member prints with, or 0.
// Rust and Zig record every member's alignment; only one that differs from
// the natural alignment of the member's type is worth printing there. C and
// C++ print what DW_AT_alignment says, as pahole does.
func explicitAlign(l *Layout, m *types.Member) int64 {
	if m.Align == 0 || l.Lang.CLike() {
		return m.Align
	}
	if m.Align == types.Alignof(m.Type) {
		return 0
	}
	return m.Align
}

// align is explicitAlign unless the options suppress the attribute.
func (p *printer) align(l *Layout, m *types.Member) int64 {
	if p.opts.NoAligned {
		return 0
	}
	return explicitAlign(l, m)
}

// typeAlign is explicitAlign for the type itself.
func typeAlign(l *Layout) int64 {
	a := l.Type.Align
	if a == 0 || l.Lang.CLike() {
		return a
	}
	natural := *l.Type
	natural.Align = 0
	if types.Alignof(&natural) == a {
		return 0
	}
	return a
}

// trailer holds the counts a struct's printer gathers for its trailer.
type trailer struct {
	nrPaddings, sumPaddings                 int64
	nrForced, nrForcedHoles, sumForcedHoles int64
	// nrFlexible and nrEmbedded count the members whose struct ends in,
	// or holds one that ends in, a flexible array.
	nrFlexible, nrEmbedded int64
}

// stats prints the trailer of a struct: size, sums, padding, cachelines.
func (p *printer) stats(b *bytes.Buffer, l *Layout, t string, base int64, tr trailer) {
	for _, s := range p.statsLines(l, base, tr) {
		if s == "" {
			b.WriteByte('\n')
			continue
		}
		b.WriteString(t)
		b.WriteString("/* ")
		b.WriteString(s)
		b.WriteString(" */\n")
	}
}

// statsLines returns the trailer's lines without comment markers; "" is
// a blank line.
func (p *printer) statsLines(l *Layout, base int64, tr trailer) []string {
	out := []string{"", "size: " + itoa(l.Size) + ", cachelines: " + itoa(l.Cachelines) + ", members: " + strconv.Itoa(l.memberCount())}
	if l.SumHoles > 0 || l.SumBitHoles > 0 {
		if l.SumMembers > 0 {
			s := "sum members: " + itoa(l.SumMembers)
			if l.SumHoles > 0 {
				s += ", holes: " + strconv.Itoa(len(l.Holes)) + ", sum holes: " + itoa(l.SumHoles)
			}
			out = append(out, s)
		}
		if l.SumBits > 0 {
			s := fmt.Sprintf("sum bitfield members: %d bits", l.SumBits)
			if l.SumBitHoles > 0 {
				s += fmt.Sprintf(", bit holes: %d, sum bit holes: %d bits", len(l.BitHoles), l.SumBitHoles)
			} else {
				s += fmt.Sprintf(" (%d bytes)", l.SumBits/8)
			}
			out = append(out, s)
		}
	}
	if l.Padding > 0 {
		out = append(out, "padding: "+itoa(l.Padding))
	}
	if tr.nrPaddings > 0 {
		out = append(out, fmt.Sprintf("paddings: %d, sum paddings: %d", tr.nrPaddings, tr.sumPaddings))
	}
	if l.BitPadding > 0 {
		out = append(out, fmt.Sprintf("bit_padding: %d bits", l.BitPadding))
	}
	if tr.nrForced != 0 {
		s := fmt.Sprintf("forced alignments: %d", tr.nrForced)
		if tr.nrForcedHoles != 0 {
			s += fmt.Sprintf(", forced holes: %d, sum forced holes: %d", tr.nrForcedHoles, tr.sumForcedHoles)
		}
		out = append(out, s)
	}
	if tr.nrFlexible > 0 || tr.nrEmbedded > 0 {
		var parts []string
		if tr.nrFlexible > 0 {
			parts = append(parts, fmt.Sprintf("end: %d", tr.nrFlexible))
		}
		if tr.nrEmbedded > 0 {
			parts = append(parts, fmt.Sprintf("middle: %d", tr.nrEmbedded))
		}
		out = append(out, "flexible array members: "+strings.Join(parts, ", "))
	}
	if l.Lang == types.LangGo {
		out = append(out, fmt.Sprintf("pointer bytes: %d", l.PointerBytes))
	}
	if last := (base + l.Size) % p.cl; last != 0 {
		out = append(out, "last cacheline: "+itoa(last)+" bytes")
	}
	if l.Warning != "" && l.memberCount() != 0 {
		diff := types.Bits(l.Size*8) - (types.Bits((l.SumMembers+l.SumHoles+l.Padding)*8) + l.SumBits + l.SumBitHoles + l.BitPadding)
		out = append(out, "", fmt.Sprintf("BRAIN FART ALERT! %d bytes != %d (member bytes) + %d (member bits) + %d (byte holes) + %d (bit holes), diff = %d bits",
			l.Size, l.SumMembers, l.SumBits, l.SumHoles, l.SumBitHoles, diff))
	}
	return out
}

// memberCount is pahole's "members:": the members of the type itself
// (for a Rust enum, its tag and its variants).
func (l *Layout) memberCount() int {
	n := len(l.Members) + len(l.Variants)
	if l.Tag != nil {
		n++
	}
	return n
}

// hasHole reports whether the type has a hole of at least size bytes
// between two members (pahole's class__has_hole_ge); every type has one
// of at least 0.
func (l *Layout) hasHole(size int64) bool {
	if size <= 0 {
		return true
	}
	for _, h := range l.Holes {
		if h.Size >= size {
			return true
		}
	}
	return false
}
