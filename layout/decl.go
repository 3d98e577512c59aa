package layout

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/binscope/binscope/types"
)

// cHex formats v as C's "%#*x" does: 0 stays "0", others get "0x".
func cHex(v int64, width int) string {
	s := "0"
	if v != 0 {
		s = "0x" + strconv.FormatInt(v, 16)
	}
	return padLeft(s, width)
}

// padLeft is fmt's "%*s": s right-aligned in width runes, left-aligned in
// -width when width is negative.
func padLeft(s string, width int) string {
	n := utf8.RuneCountInString(s)
	switch {
	case width < 0 && -width > n:
		return s + spaces(-width-n)
	case width > n:
		return spaces(width-n) + s
	}
	return s
}

// writePadRight writes s as fmt's "%-*s" does: left-aligned in |width|
// runes.
func writePadRight(b *bytes.Buffer, s string, width int) {
	b.WriteString(s)
	if width < 0 {
		width = -width
	}
	if n := utf8.RuneCountInString(s); width > n {
		b.WriteString(spaces(width - n))
	}
}

// gap is fmt.Sprintf("%*s", width, " "): at least one space.
func gap(width int) string { return spaces(max(width, -width, 1)) }

const manySpaces = "                                                                                "

func spaces(n int) string {
	if n <= len(manySpaces) {
		return manySpaces[:n]
	}
	return strings.Repeat(" ", n)
}

// padInt is fmt's "%*d".
func padInt(v int64, width int) string { return padLeft(strconv.FormatInt(v, 10), width) }

func plural(n int64) string {
	if n != 1 {
		return "s"
	}
	return ""
}

// typeDeclSlot is typeDecl for a member whose anonymous type was analysed
// with the layout (Slot.Inner).
func (p *printer) typeDeclSlot(t types.Type, name string, noName bool, c *conf, pos *Slot) string {
	if st, ok := types.Unqualified(t).(*types.Struct); ok && pos.Inner != nil && st.Name == "" {
		prefix := ""
		var w types.Walk
		for q, ok := t.(*types.Qualifier); ok && q.Target != nil && w.Enter(q); q, ok = q.Target.(*types.Qualifier) {
			if q.Kind == types.Const || q.Kind == types.Volatile {
				prefix += q.Kind.String() + " "
			}
		}
		return prefix + p.composite(pos.Inner, name, noName, c)
	}
	return p.typeDecl(t, name, noName, c)
}

// pointee prints, for -p, a member that points to a struct (through any
// number of pointers) as pahole does: the struct's body, its members
// without offsets, then the name with a star per pointer ("} **name");
// a struct being expanded already on the way (struct self_ref's next) by
// its name. It reports false for a type that is no such pointer.
func (p *printer) pointee(b *bytes.Buffer, t types.Type, name string, c *conf) bool {
	n := 0
	for w := (types.Walk{}); w.Enter(t); n++ {
		ptr, ok := t.(*types.Pointer)
		if !ok || ptr.Ref != 0 || ptr.Target == nil {
			break
		}
		if _, fn := ptr.Target.(*types.FuncProto); fn {
			break
		}
		t = ptr.Target
	}
	st, ok := t.(*types.Struct)
	if n == 0 || !ok {
		return false
	}
	name = strings.Repeat("*", n) + name
	if !st.Incomplete && st.Variants == nil && !slices.Contains(p.expanding, st) {
		if l := p.layoutOf(st); l != nil {
			p.expanding = append(p.expanding, st)
			tc := *c
			tc.noOffsets = true
			b.WriteString(p.composite(l, name, false, &tc))
			p.expanding = p.expanding[:len(p.expanding)-1]
			return true
		}
	}
	fmt.Fprintf(b, "%-*s %s", c.typeSpacing, TypeString(st, p.lang), name)
	return true
}

// typeDecl prints a declaration of name with type t, the type padded to
// the type column (pahole's type__fprintf). noName marks the member of a
// struct, union or enum type whose name the caller prints.
func (p *printer) typeDecl(t types.Type, name string, noName bool, c *conf) string {
	var b bytes.Buffer
	p.typeDeclTo(&b, t, name, noName, c)
	return b.String()
}

