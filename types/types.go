// Package types is the language- and format-neutral model of a binary's
// types: structs, unions, classes, enums, Rust enums with their variants,
// typedefs, pointers, arrays, function types and qualifiers (types.go),
// their sizes, alignments and Go pointer bytes (size.go), the named types of
// one file (Spec), and the records the model of code hands out (Func with
// its instances, inline expansions and clones, Param with its location at
// entry, Line, Var; funcs.go).
//
// Loaders (package dwarf for ELF+DWARF, package btf for BTF) build values of
// this package; views (layout, funcs, codegen, probe) read them and never
// learn which format a type came from. The package depends on the standard
// library only.
//
// Types form a graph: a Go struct may hold a pointer to itself, so every walk
// over Type values goes through a Walk, which remembers the types on its path
// and bounds its depth (MaxDepth). Checker rejects, as the loaders hand types
// out, the graphs no compiler emits. Spell, Declare and CSpeller write types in
// C, in each language's own syntax, and as pahole does.
package types

import "fmt"

// MaxDepth bounds the path of every Walk over a type graph. No real type
// nests deeper; a walk that reaches it has met a cycle that a loader did not
// break.
const MaxDepth = 64

// Bits is a length or an offset in bits. Byte quantities are plain int64.
type Bits int64

// Bytes returns b in whole bytes, rounding down.
func (b Bits) Bytes() int64 { return int64(b) / 8 }

// Lang is the source language a type or a compile unit was written in.
type Lang uint8

const (
	LangUnknown Lang = iota
	LangC
	LangCPlusPlus
	LangGo
	LangRust
	LangZig
	LangAsm
)

var langNames = [...]string{"unknown", "c", "c++", "go", "rust", "zig", "asm"}

func (l Lang) String() string {
	if int(l) < len(langNames) {
		return langNames[l]
	}
	return fmt.Sprintf("lang(%d)", uint8(l))
}

// ParseLang maps a user-facing language name (as String prints it, plus
// "cpp") to a Lang.
func ParseLang(s string) (Lang, error) {
	switch s {
	case "cpp", "cxx":
		return LangCPlusPlus, nil
	}
	for i, n := range langNames {
		if n == s {
			return Lang(i), nil
		}
	}
	return LangUnknown, fmt.Errorf("unknown language %q (want c, c++, go, rust, zig)", s)
}

// Decl is where a type was declared, when the loader knows it.
type Decl struct {
	File string
	Line int
}

// Type is any type of the model. The concrete types are *Void, *Base,
// *Pointer, *Typedef, *Qualifier, *Array, *Enum, *Struct and *FuncProto.
type Type interface {
	// TypeName is the name as the type's language writes it, qualified
	// (github.com/x/y.T, layouts::Holey, ns::C<int>); "" when anonymous.
	TypeName() string
	isType()
}

// Void is C's void, Rust's () and the target of an untyped pointer.
type Void struct{}

// Encoding says how a base type's bits are read.
type Encoding uint8

const (
	Unsigned Encoding = iota
	Signed
	Bool
	Char         // signed or unsigned character, as C's char
	UnsignedChar // unsigned char, u8 in the languages that call it so
	Float
	Complex
	UTF // Unicode code point (Rust char, C char32_t)
)

// Base is an integer, boolean, character or floating-point type.
type Base struct {
	Name     string
	ByteSize int64
	Encoding Encoding
}

// Pointer is a pointer or a C++ reference. Go, Rust and Zig pointers are
// Pointers too; Name keeps their own spelling (*main.T, &mut u8, *const u8)
// where the loader had one.
type Pointer struct {
	Name     string
	Target   Type
	ByteSize int64
	// Ref is 1 for a C++ lvalue reference (&) and 2 for an rvalue reference (&&).
	Ref uint8
}

// Typedef names another type.
type Typedef struct {
	Name   string
	Target Type
	Lang   Lang
	Decl   Decl
	// Tags are BTF declaration tags (btf_decl_tag("...")) on the typedef.
	Tags []string
}

// QualKind is the kind of a Qualifier.
type QualKind uint8

const (
	Const QualKind = iota
	Volatile
	Restrict
	Atomic
	// TypeTag is BTF's TYPE_TAG (btf_type_tag("user") and the like).
	TypeTag
)

var qualNames = [...]string{"const", "volatile", "restrict", "_Atomic", "type_tag"}

func (q QualKind) String() string { return qualNames[q] }

