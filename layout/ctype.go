package layout

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// cLike reports whether types of lang are spelled the C way (struct
// keywords, declarators around the name). Go, Rust and Zig keep their own
// names: *main.Node, [3]int16, &str.
func cLike(lang types.Lang) bool {
	switch lang {
	case types.LangGo, types.LangRust, types.LangZig:
		return false
	}
	return true
}

// typeName is the spelling of t on its own, as pahole writes it: "int",
// "struct list *", "const char  *", "char" for an array of char (the
// dimensions go with the declarator).
func typeName(t types.Type, lang types.Lang, depth int) string {
	if depth > types.MaxDepth {
		return "/* cycle */"
	}
	switch v := t.(type) {
	case nil, *types.Void:
		return "void"
	case *types.Base:
		return v.Name
	case *types.Typedef:
		return v.Name
	case *types.Pointer:
		if v.Name != "" && !cLike(lang) {
			return v.Name
		}
		suffix := "*"
		switch v.Ref {
		case 1:
			suffix = "&"
		case 2:
			suffix = "&&"
		}
		target := v.Target
		switch lang {
		case types.LangGo, types.LangZig:
			return "*" + typeName(target, lang, depth+1)
		case types.LangRust:
			return "*const " + typeName(target, lang, depth+1)
		}
		if target == nil {
			return "void " + suffix
		}
		if _, isVoid := target.(*types.Void); isVoid {
			return "void " + suffix
		}
		constPtr := ""
		if q, ok := target.(*types.Qualifier); ok && q.Kind == types.Const {
			if _, ok := q.Target.(*types.Pointer); ok {
				constPtr = "const "
				target = q.Target
			}
		}
		return typeName(target, lang, depth+1) + " " + constPtr + suffix
	case *types.Qualifier:
		inner := typeName(v.Target, lang, depth+1)
		switch v.Kind {
		case types.Const:
			return "const " + inner + " "
		case types.Volatile:
			return "volatile " + inner + " "
		case types.Restrict:
			return inner + " restrict "
		case types.Atomic:
			return "_Atomic " + inner + " "
		}
		return inner
	case *types.Array:
		if cLike(lang) {
			return typeName(v.Elem, lang, depth+1)
		}
		if v.Name != "" {
			return v.Name
		}
		n := ""
		if v.Count >= 0 {
			n = strconv.FormatInt(v.Count, 10)
		}
		if lang == types.LangRust {
			if n == "" {
				return "[" + typeName(v.Elem, lang, depth+1) + "]"
			}
			return "[" + typeName(v.Elem, lang, depth+1) + "; " + n + "]"
		}
		return "[" + n + "]" + typeName(v.Elem, lang, depth+1)
	case *types.FuncProto:
		if v.Name != "" && !cLike(lang) {
			return v.Name
		}
		return ftype(v, "", false, 0, lang, depth+1)
	case *types.Struct:
		if !cLike(lang) && v.Name != "" {
			return v.Name
		}
		return v.Kind.String() + " " + v.Name
	case *types.Enum:
		if !cLike(lang) && v.Name != "" {
			return v.Name
		}
		return "enum " + v.Name
	}
	return "?"
}

// ftype prints a function type with a name, as pahole's ftype__fprintf:
// the return type padded to spacing, then " (*name)(params)".
func ftype(f *types.FuncProto, name string, isPointer bool, spacing int, lang types.Lang, depth int) string {
	var b strings.Builder
	star := ""
	if isPointer {
		star = "*"
	}
	fmt.Fprintf(&b, "%-*s (%s%s)", spacing, typeName(f.Return, lang, depth+1), star, name)
	b.WriteString(params(f, lang, depth+1))
	return b.String()
}

func params(f *types.FuncProto, lang types.Lang, depth int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range f.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		if ptr, ok := p.Type.(*types.Pointer); ok && (ptr.Name == "" || cLike(lang)) {
			if fp, ok := ptr.Target.(*types.FuncProto); ok {
				b.WriteString(ftype(fp, p.Name, true, 0, lang, depth+1))
				continue
			}
		}
		b.WriteString(typeName(p.Type, lang, depth+1))
		if p.Name != "" {
			b.WriteString(" " + p.Name)
		}
	}
	switch {
	case len(f.Params) == 0:
		b.WriteString("void)")
	case f.Variadic:
		b.WriteString(", ...)")
	default:
		b.WriteByte(')')
	}
	return b.String()
}

// typeString is the spelling of a member's type for JSON and the native
// printers: "char[6]", "struct list *", "int (*)(void *, int)", "[3]int16".
func typeString(t types.Type, lang types.Lang) string {
	if d := declarator(t, lang, 0); d != "" {
		base := typeName(baseOfDeclarator(t), lang, 0)
		if strings.HasPrefix(d, "[") {
			return base + d
		}
		return base + " " + d
	}
	return strings.TrimSpace(typeName(t, lang, 0))
}

// declarator returns the part of an abstract C declarator that follows
// the base type ("[2][3]", "(*)(void *, int)"), or "".
func declarator(t types.Type, lang types.Lang, depth int) string {
	if depth > types.MaxDepth || !cLike(lang) {
		return ""
	}
	switch v := t.(type) {
	case *types.Array:
		if v.Name != "" && !cLike(lang) {
			return ""
		}
		dim := ""
		if v.Count > 0 {
			dim = strconv.FormatInt(v.Count, 10)
		}
		return "[" + dim + "]" + declarator(v.Elem, lang, depth+1)
	case *types.Pointer:
		if fp, ok := v.Target.(*types.FuncProto); ok && v.Ref == 0 {
			return "(*)" + params(fp, lang, depth+1)
		}
	}
	return ""
}

