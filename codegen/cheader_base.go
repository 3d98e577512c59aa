package codegen

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/types"
)

// Base types of C headers: C's keywords, and sized byte arrays for what the
// BPF target lacks.

// opaqueFloat spells a floating-point type BPF has no C type for (x86's
// 16-byte long double, which -target bpf makes 8 bytes; f16, f80, f128) as
// a struct of its bytes with its alignment, defined once at the top of the
// header; "" for float, double and their complex forms.
func (h *header) opaqueFloat(b *types.Base) string {
	kind := "float"
	switch {
	case b.Encoding == types.Float && b.ByteSize != 4 && b.ByteSize != 8:
	case b.Encoding == types.Complex && b.ByteSize != 8 && b.ByteSize != 16:
		kind = "complex"
	default:
		return ""
	}
	// A C struct's size is a multiple of its alignment: Zig's f80 (10
	// bytes, aligned 8 where it lies) takes 2 here, and the struct that
	// holds it says its own alignment.
	align := types.Alignof(b)
	for b.ByteSize%align != 0 {
		align /= 2
	}
	name := fmt.Sprintf("__binscope_%s%d", kind, b.ByteSize*8)
	if align != b.ByteSize {
		name += fmt.Sprintf("_a%d", align)
	}
	if _, ok := h.floats[name]; !ok {
		h.floats[name] = fmt.Sprintf("/* %s (%d bytes): no C type of this size under -target bpf */\n"+
			"struct %s { unsigned char bytes[%d]; } __attribute__((aligned(%d)));\n", b.Name, b.ByteSize, name, b.ByteSize, align)
	}
	return "struct " + name
}

// voidLike reports whether t, through qualifiers and typedefs, is void or a
// base type without size (Rust's () and !, C++'s std::nullptr_t, an
// unspecified type): a pointer to it is void *.
func voidLike(t types.Type) bool {
	for w := (types.Walk{}); w.Enter(t); {
		switch v := t.(type) {
		case nil, *types.Void:
			return true
		case *types.Qualifier:
			t = v.Target
		case *types.Typedef:
			t = v.Target
		case *types.Base:
			return v.ByteSize == 0
		default:
			return false
		}
	}
	return false
}

// cBase spells a base type with C's keywords, by encoding and size: Go's
// 8-byte int is long long, Rust's u8 unsigned char. A size C has no type
// for (Zig's u24) becomes an array of n unsigned chars.
func cBase(b *types.Base) (name string, n int64) {
	sz := b.ByteSize
	switch b.Encoding {
	case types.Float:
		switch sz {
		case 4:
			return "float", 0
		case 8:
			return "double", 0
		}
	case types.Complex:
		switch sz {
		case 8:
			return "_Complex float", 0
		case 16:
			return "_Complex double", 0
		}
	case types.Bool:
		if sz == 1 {
			return "_Bool", 0
		}
	case types.Char:
		if sz == 1 {
			return "char", 0
		}
	case types.Signed:
		switch sz {
		case 1:
			return "signed char", 0
		case 2:
			return "short", 0
		case 4:
			return "int", 0
		case 8:
			return "long long", 0
		case 16:
			return "__int128", 0
		}
	}
	switch sz {
	case 1:
		return "unsigned char", 0
	case 2:
		return "unsigned short", 0
	case 4:
		return "unsigned int", 0
	case 8:
		return "unsigned long long", 0
	case 16:
		return "unsigned __int128", 0
	}
	return "unsigned char", sz
}

// atomicWords are C's spellings of the types <stdatomic.h> names atomic_X
// after, by X.
var atomicWords = map[string]string{
	"bool": "_Bool", "char": "char", "schar": "signed char", "uchar": "unsigned char",
	"short": "short", "ushort": "unsigned short", "int": "int", "uint": "unsigned int",
	"long": "long", "ulong": "unsigned long", "llong": "long long", "ullong": "unsigned long long",
	"size_t": "unsigned long", "ptrdiff_t": "long", "intptr_t": "long", "uintptr_t": "unsigned long",
	"intmax_t": "long", "uintmax_t": "unsigned long",
	"int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short", "uint16_t": "unsigned short",
	"int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long", "uint64_t": "unsigned long",
}

// atomicSizes are the sizes of atomicWords' spellings on the 64-bit
// targets the header is for.
var atomicSizes = map[string]int64{
	"_Bool": 1, "char": 1, "signed char": 1, "unsigned char": 1, "short": 2, "unsigned short": 2,
	"int": 4, "unsigned int": 4, "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8,
}

// legacyAtomic returns the C type that a base type older compilers named
// after <stdatomic.h> (a DW_TAG_base_type "atomic_int", where newer ones
// write DW_TAG_atomic_type over int) is _Atomic of, or "" for any other
// base type or one whose size does not match.
func legacyAtomic(b *types.Base) string {
	x, ok := strings.CutPrefix(b.Name, "atomic_")
	if !ok {
		return ""
	}
	c := atomicWords[x]
	if c == "" || atomicSizes[c] != b.ByteSize {
		return ""
	}
	return c
}
