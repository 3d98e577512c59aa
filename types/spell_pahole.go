package types

import (
	"fmt"
	"strconv"
	"strings"
)

// SyntaxPahole and SyntaxNative: pahole's type__name for C and C++, each
// language's own syntax for Go, Rust and Zig.

// PaholeName is the spelling of t on its own, as pahole's type__name writes
// it for a type of language lang: "int", "struct list *", "const char  *",
// "char" for an array of char (pahole prints the dimensions after the
// member's name); Go, Rust and Zig types in their own syntax ("*main.T",
// "[u8; 4]").
func PaholeName(t Type, lang Lang) string {
	p := pahole{lang: lang}
	return p.name(t)
}

// PaholeFunc writes a function type with a name as pahole's ftype__fprintf
// does: the return type padded to width, then " (name)(params)", or
// " (*name)(params)" for a pointer to f.
func PaholeFunc(f *FuncProto, name string, pointer bool, width int, lang Lang) string {
	p := pahole{lang: lang}
	return p.funcEntered(f, name, pointer, width)
}

// PaholeMethod writes a C++ member function's declaration as pahole's
// function__fprintf does: the return type, the name, then the parameters
// ("void finish(class AgentTimeoutCB *, int)").
func PaholeMethod(f *FuncProto, name string, lang Lang) string {
	p := pahole{lang: lang}
	if !p.w.Enter(f) {
		return cycleWord
	}
	defer p.w.Leave()
	return p.name(f.Return) + " " + name + p.params(f)
}

// PaholeFuncTagged is PaholeMethod with each parameter's decl tags
// (tags(i), nil for none) before its type, as pfunct prints a function
// read from BTF: "void qux(param_a int arg)".
func PaholeFuncTagged(f *FuncProto, name string, lang Lang, tags func(i int) []string) string {
	p := pahole{lang: lang, tags: tags}
	if !p.w.Enter(f) {
		return cycleWord
	}
	defer p.w.Leave()
	return p.name(f.Return) + " " + name + p.params(f)
}

// pahole spells one type; its Walk guards the recursion.
type pahole struct {
	lang Lang
	w    Walk
	// tags, when not nil, are the decl tags of the parameters of the
	// function PaholeFuncTagged spells.
	tags func(i int) []string
}

const cycleWord = "/* cycle */"

func (p *pahole) name(t Type) string {
	switch v := t.(type) {
	case nil, *Void:
		return "void"
	case *Base:
		return v.Name
	case *Typedef:
		return v.Name
	}
	if !p.w.Enter(t) {
		return cycleWord
	}
	s := p.nameEntered(t)
	p.w.Leave()
	return s
}

// nameEntered spells the types name does not end the walk with.
func (p *pahole) nameEntered(t Type) string {
	native := !p.lang.CLike()
	switch v := t.(type) {
	case *Pointer:
		if v.Name != "" && native {
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
		switch p.lang {
		case LangGo, LangZig:
			return "*" + p.name(target)
		case LangRust:
			return "*const " + p.name(target)
		}
		if target == nil {
			return "void " + suffix
		}
		if _, isVoid := target.(*Void); isVoid {
			return "void " + suffix
		}
		constPtr := ""
		if q, ok := target.(*Qualifier); ok && q.Kind == Const {
			if _, ok := q.Target.(*Pointer); ok {
				constPtr = "const "
				target = q.Target
			}
		}
		return p.name(target) + " " + constPtr + suffix
	case *Qualifier:
		inner := p.name(v.Target)
		switch v.Kind {
		case Const:
			return "const " + inner + " "
		case Volatile:
			return "volatile " + inner + " "
		case Restrict:
			return inner + " restrict "
		case Atomic:
			return "_Atomic " + inner + " "
		}
		return inner
	case *Array:
		if !native {
			return p.name(v.Elem)
		}
		if v.Name != "" {
			return v.Name
		}
		n := ""
		if v.Count >= 0 {
			n = strconv.FormatInt(v.Count, 10)
		}
		if p.lang == LangRust {
			if n == "" {
				return "[" + p.name(v.Elem) + "]"
			}
			return "[" + p.name(v.Elem) + "; " + n + "]"
		}
		return "[" + n + "]" + p.name(v.Elem)
	case *FuncProto:
		if v.Name != "" && native {
			return v.Name
		}
		return p.funcType(v, "", false, 0)
	case *Struct:
		if native && v.Name != "" {
			return v.Name
		}
		return v.Kind.String() + " " + v.Name
	case *Enum:
		if native && v.Name != "" {
			return v.Name
		}
		return "enum " + v.Name
	}
	return "?"
}

// funcEntered is funcType for a function type not yet on the walk's path.
func (p *pahole) funcEntered(f *FuncProto, name string, pointer bool, width int) string {
	if !p.w.Enter(f) {
		return cycleWord
	}
	defer p.w.Leave()
	return p.funcType(f, name, pointer, width)
}

// funcType is pahole's ftype__fprintf (see PaholeFunc).
func (p *pahole) funcType(f *FuncProto, name string, pointer bool, width int) string {
	star := ""
	if pointer {
		star = "*"
	}
	return fmt.Sprintf("%-*s (%s%s)", width, p.name(f.Return), star, name) + p.params(f)
}

func (p *pahole) params(f *FuncProto) string {
	var b strings.Builder
	b.WriteByte('(')
	tags := p.tags
	p.tags = nil // the function's own parameters only
	for i, prm := range f.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		if tags != nil {
			for _, t := range tags(i) {
				b.WriteString(t + " ")
			}
		}
		if ptr, ok := prm.Type.(*Pointer); ok && (ptr.Name == "" || p.lang.CLike()) {
			if fp, ok := ptr.Target.(*FuncProto); ok {
				b.WriteString(p.funcEntered(fp, prm.Name, true, 0))
				continue
			}
		}
		b.WriteString(p.name(prm.Type))
		if prm.Name != "" {
			b.WriteString(" " + prm.Name)
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

// abstract is the spelling of a member's type for JSON and the native
// printers: "char[6]", "struct list *", "int (*)(void *, int)", "[3]int16".
func (p *pahole) abstract(t Type) string {
	if d := p.declarator(t); d != "" {
		base := p.name(p.declaratorBase(t))
		if strings.HasPrefix(d, "[") {
			return base + d
		}
		return base + " " + d
	}
	return strings.TrimSpace(p.name(t))
}

// declarator returns the part of an abstract C declarator that follows
// the base type ("[2][3]", "(*)(void *, int)"), or "".
func (p *pahole) declarator(t Type) string {
	if !p.lang.CLike() || !p.w.Enter(t) {
		return ""
	}
	defer p.w.Leave()
	switch v := t.(type) {
	case *Array:
		dim := ""
		if v.Count > 0 {
			dim = strconv.FormatInt(v.Count, 10)
		}
		return "[" + dim + "]" + p.declarator(v.Elem)
	case *Pointer:
		if fp, ok := v.Target.(*FuncProto); ok && v.Ref == 0 {
			return "(*)" + p.params(fp)
		}
	}
	return ""
}

// declaratorBase is the type declarator's suffix follows: an array's
// element, a function pointer's return type.
func (p *pahole) declaratorBase(t Type) Type {
	for w := (Walk{}); w.Enter(t); {
		switch v := t.(type) {
		case *Array:
			t = v.Elem
		case *Pointer:
			if fp, ok := v.Target.(*FuncProto); ok && v.Ref == 0 {
				return fp.Return
			}
			return t
		default:
			return t
		}
	}
	return t
}
