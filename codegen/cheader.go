package codegen

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// HeaderOptions tune WriteHeader. A nil *HeaderOptions means the defaults.
type HeaderOptions struct {
	// Source names the binary the types come from, for the header's
	// comment and the default include guard.
	Source  string
	BuildID string
	// Guard is the include guard macro; default BINSCOPE_<source>_H.
	Guard string
	// NoAsserts leaves out the _Static_asserts.
	NoAsserts bool
	// Generator names what wrote the header, for its first comment
	// (default "gopahole --format=c").
	Generator string
	// SkipAtomicTypedefs leaves out the typedefs of the base types older
	// compilers named after <stdatomic.h>'s types (atomic_int...), for a
	// compiler that defines them already.
	SkipAtomicTypedefs bool
}

// emission states of a type.
const (
	stNone = iota
	stForward
	stBusy
	stDone
)

type header struct {
	out     strings.Builder
	tags    *namer // struct, union and enum tags
	idents  *namer // typedef names and enumerators
	infos   map[types.Type]*typeInfo
	walk    types.Walk        // the path of define and declare
	pads    *namer            // padding names of the struct being written
	floats  map[string]string // opaqueFloat's definitions by name
	asserts bool
	offsets offsetAsserts // of the struct being written
	err     error
	align   types.Aligner
	// speller spells declarations (decl), its words indented by indent.
	speller types.CSpeller
	indent  string
	bodies  // bodies rendered later, in parallel (cheader_par.go)
	// atomics are the legacy atomic_ base types typedef'd already; nil
	// with HeaderOptions.SkipAtomicTypedefs.
	atomics map[string]bool
}

// WriteHeader writes a self-contained C header that defines roots and
// every type they depend on: types embedded by value come before their
// users, cycles are broken with forward declarations across pointers only,
// base types are spelled with C's own keywords (no system header needed),
// and names of any language are mapped by CName with the original name in
// a comment. Each struct reproduces the binary's layout exactly: explicit
// padding where the C compiler would place a member elsewhere, packed and
// aligned attributes where C's alignment rules differ. Unless
// opts.NoAsserts, a _Static_assert checks each type's size and each
// member's offset. The header compiles with clang -target bpf.
//
// It returns how the header spells each root in C ("struct X", "enum E",
// a typedef name), for code that uses the header.
func WriteHeader(w io.Writer, roots []types.Type, opts *HeaderOptions) (map[types.Type]string, error) {
	hw := NewHeaderWriter(opts, len(roots))
	for _, t := range roots {
		if err := hw.Add(t); err != nil {
			return nil, err
		}
	}
	return hw.Finish(w)
}

// A HeaderWriter writes the header WriteHeader writes with its roots handed
// over one by one, as a loader converts them: the header of a kernel's BTF
// is made while the rest loads. It keeps the header until Finish.
type HeaderWriter struct {
	h *header
	o HeaderOptions
	// roots and their spellings, in the order added: a header whose bodies
	// cannot be rendered apart is made again from roots.
	roots  []types.Type
	spells []string
}

// NewHeaderWriter starts a header of about roots roots (0 when unknown).
func NewHeaderWriter(opts *HeaderOptions, roots int) *HeaderWriter {
	var o HeaderOptions
	if opts != nil {
		o = *opts
	}
	return &HeaderWriter{h: newHeader(&o, roots, true), o: o, roots: make([]types.Type, 0, roots), spells: make([]string, 0, roots)}
}

// newHeader starts a header of about n roots; with deferBodies, named
// structs' bodies are rendered at the end, in parallel.
func newHeader(o *HeaderOptions, n int, deferBodies bool) *header {
	// Sized for a kernel's BTF: about as many tags and named types as roots,
	// four times as many enumerators, 700 bytes of header each (of which
	// the bodies are most).
	h := &header{tags: newNamerSized(n), idents: newNamerSized(4 * n), infos: make(map[types.Type]*typeInfo, 3*n),
		pads: newNamer(), floats: map[string]string{}, asserts: !o.NoAsserts}
	if !o.SkipAtomicTypedefs {
		h.atomics = map[string]bool{}
	}
	h.deferBodies, h.padsJob = deferBodies, -1
	if deferBodies {
		h.jobs = make([]bodyJob, 0, n+n/4)
		h.out.Grow(200 * n)
	} else {
		h.out.Grow(700 * n)
	}
	return h
}