// typeDeclTo is typeDecl written to b.
func (p *printer) typeDeclTo(b *bytes.Buffer, t types.Type, name string, noName bool, c *conf) {
	if p.opts.ExpandPointers && p.pointee(b, t, name, c) {
		return // bounded by p.expanding, not by the walk
	}
	if !p.walk.Enter(t) {
		b.WriteString("/* too deep */ " + name)
		return
	}
	p.typeDeclEntered(b, t, name, noName, c)
	p.walk.Leave()
}

func (p *printer) typeDeclEntered(b *bytes.Buffer, t types.Type, name string, noName bool, c *conf) {
	tc := *c
	if p.opts.Expand {
		expanded := false
		for w := (types.Walk{}); w.Enter(t); {
			td, ok := t.(*types.Typedef)
			if !ok {
				break
			}
			if expanded {
				b.WriteString(" -> " + td.Name)
			} else {
				b.WriteString("/* typedef " + td.Name)
				expanded = true
			}
			t = td.Target
		}
		if expanded {
			b.WriteString(" */ ")
		}
	}
	lang := p.lang
	for w := (types.Walk{}); w.Enter(t); {
		switch v := t.(type) {
		case *types.Qualifier:
			if v.Kind == types.Const && v.Target != nil {
				b.WriteString("const ")
				tc.typeSpacing -= 6
				tc.keepStats = constAnon(t)
				t = v.Target
				continue
			}
		case *types.Pointer:
			if v.Name == "" || lang.CLike() {
				if fp, ok := v.Target.(*types.FuncProto); ok && v.Ref == 0 && (fp.Name == "" || lang.CLike()) {
					b.WriteString(types.PaholeFunc(fp, name, true, tc.typeSpacing, lang))
					return
				}
				if st, ok := v.Target.(*types.Struct); ok && st.Name == "" && v.Ref == 0 {
					if l := p.layoutOf(st); l != nil {
						tc.typeSpacing -= 8
						// The pointed-to struct is another object: its
						// members' offsets start at 0, not at the
						// pointer's offset in the outer type.
						tc.baseOffset = 0
						b.WriteString(p.composite(l, "* "+name, false, &tc))
						return
					}
				}
			}
		case *types.FuncProto:
			if v.Name == "" || lang.CLike() {
				b.WriteString(types.PaholeFunc(v, name, false, tc.typeSpacing, lang))
				return
			}
		case *types.Array:
			if lang.CLike() {
				b.WriteString(p.array(v, name, &tc))
				return
			}
		case *types.Struct:
			if p.inlineType(v) {
				if l := p.layoutOf(v); l != nil {
					b.WriteString(p.composite(l, name, noName, &tc))
					return
				}
			}
			if lang.CLike() {
				kw, w := "struct", tc.typeSpacing-7
				switch v.Kind {
				case types.KindUnion:
					kw, w = "union", tc.typeSpacing-6
				case types.KindClass:
					kw = "class"
				}
				b.WriteString(kw + " ")
				writePadRight(b, v.Name, w)
				b.WriteString(" " + name)
				return
			}
		case *types.Enum:
			if v.Name == "" {
				b.WriteString(p.enumBody(v, name, noName, &tc))
				return
			}
			if lang.CLike() {
				b.WriteString("enum ")
				writePadRight(b, v.Name, tc.typeSpacing-5)
				b.WriteString(" " + name)
				return
			}
		}
		break
	}
	writePadRight(b, types.PaholeName(t, lang), tc.typeSpacing)
	b.WriteString(" ")
	b.WriteString(name)
}

// composite prints an inline struct or union body; name, unless noName,
// follows the closing brace.
func (p *printer) composite(l *Layout, name string, noName bool, c *conf) string {
	var b bytes.Buffer
	tc := *c
	tc.prefix = ""
	tc.suffix, tc.hasSuffix = name, !noName && (name != "" || !c.keepStats)
	tc.emitStats, tc.keepStats = c.keepStats && c.emitStats, false
	if l.Kind == types.KindUnion {
		tc.typeSpacing -= 8
		p.union(&b, l, &tc)
	} else {
		tc.typeSpacing -= 8
		p.class(&b, l, &tc)
	}
	return b.String()
}