// Qualifier qualifies its Target (const, volatile, restrict, _Atomic, a BTF
// type tag). Tag holds the tag's text for TypeTag.
type Qualifier struct {
	Kind   QualKind
	Target Type
	Tag    string
}

// Array is a one-dimensional array. A multi-dimensional array is an Array of
// Arrays, outermost dimension first: C's int a[2][3] is
// Array{Count: 2, Elem: Array{Count: 3, Elem: int}}.
type Array struct {
	Name string // Go's [4]int, Rust's [u8; 4]; "" in C
	Elem Type
	// Count is the number of elements; 0 for a zero-length array and
	// -1 for a flexible array member (no bound given).
	Count int64
}

// EnumValue is one enumerator.
type EnumValue struct {
	Name  string
	Value int64 // reinterpret as uint64 when the Enum is unsigned
}

// Enum is an enumeration (C enum, C++ enum class, Rust C-like enum without
// fields, Zig enum).
type Enum struct {
	Name     string
	ByteSize int64
	Signed   bool
	Values   []EnumValue
	Lang     Lang
	Decl     Decl
}

// Kind tells a Struct from a Union or a Class.
type Kind uint8

const (
	KindStruct Kind = iota
	KindUnion
	KindClass
)

var kindNames = [...]string{"struct", "union", "class"}

func (k Kind) String() string { return kindNames[k] }

// GoKind is a Go type kind as the gc toolchain records it in DWARF
// (DW_AT_go_kind, vendor attribute 0x2900); values are reflect.Kind's.
type GoKind uint8

const (
	GoNone      GoKind = 0
	GoArray     GoKind = 17
	GoChan      GoKind = 18
	GoFunc      GoKind = 19
	GoInterface GoKind = 20
	GoMap       GoKind = 21
	GoPtr       GoKind = 22
	GoSlice     GoKind = 23
	GoString    GoKind = 24
	GoStruct    GoKind = 25
)

// Member is a field of a Struct, a Union or a Class.
//
// Offset is in bits from the start of the enclosing type, numbered as DWARF 4's
// DW_AT_data_bit_offset: bit 0 is the least significant bit of the byte at
// offset 0 on a little-endian target. A plain member at byte 12 has Offset 96.
// For a bitfield, BitSize is its width; for any other member BitSize is 0.
//
// Worked example, C on x86-64:
//
//	struct s { unsigned a:3; unsigned b:5; int c; };
//
// gives a{Offset: 0, BitSize: 3}, b{Offset: 3, BitSize: 5}, c{Offset: 32}.
type Member struct {
	Name    string // "" for an anonymous struct or union member
	Type    Type
	Offset  Bits
	BitSize Bits
	// Embedded is a Go embedded field or a C++ base class (inheritance).
	Embedded bool
	// Artificial marks a member the compiler invented (vtable pointers).
	Artificial bool
	// Align is an explicit alignment in bytes (DW_AT_alignment), or 0.
	Align int64
	// Tags are BTF declaration tags (btf_decl_tag("...")) on the member.
	Tags []string
	// Virtual marks a C++ virtual base class (Embedded is set too).
	Virtual bool
	// Access is the C++ access the debug info states for the member or
	// base class (DW_AT_accessibility); AccessNone when it states none,
	// which means the default: private in a class, public in a struct.
	Access Access
	// Dynamic says the member's place depends on the object at run time
	// (a virtual base) or could not be read; Offset is 0 and meaningless
	// then. Such members are in Struct.Dynamic, never in Struct.Members.
	Dynamic Dynamic
}

// Access is a C++ access specifier.
type Access uint8

const (
	AccessNone Access = iota // not stated: the kind's default
	AccessPublic
	AccessProtected
	AccessPrivate
)

var accessNames = [...]string{"", "public", "protected", "private"}

