package types

import (
	"strconv"
	"strings"
)

// Spelling types: one engine, three syntaxes.
//
//   - SyntaxC: C's declarator grammar, the name inside the type ("int
//     (*fn)(void *)", "char buf[16]", "struct list_head *next"), leaves with
//     the loader's names. CSpeller is the engine; codegen gives it its own
//     words for leaves to write compilable C.
//   - SyntaxNative: each language's own syntax: Go's "*main.T" and "[4]int",
//     Rust's "[u8; 4]" and "*const T", Zig's "[]const u8"; C and C++ as
//     SyntaxC.
//   - SyntaxPahole: pahole's spelling of C and C++ (dwarves' type__name:
//     "const char  *", "struct list *", "int (*)(void *, int)", "char[6]"),
//     and Go, Rust and Zig as SyntaxNative.

// Syntax is a way of writing types (see Spell).
type Syntax uint8

const (
	SyntaxC Syntax = iota
	SyntaxNative
	SyntaxPahole
)

// Spell returns t written in syntax s as an abstract declarator (no name),
// for a type of language lang: "char *", "[]uint8", "&str", "char[6]".
func Spell(t Type, lang Lang, s Syntax) string {
	switch {
	case s == SyntaxC, s == SyntaxNative && lang.CLike():
		return TypeString(t)
	}
	p := pahole{lang: lang}
	return p.abstract(t)
}

// CLike reports whether types of l are spelled the C way (struct keywords,
// declarators around the name). Go, Rust and Zig keep their own names:
// *main.Node, [3]int16, &str.
func (l Lang) CLike() bool {
	switch l {
	case LangGo, LangRust, LangZig:
		return false
	}
	return true
}

// Declare returns a C declaration of a variable or member called name of
// type t (SyntaxC): "int a", "char buf[16]", "struct list_head *next",
// "int (*fn)(void *)". Named types keep their loader's spelling, so Go and
// Rust members read "uint64 valBits" or "&str name"; C++ references keep
// their & and &&. name may be "" for an abstract declarator.
func Declare(t Type, name string) string {
	c := CSpeller{Word: loaderWord, Refs: true}
	return c.Declare(t, name)
}

// TypeString returns the spelling of t alone (an abstract declarator,
// SyntaxC).
func TypeString(t Type) string { return strings.TrimSpace(Declare(t, "")) }

// loaderWord spells Go's, Rust's and Zig's pointers, arrays and function
// types by the names their loaders recorded, as the languages write them.
func loaderWord(t Type, _ string) (string, Type) {
	switch v := t.(type) {
	case *Pointer:
		return v.Name, nil
	case *Array:
		return v.Name, nil
	case *FuncProto:
		return v.Name, nil
	}
	return "", nil
}

// A CSpeller writes C declarators: the declarator built so far around the
// name ("inner": "p", "*p", "x[3]", "" for an abstract declarator) is
// wrapped by each pointer, array and function type on the way to the type
// that ends it, with parentheses where C needs them ("(*p)[3]").
type CSpeller struct {
	// Word, when not nil, is asked first about every type met, with the
	// declarator built so far. It returns the words that spell t whole
	// ("struct foo", "unsigned int", an inline body), or a type to write
	// in t's place, or neither to let the engine go on: qualifiers,
	// pointers, arrays and function types are taken apart, void is
	// "void", base types and typedefs are their names, structs, unions
	// and enums their keyword and name.
	Word func(t Type, inner string) (word string, instead Type)
	// Refs keeps C++ references (& and &&); without it they are pointers,
	// as C has no references.
	Refs bool
	// Unprototyped writes a function whose only parameter is "..." as f(),
	// C's unspecified parameters; without it, f(...).
	Unprototyped bool
}

// Declare returns the declaration of name with type t ("" for an abstract
// declarator). A type met again on its own path (a cycle no loader
// broke) is written "/* cycle */".
func (c *CSpeller) Declare(t Type, name string) string {
	var w Walk
	return c.declare(t, name, &w)
}

// join puts the words of a type before the declarator built so far.
func join(words, inner string) string {
	if inner == "" {
		return words
	}
	return words + " " + inner
}

func (c *CSpeller) declare(t Type, inner string, w *Walk) string {
	if !w.Enter(t) {
		return join(cycleWord, inner)
	}
	s := c.declareEntered(t, inner, w)
	w.Leave()
	return s
}

func (c *CSpeller) declareEntered(t Type, inner string, w *Walk) string {
	if c.Word != nil {
		word, instead := c.Word(t, inner)
		if word != "" {
			return join(word, inner)
		}
		if instead != nil {
			return c.declare(instead, inner, w)
		}
	}
	switch v := t.(type) {
	case nil, *Void:
		return join("void", inner)
	case *Base:
		return join(v.Name, inner)
	case *Typedef:
		return join(v.Name, inner)
	case *Enum:
		if v.Name == "" {
			return join("enum {...}", inner)
		}
		if v.Lang == LangC || v.Lang == LangCPlusPlus || v.Lang == LangUnknown {
			return join("enum "+v.Name, inner)
		}
		return join(v.Name, inner)
	case *Struct:
		if v.Name == "" {
			return join(v.Kind.String()+" {...}", inner)
		}
		// C and C++ spell the keyword; pahole does so for every language.
		return join(v.Kind.String()+" "+v.Name, inner)
	case *Qualifier:
		if qualified(v.Target, v.Kind) {
			return c.declare(v.Target, inner, w) // const const: C applies an array's qualifiers to its elements
		}
		q := v.Kind.String()
		if v.Kind == TypeTag {
			q = "__attribute__((btf_type_tag(\"" + v.Tag + "\")))"
		}
		if _, isPtr := Unqualified(v.Target).(*Pointer); isPtr {
			return c.declare(v.Target, join(q, inner), w) // char *const p
		}
		return q + " " + c.declare(v.Target, inner, w)
	case *Pointer:
		star := "*"
		if c.Refs {
			switch v.Ref {
			case 1:
				star = "&"
			case 2:
				star = "&&"
			}
		}
		return c.declare(v.Target, star+inner, w)
	case *Array:
		dim := ""
		if v.Count >= 0 {
			dim = strconv.FormatInt(v.Count, 10)
		}
		return c.declare(v.Elem, pointed(inner)+"["+dim+"]", w)
	case *FuncProto:
		var ps []string
		for _, p := range v.Params {
			ps = append(ps, c.declare(p.Type, "", w))
		}
		switch {
		case v.Variadic && (len(ps) > 0 || !c.Unprototyped):
			ps = append(ps, "...")
		case v.Variadic: // f(...): C before C23 spells unspecified parameters ()
		case len(ps) == 0:
			ps = []string{"void"}
		}
		return c.declare(v.Return, pointed(inner)+"("+strings.Join(ps, ", ")+")", w)
	}
	return join("?", inner)
}

// pointed puts parentheses around a declarator that starts with a pointer
// before an array's or a function's suffix binds to it: a pointer to an
// array is (*p)[3], not *p[3] (an array of pointers).
func pointed(inner string) string {
	if strings.HasPrefix(inner, "*") || strings.HasPrefix(inner, "&") {
		return "(" + inner + ")"
	}
	return inner
}

// qualified reports whether t, or the element of the array t is, already
// carries the qualifier k (C applies an array's qualifiers to its
// elements).
func qualified(t Type, k QualKind) bool {
	for w := (Walk{}); w.Enter(t); {
		switch v := t.(type) {
		case *Qualifier:
			if v.Kind == k {
				return true
			}
			t = v.Target
		case *Array:
			t = v.Elem
		default:
			return false
		}
	}
	return false
}