// array prints an array member: its element's declaration, then the
// dimensions (pahole's array_type__fprintf). A flexible or zero-length
// last member prints "[]".
func (p *printer) array(a *types.Array, name string, c *conf) string {
	var dims []int64
	var elem types.Type = a
	for w := (types.Walk{}); w.Enter(elem); {
		v, ok := elem.(*types.Array)
		if !ok || (v.Name != "" && !p.lang.CLike()) {
			break
		}
		dims = append(dims, max(v.Count, 0))
		elem = v.Elem
	}
	if len(dims) > 0 && dims[0] == 0 {
		if q, ok := elem.(*types.Qualifier); ok && q.Kind == types.Const {
			elem = q.Target
		}
	}
	if p.opts.FlatArrays && len(dims) > 1 {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		dims = []int64{n}
	}
	s := p.typeDecl(elem, name, false, c)
	single := c.lastMember && c.firstMember
	for _, n := range dims {
		if n != 0 || !c.lastMember || single || c.unionMember {
			s += "[" + strconv.FormatInt(n, 10) + "]"
		} else {
			s += "[]"
		}
	}
	return s
}

// enumBody prints an anonymous enum inline (pahole's enumeration__fprintf).
func (p *printer) enumBody(e *types.Enum, name string, noName bool, c *conf) string {
	var b strings.Builder
	b.WriteString("enum")
	if e.Name != "" {
		b.WriteString(" " + e.Name)
	}
	if len(e.Values) == 0 {
		return b.String()
	}
	b.WriteString(" {\n")
	width := 0
	for _, v := range e.Values {
		width = max(width, len(v.Name))
	}
	for _, v := range e.Values {
		fmt.Fprintf(&b, "%s\t%-*s = ", tabs(c.indent), width, v.Name)
		switch {
		case p.opts.Hex:
			b.WriteString(cHex(v.Value, 0))
		case e.Signed:
			fmt.Fprintf(&b, "%d", v.Value)
		default:
			fmt.Fprintf(&b, "%d", uint64(v.Value))
		}
		b.WriteString(",\n")
	}
	b.WriteString(tabs(c.indent) + "}")
	if e.ByteSize != 4 {
		b.WriteString(" __attribute__((__packed__))")
	}
	if !noName && name != "" {
		b.WriteString(" " + name)
	}
	return b.String()
}

// TypeString spells t as pahole's printers do (types.SyntaxPahole):
// "string", "[]uint8", "*main.acc" for Go, "&str" or "u32" for Rust,
// "[]const u8" for Zig, pahole's abstract declarator ("const char  *",
// "int[4]") for C and C++.
func TypeString(t types.Type, lang types.Lang) string {
	return types.Spell(t, lang, types.SyntaxPahole)
}

// WriteDecl prints a typedef or an enum that -C names as pahole does:
// "typedef struct _IO_FILE FILE;", "typedef void (*sighandler_t)(int);",
// an enum's body with its enumerators.
func WriteDecl(w io.Writer, t types.Type, opts *PrintOptions) error {
	p := &printer{cl: DefaultCachelineSize}
	if opts != nil {
		p.opts = *opts
	}
	expand := p.opts.Expand
	p.opts.Expand = false // pahole -E prints a typedef's target by name too
	var s string
	switch v := t.(type) {
	case *types.Typedef:
		p.lang = v.Lang
		switch tt := v.Target.(type) {
		case *types.Struct:
			// a named one (an anonymous one is printed as its struct)
			s = "typedef " + TypeString(tt, v.Lang) + " " + v.Name
		case *types.Array:
			// pahole spells an array typedef as a member: the element
			// type in the type column, expanded by -E
			p.opts.Expand = expand
			s = "typedef " + p.typeDecl(tt, v.Name, false, &conf{typeSpacing: 26})
		default:
			s = "typedef " + p.typeDecl(v.Target, v.Name, false, &conf{})
		}
	case *types.Enum:
		p.lang = v.Lang
		s = p.enumBody(v, "", true, &conf{})
	default:
		return fmt.Errorf("%s is not a typedef or an enum", types.TypeString(t))
	}
	_, err := io.WriteString(w, s+";\n")
	return err
}