func baseOfDeclarator(t types.Type) types.Type {
	for i := 0; i < types.MaxDepth; i++ {
		switch v := t.(type) {
		case *types.Array:
			t = v.Elem
		case *types.Pointer:
			if fp, ok := v.Target.(*types.FuncProto); ok && v.Ref == 0 {
				return fp.Return
			}
			return t
		default:
			return t
		}
	}
	return t
}

// cHex formats v as C's "%#*x" does: 0 stays "0", others get "0x".
func cHex(v int64, width int) string {
	s := "0"
	if v != 0 {
		s = "0x" + strconv.FormatInt(v, 16)
	}
	return fmt.Sprintf("%*s", width, s)
}

func plural(n int64) string {
	if n != 1 {
		return "s"
	}
	return ""
}

// typeDeclSlot is typeDecl for a member whose anonymous type was analysed
// with the layout (Slot.Inner).
func (p *printer) typeDeclSlot(t types.Type, name string, noName bool, c *conf, pos *Slot) string {
	if st, ok := unqualified(t).(*types.Struct); ok && pos.Inner != nil && st.Name == "" {
		prefix := ""
		for q, ok := t.(*types.Qualifier); ok && q.Target != nil; q, ok = q.Target.(*types.Qualifier) {
			if q.Kind == types.Const || q.Kind == types.Volatile {
				prefix += q.Kind.String() + " "
			}
		}
		return prefix + p.composite(pos.Inner, name, noName, c)
	}
	return p.typeDecl(t, name, noName, c)
}

// typeDecl prints a declaration of name with type t, the type padded to
// the type column (pahole's type__fprintf). noName marks the member of a
// struct, union or enum type whose name the caller prints.
func (p *printer) typeDecl(t types.Type, name string, noName bool, c *conf) string {
	if c.depth > types.MaxDepth {
		return "/* too deep */ " + name
	}
	var b strings.Builder
	tc := *c
	tc.depth++
	if p.opts.Expand {
		expanded := false
		for i := 0; i < types.MaxDepth; i++ {
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
	for i := 0; i < types.MaxDepth; i++ {
		switch v := t.(type) {
		case *types.Qualifier:
			if v.Kind == types.Const && v.Target != nil {
				b.WriteString("const ")
				tc.typeSpacing -= 6
				t = v.Target
				continue
			}
		case *types.Pointer:
			if v.Name == "" || cLike(lang) {
				if fp, ok := v.Target.(*types.FuncProto); ok && v.Ref == 0 && (fp.Name == "" || cLike(lang)) {
					b.WriteString(ftype(fp, name, true, tc.typeSpacing, lang, tc.depth))
					return b.String()
				}
				if st, ok := v.Target.(*types.Struct); ok && st.Name == "" && v.Ref == 0 {
					if l := p.layoutOf(st, tc.depth); l != nil {
						tc.typeSpacing -= 8
						b.WriteString(p.composite(l, "* "+name, false, &tc))
						return b.String()
					}
				}
			}
		case *types.FuncProto:
			if v.Name == "" || cLike(lang) {
				b.WriteString(ftype(v, name, false, tc.typeSpacing, lang, tc.depth))
				return b.String()
			}
		case *types.Array:
			if cLike(lang) {
				b.WriteString(p.array(v, name, &tc))
				return b.String()
			}
		case *types.Struct:
			if p.inlineType(v) {
				if l := p.layoutOf(v, tc.depth); l != nil {
					b.WriteString(p.composite(l, name, noName, &tc))
					return b.String()
				}
			}
			if cLike(lang) {
				kw, w := "struct", tc.typeSpacing-7
				switch v.Kind {
				case types.KindUnion:
					kw, w = "union", tc.typeSpacing-6
				case types.KindClass:
					kw = "class"
				}
				fmt.Fprintf(&b, "%s %-*s %s", kw, w, v.Name, name)
				return b.String()
			}
		case *types.Enum:
			if v.Name == "" {
				b.WriteString(p.enumBody(v, name, noName, &tc))
				return b.String()
			}
			if cLike(lang) {
				fmt.Fprintf(&b, "enum %-*s %s", tc.typeSpacing-5, v.Name, name)
				return b.String()
			}
		}
		break
	}
	fmt.Fprintf(&b, "%-*s %s", tc.typeSpacing, typeName(t, lang, tc.depth), name)
	return b.String()
}

// composite prints an inline struct or union body; name, unless noName,
// follows the closing brace.
func (p *printer) composite(l *Layout, name string, noName bool, c *conf) string {
	var b strings.Builder
	tc := *c
	tc.prefix = ""
	tc.suffix, tc.hasSuffix = name, !noName
	tc.emitStats = false
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
	for i := 0; i < types.MaxDepth; i++ {
		v, ok := elem.(*types.Array)
		if !ok || (v.Name != "" && !cLike(p.lang)) {
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
	s := p.typeDecl(elem, name, false, c)
	single := c.lastMember && c.firstMember
	for _, n := range dims {
		if n != 0 || !c.lastMember || single || c.unionMember {
			s += fmt.Sprintf("[%d]", n)
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

// TypeString spells t as lang writes it: "string", "[]uint8", "*main.acc"
// for Go, "&str" or "u32" for Rust, "[]const u8" for Zig, a C abstract
// declarator ("char *", "int [4]") for C and C++.
func TypeString(t types.Type, lang types.Lang) string { return typeString(t, lang) }
