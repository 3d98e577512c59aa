package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/binscope/binscope/types"
)

// WriteReorganized prints the suggested order of r as pahole -R does: the
// type in its new order, then a comment after the closing brace saying what
// was saved ("saved 16 bytes!", "saved 8 bytes and 1 cacheline!"), for Go
// how the pointer bytes changed, and r.Note when there is one. With
// opts.Native the type prints as WriteNative does.
func WriteReorganized(w io.Writer, r *Reorganized, opts *PrintOptions) error {
	if r == nil || r.Layout == nil || r.From == nil {
		return errors.New("layout: nothing to print (nil Reorganized)")
	}
	parts := r.comments()
	if opts != nil && opts.Native {
		var b strings.Builder
		nativeBody(&b, r.Layout, opts, strings.Join(parts, " "))
		_, err := io.WriteString(w, b.String())
		return err
	}
	var b bytes.Buffer
	newPrinter(r.Layout, opts).top(&b, r.Layout)
	b.WriteString(";")
	for i, c := range parts {
		if i == 0 {
			b.WriteString("  ")
		}
		b.WriteString(" /* " + c + " */")
	}
	b.WriteString("\n")
	_, err := w.Write(b.Bytes())
	return err
}

// comments are the texts after a reorganized type's closing brace.
func (r *Reorganized) comments() []string {
	var parts []string
	if s := r.Saved(); s > 0 {
		t := fmt.Sprintf("saved %d byte%s", s, plural(s))
		if c := r.SavedCachelines(); c > 0 {
			t += fmt.Sprintf(" and %d cacheline%s", c, plural(c))
		}
		parts = append(parts, t+"!")
	}
	if r.From.Lang == types.LangGo && r.From.PointerBytes != r.Layout.PointerBytes {
		parts = append(parts, fmt.Sprintf("pointer bytes: %d -> %d", r.From.PointerBytes, r.Layout.PointerBytes))
	}
	if r.Note != "" {
		parts = append(parts, r.Note)
	}
	return parts
}

// WriteSizes prints l as pahole -s does: name, size and number of holes
// (0 for a union), separated by tabs.
func WriteSizes(w io.Writer, l *Layout) error {
	holes := len(l.Holes)
	if l.Kind == types.KindUnion {
		holes = 0
	}
	_, err := fmt.Fprintf(w, "%s\t%d\t%d\n", l.Name, l.Size, holes)
	return err
}

// WritePackable prints r as pahole --packable does: name, size, size in
// the suggested order and bytes saved, separated by tabs.
func WritePackable(w io.Writer, r *Reorganized) error {
	_, err := fmt.Fprintf(w, "%s\t%d\t%d\t%d\n", r.From.Name, r.From.Size, r.Layout.Size, r.Saved())
	return err
}

type jsonType struct {
	Name         string        `json:"name"`
	Kind         string        `json:"kind"`
	Lang         string        `json:"lang"`
	Size         int64         `json:"size"`
	Align        int64         `json:"align"`
	Cachelines   int64         `json:"cachelines"`
	Members      []jsonMember  `json:"members"`
	Variants     []jsonVariant `json:"variants,omitempty"`
	Holes        []jsonHole    `json:"holes"`
	BitHoles     []jsonBitHole `json:"bit_holes"`
	Padding      int64         `json:"padding"`
	BitPadding   int64         `json:"bit_padding"`
	PointerBytes *int64        `json:"pointer_bytes,omitempty"`
	Decl         *jsonDecl     `json:"decl,omitempty"`
	Warning      string        `json:"warning,omitempty"`
}

type jsonMember struct {
	Name      string       `json:"name"`
	Type      string       `json:"type"`
	Offset    int64        `json:"offset"`
	Size      int64        `json:"size"`
	BitOffset *int64       `json:"bit_offset,omitempty"`
	BitSize   int64        `json:"bit_size,omitempty"`
	Members   []jsonMember `json:"members,omitempty"`
}

type jsonVariant struct {
	Name    string       `json:"name"`
	Discr   *json.Number `json:"discr,omitempty"`
	Default bool         `json:"default,omitempty"`
	Members []jsonMember `json:"members"`
}

type jsonHole struct {
	Offset int64 `json:"offset"`
	Size   int64 `json:"size"`
}

