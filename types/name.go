package types

import (
	"strconv"
	"strings"
)

// Declare returns a C-style declaration of a variable or member called name
// of type t, as pahole prints members: "int a", "char buf[16]",
// "struct list_head * next", "int (*fn)(void *)". Named types keep their own
// spelling, so Go and Rust members read "uint64 valBits" or
// "&str name". name may be "" for an abstract declarator.
func Declare(t Type, name string) string {
	return declare(t, name, 0)
}

// TypeString returns the spelling of t alone (an abstract declarator).
func TypeString(t Type) string { return strings.TrimSpace(declare(t, "", 0)) }

func declare(t Type, inner string, depth int) string {
	if depth > MaxDepth {
		return "/* cycle */ " + inner
	}
	join := func(base string) string {
		if inner == "" {
			return base
		}
		return base + " " + inner
	}
	switch v := t.(type) {
	case nil, *Void:
		return join("void")
	case *Base:
		return join(v.Name)
	case *Typedef:
		return join(v.Name)
	case *Enum:
		if v.Name == "" {
			return join("enum " + anonBody(v))
		}
		if v.Lang == LangC || v.Lang == LangCPlusPlus || v.Lang == LangUnknown {
			return join("enum " + v.Name)
		}
		return join(v.Name)
	case *Struct:
		kw := v.Kind.String()
		if v.Name == "" {
			return join(kw + " " + anonBody(v))
		}
		// C and C++ spell the keyword; pahole does so for every language.
		return join(kw + " " + v.Name)
	case *Qualifier:
		q := v.Kind.String()
		if v.Kind == TypeTag {
			q = "__attribute__((btf_type_tag(\"" + v.Tag + "\")))"
		}
		if _, isPtr := v.Target.(*Pointer); isPtr {
			return declare(v.Target, q+" "+inner, depth+1)
		}
		return q + " " + declare(v.Target, inner, depth+1)
	case *Pointer:
		if v.Name != "" {
			return join(v.Name)
		}
		star := "*"
		switch v.Ref {
		case 1:
			star = "&"
		case 2:
			star = "&&"
		}
		switch Resolve(v.Target).(type) {
		case *FuncProto, *Array:
			if _, td := v.Target.(*Typedef); !td {
				return declare(v.Target, "("+star+inner+")", depth+1)
			}
		}
		return declare(v.Target, star+inner, depth+1)
	case *Array:
		if v.Name != "" {
			return join(v.Name)
		}
		dim := ""
		if v.Count >= 0 {
			dim = strconv.FormatInt(v.Count, 10)
		}
		return declare(v.Elem, inner+"["+dim+"]", depth+1)
	case *FuncProto:
		if v.Name != "" {
			return join(v.Name)
		}
		var ps []string
		for _, p := range v.Params {
			ps = append(ps, strings.TrimSpace(declare(p.Type, "", depth+1)))
		}
		if v.Variadic {
			ps = append(ps, "...")
		}
		if len(ps) == 0 {
			ps = []string{"void"}
		}
		return declare(v.Return, inner+"("+strings.Join(ps, ", ")+")", depth+1)
	}
	return join("?")
}

func anonBody(t Type) string { return "{...}" }
