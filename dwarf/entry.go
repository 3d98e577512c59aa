package dwarf

import (
	"unsafe"
)

// Entry is one DIE as the package's decoder (decode.go) gives it: its
// offset, tag, whether it has children, and its attributes in the order
// its abbreviation lists them. Each value is held typed, in the field
// (no interface, so no allocation, per value), with the type and class
// debug/dwarf's Reader gives it: the typed accessors (Int, Uint, Ref,
// Flag, Str, Bytes) answer as a type assertion on debug/dwarf's value
// does, and Val gives that value itself for the few readers that keep
// one whatever its type.
type Entry struct {
	Offset   Offset
	Tag      Tag
	Children bool
	Field    []Field
}

// valKind is the Go type debug/dwarf gives an attribute's value.
type valKind uint8

const (
	kindNone   valKind = iota // no value (a null entry's)
	kindInt                   // int64: constants, section offsets
	kindUint                  // uint64: addresses, indexes, signatures
	kindUint32                // uint32: DWARF 5's ref_sup4 and 32-bit strp_sup
	kindRef                   // Offset: references
	kindFlag                  // bool
	kindString                // string: b's bytes
	kindBytes                 // []byte: blocks, expressions, data16
)

// Field is one attribute of an Entry: the attribute, the class of its
// value and the value (n for numbers, references and flags, b for
// strings and blocks, which both point into the section they were read
// from).
type Field struct {
	Attr  Attr
	class uint8
	kind  valKind
	n     uint64
	b     []byte
}

// Class is the class debug/dwarf gives the value.
func (fl *Field) Class() Class { return Class(fl.class) }

// Val is the value as debug/dwarf's Field.Val holds it.
func (fl *Field) Val() any {
	switch fl.kind {
	case kindInt:
		return int64(fl.n)
	case kindUint:
		return fl.n
	case kindUint32:
		return uint32(fl.n)
	case kindRef:
		return Offset(fl.n)
	case kindFlag:
		return fl.n != 0
	case kindString:
		return secString(fl.b)
	case kindBytes:
		return fl.b
	}
	return nil
}

func (fl *Field) setInt(v int64, c Class) {
	fl.kind, fl.n, fl.class = kindInt, uint64(v), uint8(c)
}
func (fl *Field) setUint(v uint64, c Class) { fl.kind, fl.n, fl.class = kindUint, v, uint8(c) }
func (fl *Field) setRef(v Offset, c Class) {
	fl.kind, fl.n, fl.class = kindRef, uint64(v), uint8(c)
}
func (fl *Field) setFlag(v bool)             { fl.kind, fl.n, fl.class = kindFlag, b2u(v), uint8(ClassFlag) }
func (fl *Field) setBytes(v []byte, c Class) { fl.kind, fl.b, fl.class = kindBytes, v, uint8(c) }
func (fl *Field) setString(v string, c Class) {
	fl.kind, fl.b, fl.class = kindString, strBytes(v), uint8(c)
}
func (fl *Field) setStringBytes(v []byte, c Class) {
	fl.kind, fl.b, fl.class = kindString, v, uint8(c)
}

func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// strBytes is s's bytes, without a copy (the inverse of secString).
func strBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// AttrField is e's field of attribute a, nil when it has none.
func (e *Entry) AttrField(a Attr) *Field {
	for i := range e.Field {
		if e.Field[i].Attr == a {
			return &e.Field[i]
		}
	}
	return nil
}

// Val is the value of e's attribute a as debug/dwarf gives it, nil when
// e has none.
func (e *Entry) Val(a Attr) any {
	if fl := e.AttrField(a); fl != nil {
		return fl.Val()
	}
	return nil
}

// Has reports whether e has attribute a.
func (e *Entry) Has(a Attr) bool { return e.AttrField(a) != nil }

// typed is e's field of attribute a when its value is of kind k.
func (e *Entry) typed(a Attr, k valKind) (*Field, bool) {
	fl := e.AttrField(a)
	return fl, fl != nil && fl.kind == k
}

// Int is attribute a's value when debug/dwarf gives it as an int64
// (constants; section offsets).
func (e *Entry) Int(a Attr) (int64, bool) {
	fl, ok := e.typed(a, kindInt)
	if !ok {
		return 0, false
	}
	return int64(fl.n), true
}

// Uint is attribute a's value when debug/dwarf gives it as a uint64
// (addresses; list and range list indexes).
func (e *Entry) Uint(a Attr) (uint64, bool) {
	fl, ok := e.typed(a, kindUint)
	if !ok {
		return 0, false
	}
	return fl.n, true
}

// Ref is attribute a's value when it is a reference (debug/dwarf's
// Offset; altBit set for one into the dwz alternate file).
func (e *Entry) Ref(a Attr) (Offset, bool) {
	fl, ok := e.typed(a, kindRef)
	if !ok {
		return 0, false
	}
	return Offset(fl.n), true
}

// Flag is attribute a's value when it is a flag; ok is false when e has
// none.
func (e *Entry) Flag(a Attr) (set, ok bool) {
	fl, ok := e.typed(a, kindFlag)
	if !ok {
		return false, false
	}
	return fl.n != 0, true
}

// Str is attribute a's value when it is a string.
func (e *Entry) Str(a Attr) (string, bool) {
	fl, ok := e.typed(a, kindString)
	if !ok {
		return "", false
	}
	return secString(fl.b), true
}

// Bytes is attribute a's value when it is a block (an expression, a
// block constant, DW_FORM_data16's bytes).
func (e *Entry) Bytes(a Attr) ([]byte, bool) {
	fl, ok := e.typed(a, kindBytes)
	if !ok {
		return nil, false
	}
	return fl.b, true
}

// Name is e's DW_AT_name, "" for none.
func (e *Entry) Name() string {
	s, _ := e.Str(AttrName)
	return s
}

// Type is e's DW_AT_type.
func (e *Entry) Type() (Offset, bool) { return e.Ref(AttrType) }

// ByteSize is e's DW_AT_byte_size when it is a constant.
func (e *Entry) ByteSize() (int64, bool) { return e.Int(AttrByteSize) }

// Declaration reports whether e is a declaration (DW_AT_declaration).
func (e *Entry) Declaration() bool {
	d, _ := e.Flag(AttrDeclaration)
	return d
}

// DeclLine is e's DW_AT_decl_line when it is a constant.
func (e *Entry) DeclLine() (int64, bool) { return e.Int(AttrDeclLine) }
