package codegen

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// Structs, unions and typedefs: their definitions, bodies and names.

// members defines what a struct's members need.
func (h *header) members(s *types.Struct) {
	for _, m := range s.Members {
		h.define(m.Type)
	}
	if s.Variants != nil {
		if s.Variants.Tag != nil {
			h.define(s.Variants.Tag.Type)
		}
		for _, v := range s.Variants.Variants {
			h.define(v.Member.Type)
		}
	}
}

func kw(s *types.Struct) string {
	if s.Kind == types.KindUnion || s.Variants != nil {
		return "union"
	}
	return "struct"
}

// typeInfo is what the header knows of a type: its state, whether it was
// declared forward, and its C name once it has one.
type typeInfo struct {
	state int
	fwd   bool
	named bool
	name  string
	word  string // "struct name", "enum name": how a tag is written
	// namedAt is how many bodies were deferred when it was named: the
	// body deferred as job k sees the names of namedAt <= k only.
	namedAt int
}

// info is t's typeInfo, made on first use.
func (h *header) info(t types.Type) *typeInfo {
	in := h.infos[t]
	if in == nil {
		in = &typeInfo{}
		h.infos[t] = in
	}
	return in
}

func (h *header) tagOf(t types.Type) string {
	if h.worker {
		return h.knownName(t)
	}
	return h.tagInfo(t).name
}

// tagInfo is t's typeInfo with its tag.
func (h *header) tagInfo(t types.Type) *typeInfo {
	in := h.info(t)
	if !in.named {
		in.name, in.named, in.namedAt = h.tags.fresh(CName(t.TypeName())), true, len(h.jobs)
		if s, ok := t.(*types.Struct); ok {
			in.word = kw(s) + " " + in.name
		} else {
			in.word = "enum " + in.name
		}
	}
	return in
}

// tagWord is "struct tag", "union tag" or "enum tag" for t.
func (h *header) tagWord(t types.Type) string {
	if h.worker {
		if in := h.known(t); in != nil {
			return in.word
		}
		return "struct _"
	}
	return h.tagInfo(t).word
}

func (h *header) typedef(td *types.Typedef) {
	in := h.info(td)
	if in.state == stDone || in.state == stBusy {
		return
	}
	in.state = stBusy
	// Go names some types twice (a typedef of a typedef of the same name):
	// one C name serves both.
	if inner, ok := types.Unqualified(td.Target).(*types.Typedef); ok && inner.Name == td.Name {
		h.typedef(inner)
		in.name, in.named, in.namedAt = h.info(inner).name, true, len(h.jobs)
		in.state = stDone
		return
	}
	// A typedef of a struct needs only its declaration; anything else is
	// spelled in full.
	if s, ok := types.Unqualified(td.Target).(*types.Struct); ok && s.Name != "" {
		h.declare(td.Target)
	} else {
		h.define(td.Target)
	}
	if h.err != nil {
		return
	}
	n := h.idents.fresh(CName(td.Name))
	in.name, in.named, in.namedAt = n, true, len(h.jobs)
	if td.Name != n {
		fmt.Fprintf(&h.out, "/* %s */\n", td.Name)
	}
	fmt.Fprintf(&h.out, "typedef %s;\n", h.decl(td.Target, n, ""))
	_, ofStruct := types.Unqualified(td.Target).(*types.Struct) // the struct asserts its own size
	if size, err := types.Sizeof(td); err == nil && size > 0 && h.asserts && complete(td.Target) && !ofStruct {
		fmt.Fprintf(&h.out, "_Static_assert(sizeof(%s) == %d, \"%s: size\");\n", n, size, n)
	}
	h.out.WriteString("\n")
	in.state = stDone
}

// complete reports whether t has a size C knows (no function type, no
// flexible array).
func complete(t types.Type) bool {
	for w := (types.Walk{}); w.Enter(t); {
		switch v := types.Resolve(t).(type) {
		case *types.FuncProto, *types.Void, nil:
			return false
		case *types.Array:
			if v.Count < 0 {
				return false
			}
			t = v.Elem
			continue
		case *types.Struct:
			return !v.Incomplete
		}
		return true
	}
	return false
}

// structDef prints a named struct or union with its asserts, or leaves a
// place for it to be rendered at the end unless anonEnum (its body names
// an anonymous enum's enumerators, in the order of the walk).
func (h *header) structDef(s *types.Struct, anonEnum bool) {
	if h.deferBodies && !anonEnum && !s.Incomplete {
		h.deferBody(s)
		return
	}
	if !s.Incomplete { // else the last struct's padding names go on
		h.padsJob = -1
	}
	h.renderStruct(s)
}