type jsonBitHole struct {
	BitOffset int64 `json:"bit_offset"`
	BitSize   int64 `json:"bit_size"`
}

type jsonDecl struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// WriteJSON prints ls as a JSON array, one object per type, members in
// memory order:
//
//	{"name": "main.counter", "kind": "struct", "lang": "go", "size": 72,
//	 "align": 8, "cachelines": 2,
//	 "members": [{"name": "valBits", "type": "uint64", "offset": 0, "size": 8}, ...],
//	 "holes": [{"offset": 4, "size": 4}],
//	 "bit_holes": [{"bit_offset": 10, "bit_size": 22}], "padding": 0,
//	 "bit_padding": 0, "pointer_bytes": 8, "decl": {"file": "x.go", "line": 3}}
//
// A bitfield member also has "bit_offset" (bits from the start of the type)
// and "bit_size"; its "offset" is the byte holding its first bit and its
// "size" that of its declared type. Members of an anonymous struct or union
// member are listed in its "members", offsets from the start of the outer
// type. A Rust enum ("kind": "enum") lists its tag among "members" and its
// variants in "variants", each with "name", "discr" (or "default": true)
// and its fields at offsets from the start of the enum. "pointer_bytes"
// appears for Go types, "decl" where the declaration is known and "warning"
// when Layout.Warning is set. Offsets and sizes are in bytes.
func WriteJSON(w io.Writer, ls []*Layout, opts *PrintOptions) error {
	out := make([]jsonType, 0, len(ls))
	for _, l := range ls {
		out = append(out, toJSON(l))
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func toJSON(l *Layout) jsonType {
	j := jsonType{
		Name:       l.Name,
		Kind:       l.Kind.String(),
		Lang:       l.Lang.String(),
		Size:       l.Size,
		Align:      l.Align,
		Cachelines: l.Cachelines,
		Members:    []jsonMember{},
		Holes:      []jsonHole{},
		BitHoles:   []jsonBitHole{},
		Padding:    l.Padding,
		BitPadding: int64(l.BitPadding),
		Warning:    l.Warning,
	}
	if l.IsEnum() {
		j.Kind = "enum"
	}
	if l.Tag != nil {
		j.Members = append(j.Members, jsonMembers([]Slot{*l.Tag}, 0, l.Lang)...)
	}
	j.Members = append(j.Members, jsonMembers(l.Members, 0, l.Lang)...)
	for i := range l.Variants {
		v := &l.Variants[i]
		jv := jsonVariant{Name: v.Name, Default: v.Default, Members: jsonMembers(v.Members, 0, l.Lang)}
		if !v.Default {
			d := json.Number(v.DiscrString())
			jv.Discr = &d
		}
		j.Variants = append(j.Variants, jv)
	}
	for _, h := range l.Holes {
		j.Holes = append(j.Holes, jsonHole{h.Offset, h.Size})
	}
	for _, h := range l.BitHoles {
		j.BitHoles = append(j.BitHoles, jsonBitHole{int64(h.Offset), int64(h.Size)})
	}
	if l.Lang == types.LangGo {
		pb := l.PointerBytes
		j.PointerBytes = &pb
	}
	if d := l.Type.Decl; d.File != "" {
		j.Decl = &jsonDecl{d.File, d.Line}
	}
	return j
}

func jsonMembers(ss []Slot, base int64, lang types.Lang) []jsonMember {
	out := make([]jsonMember, 0, len(ss))
	for i := range ss {
		s := &ss[i]
		m := jsonMember{
			Name:   s.Member.Name,
			Type:   memberType(s.Member.Type, lang),
			Offset: base + s.Offset,
			Size:   s.Size,
		}
		if s.IsBitfield() {
			bo := int64(s.BitOffset) + base*8
			m.BitOffset = &bo
			m.BitSize = int64(s.BitSize)
		}
		if s.Inner != nil {
			m.Members = jsonMembers(s.Inner.Members, base+s.Offset, lang)
		}
		out = append(out, m)
	}
	return out
}

// memberType spells a member's type for JSON: an anonymous struct or
// union reads "union {...}".
func memberType(t types.Type, lang types.Lang) string {
	if st, ok := t.(*types.Struct); ok && st.Name == "" {
		return st.Kind.String() + " {...}"
	}
	return TypeString(t, lang)
}