func (a Access) String() string {
	if int(a) < len(accessNames) {
		return accessNames[a]
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// Effective is the access a member has in a type of kind k: a stated
// one, else the default (private in a class, public in a struct or
// union).
func (a Access) Effective(k Kind) Access {
	switch {
	case a != AccessNone:
		return a
	case k == KindClass:
		return AccessPrivate
	}
	return AccessPublic
}

// Method is a C++ member function as its class declares it (a
// DW_TAG_subprogram among the class's children). Proto's parameters
// include the artificial this pointer of a non-static method, as the
// debug info records it.
type Method struct {
	Name   string
	Proto  *FuncProto
	Access Access
	// Virtual marks a virtual method; PureVirtual one declared = 0.
	Virtual, PureVirtual bool
	// Artificial marks a method the compiler declared (an implicit
	// constructor or assignment).
	Artificial bool
	// Inline marks a method declared inline.
	Inline bool
}

// Dynamic tells why a member has no offset fixed by its type.
type Dynamic uint8

const (
	// DynamicNone: the member's offset is Member.Offset.
	DynamicNone Dynamic = iota
	// DynamicRuntime: the offset is read from the object at run time (a
	// C++ virtual base: from the vtable the object points at).
	DynamicRuntime
	// DynamicUnknown: the location could not be read (an expression the
	// loader does not evaluate).
	DynamicUnknown
	// DynamicChanged: the member came from a reference build (a Go
	// binary without DWARF) and the binary's own runtime type
	// descriptors give it another offset or size, or do not have it.
	DynamicChanged
)

var dynamicNames = [...]string{"", "offset read from the object at run time", "location not understood",
	"the binary's runtime type descriptor gives it another offset or size than the reference build"}

func (d Dynamic) String() string {
	if int(d) < len(dynamicNames) {
		return dynamicNames[d]
	}
	return fmt.Sprintf("dynamic(%d)", uint8(d))
}

// ByteOffset is the member's offset in whole bytes (rounded down for bitfields).
func (m *Member) ByteOffset() int64 { return m.Offset.Bytes() }

// Variant is one alternative of a Rust enum. Discr is the discriminant value
// that selects it; Default marks the variant taken when no other matches
// (Discr is meaningless then). Member holds the variant's fields, usually a
// struct named after the variant at offset 0.
type Variant struct {
	Discr   int64
	Default bool
	Member  Member
}

// VariantPart is the body of a Rust enum (DWARF's DW_TAG_variant_part). Tag is
// the member that holds the discriminant, nil when the enum uses a niche in
// a variant's field.
type VariantPart struct {
	Tag      *Member
	Variants []Variant
}

// TemplateParam is a C++ template or Rust generic parameter.
type TemplateParam struct {
	Name  string
	Type  Type  // nil for a value parameter
	Value int64 // for a value parameter
}

// Struct is a struct, union or class (C, C++, Go, Rust, Zig). Go strings,
// slices, interfaces and Rust/Zig fat pointers are Structs too: that is what
// they are in memory; GoKind and Name say what they are at source level.
type Struct struct {
	Kind     Kind
	Name     string
	ByteSize int64
	Members  []Member // in declaration order; layout sorts by offset
	// Dynamic are the members without an offset fixed by the type (C++
	// virtual bases, unreadable locations), in declaration order. They
	// take no place in the static layout: Members plus holes plus padding
	// still make ByteSize, and views that need offsets ignore them.
	Dynamic []Member
	Lang    Lang
	Decl    Decl
	// Incomplete is a forward declaration: no size, no members.
	Incomplete bool
	// Packed is set for Zig packed structs and where the loader knows the
	// type is packed (members at offsets their alignment forbids).
	Packed bool
	// Align is an explicit alignment in bytes (DW_AT_alignment), or 0.
	Align    int64
	GoKind   GoKind
	Variants *VariantPart // Rust enums with data
	Template []TemplateParam
	// Tags are BTF declaration tags (btf_decl_tag("...")) on the type.
	Tags []string
	// Methods are a C++ class's member functions, in declaration order.
	Methods []Method
}

// FuncParam is a parameter of a FuncProto.
type FuncParam struct {
	Name string
	Type Type
}

// FuncProto is a function type: C's int (*)(void *), Go's func(int) error.
// ByteSize is what the producer recorded (Go records one), or 0.
type FuncProto struct {
	Name     string
	Return   Type // nil or *Void for none
	Params   []FuncParam
	Variadic bool
	ByteSize int64
}

func (*Void) TypeName() string        { return "void" }
func (t *Base) TypeName() string      { return t.Name }
func (t *Pointer) TypeName() string   { return t.Name }
func (t *Typedef) TypeName() string   { return t.Name }
func (t *Qualifier) TypeName() string { return "" }
func (t *Array) TypeName() string     { return t.Name }
func (t *Enum) TypeName() string      { return t.Name }
func (t *Struct) TypeName() string    { return t.Name }
func (t *FuncProto) TypeName() string { return t.Name }

func (*Void) isType()      {}
func (*Base) isType()      {}
func (*Pointer) isType()   {}
func (*Typedef) isType()   {}
func (*Qualifier) isType() {}
func (*Array) isType()     {}
func (*Enum) isType()      {}
func (*Struct) isType()    {}
func (*FuncProto) isType() {}