// Add defines root t and what it needs. After an error the header is
// lost: Finish returns the error.
func (hw *HeaderWriter) Add(t types.Type) error {
	h := hw.h
	if h.err != nil {
		return h.err
	}
	h.define(t)
	if h.err != nil {
		return h.err
	}
	hw.roots = append(hw.roots, t)
	hw.spells = append(hw.spells, h.decl(t, "", ""))
	return nil
}

// Finish writes the header to w and returns how it spells each root (see
// WriteHeader).
func (hw *HeaderWriter) Finish(w io.Writer) (map[types.Type]string, error) {
	h, o := hw.h, hw.o
	if h.err != nil {
		return nil, h.err
	}
	parts := h.renderBodies()
	if h.bad {
		// A body needed what only the serial walk gives (an anonymous
		// enum's enumerator names): make the header again, in one pass.
		again := &HeaderWriter{h: newHeader(&o, len(hw.roots), false), o: o}
		for _, t := range hw.roots {
			if err := again.Add(t); err != nil {
				return nil, err
			}
		}
		return again.Finish(w)
	}
	spell := make(map[types.Type]string, len(hw.roots))
	for i, t := range hw.roots {
		spell[t] = hw.spells[i]
	}
	guard := o.Guard
	if guard == "" {
		base := o.Source
		if i := strings.LastIndexByte(base, '/'); i >= 0 {
			base = base[i+1:]
		}
		guard = "BINSCOPE_" + strings.ToUpper(CName(base)) + "_H"
	}
	var b strings.Builder
	by := o.Generator
	if by == "" {
		by = "gopahole --format=c"
	}
	b.WriteString("/* Generated by " + by)
	if o.Source != "" {
		b.WriteString(" from " + o.Source)
	}
	if o.BuildID != "" {
		b.WriteString(" (build-id " + o.BuildID + ")")
	}
	b.WriteString(".\n * Names: CName's mapping (:: -> __, other non-identifier bytes -> _); originals in comments.\n")
	b.WriteString(" * Layouts are the binary's: explicit padding and attributes, checked by _Static_assert. */\n")
	fmt.Fprintf(&b, "#ifndef %s\n#define %s\n\n", guard, guard)
	if len(h.floats) > 0 {
		names := make([]string, 0, len(h.floats))
		for n := range h.floats {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			b.WriteString(h.floats[n])
		}
		b.WriteString("\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return spell, err
	}
	for _, part := range parts {
		if _, err := io.WriteString(w, part); err != nil {
			return spell, err
		}
	}
	_, err := io.WriteString(w, "#endif /* "+guard+" */\n")
	return spell, err
}

var errDepth = errors.New("type graph too deep to emit (cycle?)")

// enter puts t on the path of the walk over what the header needs: false,
// with h.err set, when t is on it already (a cycle no loader broke) or the
// path is too deep; false too after an error. The caller leaves t when
// enter returned true.
func (h *header) enter(t types.Type) bool {
	if h.err == nil && !h.walk.Enter(t) {
		h.err = errDepth
	}
	return h.err == nil
}

// define makes t usable by value: every type it embeds is defined first.
func (h *header) define(t types.Type) {
	if !h.enter(t) {
		return
	}
	defer h.walk.Leave()
	switch v := t.(type) {
	case *types.Base:
		if c := legacyAtomic(v); c != "" && h.atomics != nil && !h.atomics[v.Name] {
			h.atomics[v.Name] = true
			fmt.Fprintf(&h.out, "typedef _Atomic %s %s;\n", c, v.Name)
		}
	case *types.Qualifier:
		h.define(v.Target)
	case *types.Array:
		h.define(v.Elem)
	case *types.Pointer:
		h.declare(v.Target)
	case *types.FuncProto:
		if v.ByteSize == 0 { // a Go func value is spelled void *
			h.declareProto(v)
		}
	case *types.Typedef:
		h.typedef(v)
		h.define(v.Target) // by value: the struct it names too
	case *types.Enum:
		if v.Name != "" {
			h.enum(v)
		} else {
			h.anonEnum = true // its enumerators are named where it is written
		}
	case *types.Struct:
		if v.Name == "" { // defined inline where it is used
			h.members(v)
			return
		}
		in := h.info(v)
		switch in.state {
		case stDone:
			return
		case stBusy:
			h.err = fmt.Errorf("type %s contains itself by value", v.Name)
			return
		}
		h.tagOf(v)
		in.state = stBusy
		outer := h.anonEnum
		h.anonEnum = false
		h.members(v)
		if h.err != nil {
			return
		}
		h.structDef(v, h.anonEnum)
		h.anonEnum = outer
		in.state = stDone
	}
}

// declare makes t nameable behind a pointer: a forward declaration is
// enough for a struct or union. A named struct and a typedef do not go on
// the walk's path here: a pointer only refers to them, also from inside
// their own definitions (their states guard them).
func (h *header) declare(t types.Type) {
	switch v := t.(type) {
	case *types.Qualifier:
		if h.enter(v) {
			h.declare(v.Target)
			h.walk.Leave()
		}
	case *types.Struct:
		if v.Name == "" {
			if h.enter(v) {
				h.members(v)
				h.walk.Leave()
			}
			return
		}
		// Also while v is being defined: a function pointer among its
		// members may name it in a parameter list.
		if in := h.info(v); h.err == nil && in.state != stDone && !in.fwd {
			in.fwd = true
			if in.state == stNone {
				in.state = stForward
			}
			fmt.Fprintf(&h.out, "%s %s;\n", kw(v), h.tagOf(v))
		}
	case *types.Typedef:
		h.typedef(v)
	default:
		h.define(t)
	}
}

func (h *header) declareProto(p *types.FuncProto) {
	if p.Return != nil {
		h.declare(p.Return)
	}
	for _, a := range p.Params {
		h.declare(a.Type)
	}
}

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
	members := s.Members // copied before any change
	union := s.Kind == types.KindUnion
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
	in := indent + "\t"
	var names namer
	slots.WriteString("{\n")
	var cur types.Bits // end of the previous member, in bits
	natural := !s.Packed
	maxAlign := int64(1)
	// The struct's alignment in C: the attributes below give it exactly.
	realAlign := h.align.Alignof(s)
	if s.Align > realAlign {
		realAlign = s.Align
	}
	flexLast := false // the last member is a flexible array member
	pad := func(to types.Bits) {
		if to <= cur || union {
			return
		}
		if cur%8 != 0 { // finish the byte of a bitfield
			n := min(8-cur%8, to-cur)
			slots.WriteString(in + "unsigned char : " + strconv.FormatInt(int64(n), 10) + ";\n")
			cur += n
		}
		if whole := (to - cur) / 8; whole > 0 {
			slots.WriteString(in + "unsigned char " + h.padNamer().unique("__pad_"+strconv.FormatInt(int64(cur/8), 10)) + "[" + strconv.FormatInt(int64(whole), 10) + "];\n")
			cur += whole * 8
		}
		if to > cur {
			slots.WriteString(in + "unsigned char : " + strconv.FormatInt(int64(to-cur), 10) + ";\n")
			cur = to
		}
	}
	for i, m := range members {
		if !union {
			m.Type = types.Expressible(m, members[i+1:], s.ByteSize)
		}
		size, _ := types.Sizeof(m.Type)
		align := h.align.Alignof(m.Type)
		if m.Align > align {
			align = m.Align
		}
		if m.BitSize > 0 {
			natural = false // bitfields are laid out bit by bit, packed
		}
		if !union && m.Offset < cur {
			// Overlapping (corrupt debug info, or a zero-size member):
			// a struct cannot express it; say so where it would be.
			if size > 0 || m.BitSize > 0 {
				slots.WriteString(in + "/* left out: " + strings.ReplaceAll(h.decl(m.Type, m.Name, in), "*/", "* /") +
					" at bit " + strconv.FormatInt(int64(m.Offset), 10) + " overlaps the member before it */\n")
			}
			continue
		}
		pad(m.Offset)
		if m.BitSize == 0 && m.Offset%8 == 0 && (m.Offset.Bytes())%align != 0 {
			natural = false
		}
		maxAlign = max(maxAlign, align)
		name := m.Name
		if name == "" && !anonymous(m.Type) {
			name = fmt.Sprintf("__anon_%d", m.Offset.Bytes())
		}
		if name != "" {
			name = names.fresh(memberName(name))
		}
		t := m.Type
		if a, ok := types.Unqualified(t).(*types.Array); ok && a.Count < 0 && (i != len(members)-1 || !union && !flexFits(m.Offset, s, realAlign)) {
			// C wants a flexible array last with nothing after it, not
			// even padding: a zero-length array may be followed.
			t = &types.Array{Elem: a.Elem, Count: 0}
		}
		if b, ok := types.Resolve(t).(*types.Base); ok && b.Encoding == types.Bool && m.BitSize > 1 {
			// C++'s bool x : 8 is wider than C's _Bool may be.
			t = &types.Base{Name: b.Name, ByteSize: b.ByteSize, Encoding: types.Unsigned}
		}
		slots.WriteString(in)
		h.declTo(slots, t, name, in)
		if m.BitSize > 0 {
			slots.WriteString(" : " + strconv.FormatInt(int64(m.BitSize), 10))
		}
		slots.WriteString(";\n")
		if a, ok := types.Unqualified(t).(*types.Array); ok && a.Count < 0 {
			flexLast = true
		}
		if asserts != nil {
			var w types.Walk
			h.assertMember(asserts, prefix, name, m.Offset, m.BitSize, t, &w)
		}
		end := m.Offset + types.Bits(size*8)
		if m.BitSize > 0 {
			end = m.Offset + m.BitSize
		}
		if union {
			cur = max(cur, end)
		} else {
			cur = end
		}
	}
	if union {
		if types.Bits(s.ByteSize*8) > cur {
			slots.WriteString(in + "unsigned char " + h.padNamer().unique("__pad") + "[" + strconv.FormatInt(s.ByteSize, 10) + "];\n")
		}
	} else if !flexLast || !flexFits(cur, s, realAlign) {
		pad(types.Bits(s.ByteSize * 8))
	}
	if s.ByteSize%maxAlign != 0 || realAlign < maxAlign {
		natural = false
	}
	slots.WriteString(indent + "}")
	switch {
	case !natural && realAlign > 1:
		slots.WriteString(" __attribute__((packed, aligned(" + strconv.FormatInt(realAlign, 10) + ")))")
	case !natural:
		slots.WriteString(" __attribute__((packed))")
	case realAlign > maxAlign:
		slots.WriteString(" __attribute__((aligned(" + strconv.FormatInt(realAlign, 10) + ")))")
	}
}