// renderStruct writes structDef's text.
func (h *header) renderStruct(s *types.Struct) {
	tag, word := h.tagOf(s), h.tagWord(s)
	size := strconv.FormatInt(s.ByteSize, 10)
	writeAll(&h.out, "/* ", s.Name, " (", s.Lang.String(), "), ", size, " bytes */\n")
	if s.Incomplete {
		fmt.Fprintf(&h.out, "%s %s;\n\n", kw(s), tag)
		return
	}
	for _, m := range s.Dynamic {
		what := m.Dynamic.String()
		if m.Virtual {
			what = "virtual base, " + what
		}
		fmt.Fprintf(&h.out, "/* not laid out here: %s (%s) */\n", m.Name, what)
	}
	h.pads = nil // made when a padding member is named
	var asserts *offsetAsserts
	if h.asserts {
		asserts = &h.offsets
		asserts.buf.Reset()
		asserts.word, asserts.tag = word, tag
	}
	writeAll(&h.out, word, " ")
	h.bodyTo(&h.out, s, "", "", asserts)
	h.out.WriteString(";\n")
	if h.asserts {
		writeAll(&h.out, "_Static_assert(sizeof(", word, ") == ", size, ", \"", tag, ": size\");\n")
		h.out.Write(asserts.buf.Bytes())
	}
	h.out.WriteString("\n")
}

// padNamer is pads, made on first use.
func (h *header) padNamer() *namer {
	if h.pads == nil {
		h.pads = newNamer()
	}
	return h.pads
}

// body returns what bodyTo writes.
func (h *header) body(s *types.Struct, indent, prefix string, asserts *offsetAsserts) string {
	var b strings.Builder
	h.bodyTo(&b, s, indent, prefix, asserts)
	return b.String()
}

// bodyTo writes to slots a struct's or union's members between braces, in memory
// order, with explicit padding, and the attributes its layout needs.
// prefix is the path of an anonymous member for the offset asserts, added
// to asserts unless it is nil.
func (h *header) bodyTo(slots *strings.Builder, s *types.Struct, indent, prefix string, asserts *offsetAsserts) {
	if h.padsJob >= 0 {
		h.renderNow() // the padding names of the last struct go on
	}
	members, union := layoutMembers(s)
	b := &structBody{h: h, s: s, slots: slots, in: indent + "\t", union: union, natural: !s.Packed, maxAlign: 1}
	// The struct's alignment in C: the attributes below give it exactly.
	b.realAlign = max(h.align.Alignof(s), s.Align)
	slots.WriteString("{\n")
	for i, m := range members {
		b.member(m, members[i+1:], i == len(members)-1, prefix, asserts)
	}
	b.end(indent)
}

// layoutMembers are s's members in memory order, as C lays them out: a
// Rust enum's variants and tag as the members of a union, a struct's
// overlapping members flattened (see flattenOverlaps).
func layoutMembers(s *types.Struct) (members []types.Member, union bool) {
	members = s.Members // copied before any change
	union = s.Kind == types.KindUnion
	if s.Variants != nil {
		members = slices.Clone(members)
		// A Rust enum: a union of its variants, each a struct at offset 0
		// whose fields sit at their offsets in the enum, and of the tag.
		union = true
		if tg := s.Variants.Tag; tg != nil {
			members = append(members, types.Member{Name: "__tag", Type: padTo(*tg), Offset: 0})
		}
		for _, v := range s.Variants.Variants {
			members = append(members, v.Member)
		}
	}
	byOffset := func(a, b types.Member) int { return cmp.Compare(a.Offset, b.Offset) }
	if !slices.IsSortedFunc(members, byOffset) {
		members = slices.Clone(members)
		slices.SortStableFunc(members, byOffset)
	}
	if !union {
		var w types.Walk
		members = flattenOverlaps(members, &w)
	}
	return members, union
}

// structBody is the body of struct s being written to slots, members
// indented by in: where the last member ended and what its layout needs.
type structBody struct {
	h         *header
	s         *types.Struct
	slots     *strings.Builder
	in        string
	union     bool
	names     namer
	cur       types.Bits // end of the previous member, in bits
	natural   bool       // C's own layout gives the members their offsets
	maxAlign  int64
	realAlign int64 // the struct's alignment in C
	flexLast  bool  // the last member is a flexible array member
}

