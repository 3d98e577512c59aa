package codegen

import (
	"strings"

	"github.com/binscope/binscope/types"
)

// Declarators: a C declaration of a name with a type.

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