// decl spells a C declaration of name with type t ("" for an abstract
// declarator) with types.CSpeller: base types in C's keywords, types by
// their C names, anonymous structs, unions and enums written inline.
func (h *header) decl(t types.Type, name, indent string) string {
	var b strings.Builder
	h.declTo(&b, t, name, indent)
	return b.String()
}

// declTo writes decl(t, name, indent) to b.
func (h *header) declTo(b *strings.Builder, t types.Type, name, indent string) {
	// Most members are one word and a name (a base type, a typedef, a
	// struct), or a pointer to one: what the speller asks word first.
	// word has no effect when it has no word, so the speller may ask
	// again.
	w, instead := h.word(t, name, indent)
	if w != "" {
		b.WriteString(w)
		if name != "" {
			b.WriteString(" ")
			b.WriteString(name)
		}
		return
	}
	if p, ok := t.(*types.Pointer); ok && instead == nil && p.Target != nil {
		// A pointer to one word: the speller's next question.
		inner := "*" + name
		if w, _ := h.word(p.Target, inner, indent); w != "" {
			b.WriteString(w)
			b.WriteString(" ")
			b.WriteString(inner)
			return
		}
	}
	if h.speller.Word == nil {
		h.speller = types.CSpeller{Unprototyped: true, Word: func(t types.Type, inner string) (string, types.Type) {
			return h.word(t, inner, h.indent)
		}}
	}
	outer := h.indent
	h.indent = indent
	b.WriteString(h.speller.Declare(t, name))
	h.indent = outer
}