// pad fills the struct up to bit to with unnamed bitfields and byte
// arrays.
func (b *structBody) pad(to types.Bits) {
	if to <= b.cur || b.union {
		return
	}
	if b.cur%8 != 0 { // finish the byte of a bitfield
		n := min(8-b.cur%8, to-b.cur)
		b.slots.WriteString(b.in + "unsigned char : " + strconv.FormatInt(int64(n), 10) + ";\n")
		b.cur += n
	}
	if whole := (to - b.cur) / 8; whole > 0 {
		b.slots.WriteString(b.in + "unsigned char " + b.h.padNamer().unique("__pad_"+strconv.FormatInt(int64(b.cur/8), 10)) + "[" + strconv.FormatInt(int64(whole), 10) + "];\n")
		b.cur += whole * 8
	}
	if to > b.cur {
		b.slots.WriteString(b.in + "unsigned char : " + strconv.FormatInt(int64(to-b.cur), 10) + ";\n")
		b.cur = to
	}
}

// member writes m, after padding up to it; rest are the members after it,
// last says it is the last.
func (b *structBody) member(m types.Member, rest []types.Member, last bool, prefix string, asserts *offsetAsserts) {
	h, s := b.h, b.s
	if !b.union {
		m.Type = types.Expressible(m, rest, s.ByteSize)
	}
	size, _ := types.Sizeof(m.Type)
	align := h.align.Alignof(m.Type)
	if m.Align > align {
		align = m.Align
	}
	if m.BitSize > 0 {
		b.natural = false // bitfields are laid out bit by bit, packed
	}
	if !b.union && m.Offset < b.cur {
		// Overlapping (corrupt debug info, or a zero-size member):
		// a struct cannot express it; say so where it would be.
		if size > 0 || m.BitSize > 0 {
			b.slots.WriteString(b.in + "/* left out: " + strings.ReplaceAll(h.decl(m.Type, m.Name, b.in), "*/", "* /") +
				" at bit " + strconv.FormatInt(int64(m.Offset), 10) + " overlaps the member before it */\n")
		}
		return
	}
	b.pad(m.Offset)
	if m.BitSize == 0 && m.Offset%8 == 0 && (m.Offset.Bytes())%align != 0 {
		b.natural = false
	}
	b.maxAlign = max(b.maxAlign, align)
	name := m.Name
	if name == "" && !anonymous(m.Type) {
		name = fmt.Sprintf("__anon_%d", m.Offset.Bytes())
	}
	if name != "" {
		name = b.names.fresh(memberName(name))
	}
	t := m.Type
	if a, ok := types.Unqualified(t).(*types.Array); ok && a.Count < 0 && (!last || !b.union && !flexFits(m.Offset, s, b.realAlign)) {
		// C wants a flexible array last with nothing after it, not
		// even padding: a zero-length array may be followed.
		t = &types.Array{Elem: a.Elem, Count: 0}
	}
	if bt, ok := types.Resolve(t).(*types.Base); ok && bt.Encoding == types.Bool && m.BitSize > 1 {
		// C++'s bool x : 8 is wider than C's _Bool may be.
		t = &types.Base{Name: bt.Name, ByteSize: bt.ByteSize, Encoding: types.Unsigned}
	}
	b.slots.WriteString(b.in)
	h.declTo(b.slots, t, name, b.in)
	if m.BitSize > 0 {
		b.slots.WriteString(" : " + strconv.FormatInt(int64(m.BitSize), 10))
	}
	b.slots.WriteString(";\n")
	if a, ok := types.Unqualified(t).(*types.Array); ok && a.Count < 0 {
		b.flexLast = true
	}
	if asserts != nil {
		var w types.Walk
		h.assertMember(asserts, prefix, name, m.Offset, m.BitSize, t, &w)
	}
	end := m.Offset + types.Bits(size*8)
	if m.BitSize > 0 {
		end = m.Offset + m.BitSize
	}
	if b.union {
		b.cur = max(b.cur, end)
	} else {
		b.cur = end
	}
}

// end pads the struct to its size, closes it and gives it the attributes
// that make C lay it out as the binary does.
func (b *structBody) end(indent string) {
	s, slots := b.s, b.slots
	if b.union {
		if types.Bits(s.ByteSize*8) > b.cur {
			slots.WriteString(b.in + "unsigned char " + b.h.padNamer().unique("__pad") + "[" + strconv.FormatInt(s.ByteSize, 10) + "];\n")
		}
	} else if !b.flexLast || !flexFits(b.cur, s, b.realAlign) {
		b.pad(types.Bits(s.ByteSize * 8))
	}
	if s.ByteSize%b.maxAlign != 0 || b.realAlign < b.maxAlign {
		b.natural = false
	}
	slots.WriteString(indent + "}")
	switch {
	case !b.natural && b.realAlign > 1:
		slots.WriteString(" __attribute__((packed, aligned(" + strconv.FormatInt(b.realAlign, 10) + ")))")
	case !b.natural:
		slots.WriteString(" __attribute__((packed))")
	case b.realAlign > b.maxAlign:
		slots.WriteString(" __attribute__((aligned(" + strconv.FormatInt(b.realAlign, 10) + ")))")
	}
}