// scalar reports whether t, through typedefs and qualifiers, is a base
// type, an enum or a pointer: those _Atomic qualifies without changing
// their size or alignment on the targets the header is for (an _Atomic
// struct may be padded or aligned to a power of two).
func scalar(t types.Type) bool {
	for w := (types.Walk{}); w.Enter(t); {
		switch v := t.(type) {
		case *types.Typedef:
			t = v.Target
		case *types.Qualifier:
			t = v.Target
		case *types.Base:
			return v.ByteSize > 0 && v.ByteSize&(v.ByteSize-1) == 0 && v.ByteSize <= 8
		case *types.Enum, *types.Pointer:
			return true
		default:
			return false
		}
	}
	return false
}

// word gives the C words for t, or a type to write in its place (see
// types.CSpeller.Word).
func (h *header) word(t types.Type, inner, indent string) (string, types.Type) {
	switch v := t.(type) {
	case *types.Base:
		if legacyAtomic(v) != "" {
			return v.Name, nil // typedef'd by define
		}
		if v.ByteSize == 0 { // Rust's (), !: takes no room
			return "", &types.Array{Elem: &types.Base{ByteSize: 1}, Count: 0}
		}
		if o := h.opaqueFloat(v); o != "" {
			return o, nil
		}
		base, n := cBase(v)
		if n > 0 {
			return "", &types.Array{Elem: &types.Base{Name: base, ByteSize: 1}, Count: n}
		}
		return base, nil
	case *types.Typedef:
		if in := h.infos[v]; in != nil && in.named && (!h.worker || in.namedAt <= h.job) {
			return in.name, nil
		}
		return "", v.Target
	case *types.Qualifier:
		if v.Kind == types.Atomic && scalar(v.Target) {
			return "", nil // C11's _Atomic int, struct s *_Atomic p: same size and alignment as without
		}
		if v.Kind != types.Const && v.Kind != types.Volatile {
			return "", v.Target // restrict, type tags, _Atomic composites: layout only
		}
	case *types.Pointer:
		if voidLike(v.Target) && v.Target != nil {
			// Rust's *mut (), C++'s std::nullptr_t&, Zig's *anyopaque:
			// nothing C could name behind the pointer.
			return "", &types.Pointer{ByteSize: v.ByteSize}
		}
	case *types.FuncProto:
		if v.ByteSize > 0 && inner != "" && !strings.HasPrefix(inner, "(") && !strings.HasPrefix(inner, "*") {
			// A Go func value: a pointer-sized word pointing at a closure.
			return "void *", nil
		}
		if v.Return != nil && voidLike(v.Return) {
			f := *v
			f.Return = nil // Rust's -> (), ! : no value
			return "", &f
		}
	case *types.Enum:
		if v.Name == "" {
			return "enum " + h.enumBody(v, "__anon_enum", indent), nil
		}
		return h.tagWord(v), nil
	case *types.Struct:
		if v.Name == "" {
			// Its members' offsets are asserted with its parent's.
			return kw(v) + " " + h.body(v, indent, "", nil), nil
		}
		return h.tagWord(v), nil
	}
	return "", nil
}
