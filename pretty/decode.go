// Package pretty decodes raw bytes of a model type into values and prints
// them in the type's own language (C designated initializers as pahole's
// --prettify prints them, Go and Rust struct literals, Zig's .{ }) or as
// JSON. It is the view behind gopahole --prettify and goprobe's whole-struct
// arguments; it knows types only through package types, never where they
// came from.
//
// Decoding never guesses: a value that the bytes do not hold (a record cut
// short, a Rust enum whose discriminant matches no variant, a string whose
// bytes are not in the record and no memory reader is given) is a Node with
// Unknown set and the reason, printed `?`.
package pretty

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// Kind says what a Node holds.
type Kind uint8

const (
	Scalar Kind = iota // Text is the value as the language writes it; JSON its JSON form
	Record             // a struct, union or Rust enum variant: Fields
	List               // an array: Elems
)

// Node is one decoded value.
type Node struct {
	Kind Kind
	// Text is a Scalar's value in the output syntax (a number, a quoted
	// string, an enumerator's name, a pointer in hex).
	Text string
	// JSON is a Scalar's value for encoding/json: int64, uint64, float64,
	// bool, string or nil (for `?`).
	JSON any
	// Fields are a Record's members in memory order; an anonymous
	// struct or union member's fields are its own, flattened as C's
	// designated initializers name them.
	Fields []Field
	// Variant names the Rust enum variant a Record holds, if it is one.
	Variant string
	Elems   []*Node
	// Unknown is the reason the value is `?`.
	Unknown string
}

// Field is a named member of a Record.
type Field struct {
	Name  string
	Value *Node
}

// Options say how to decode. A nil *Options decodes little-endian, 8-byte
// pointers, decimal numbers, in the type's own language.
type Options struct {
	Order binary.ByteOrder
	// Syntax is the language values are written in; LangUnknown means
	// the type's own (C for BTF).
	Syntax types.Lang
	// Hex prints integers (not enumerators, characters or booleans) in
	// hexadecimal, as pahole --hex does.
	Hex bool
	// Mem, when not nil, reads n bytes of the inspected program's memory
	// at addr, to follow Go strings and slices and C strings (char *);
	// without it those print as their pointer and length.
	Mem func(addr uint64, n int) ([]byte, error)
	// StringMax bounds the bytes read through Mem for one string (default 64).
	StringMax int
	// CharText prints a C char array as the text before its first NUL
	// (all of it when it has none), as printf's %s reads it, whatever
	// bytes follow the NUL; without it an array with bytes other than
	// NUL after its text prints element by element.
	CharText bool
}

func (o *Options) order() binary.ByteOrder {
	if o == nil || o.Order == nil {
		return binary.LittleEndian
	}
	return o.Order
}

// Decode decodes b as a value of type t. b may be longer than the type;
// when it is shorter the missing members are Unknown.
func Decode(t types.Type, b []byte, o *Options) *Node {
	d := &decoder{o: o, bo: o.order(), syntax: syntaxOf(t, o)}
	return d.value(t, b, 0)
}

type decoder struct {
	o      *Options
	bo     binary.ByteOrder
	syntax types.Lang
}

func unknown(why string) *Node { return &Node{Kind: Scalar, Text: "?", Unknown: why} }

func (d *decoder) value(t types.Type, b []byte, depth int) *Node {
	if depth > types.MaxDepth {
		return unknown("types nest deeper than " + strconv.Itoa(types.MaxDepth))
	}
	size, err := types.Sizeof(t)
	if err != nil {
		return unknown(err.Error())
	}
	rt := types.Resolve(t)
	if int64(len(b)) < size {
		if st, ok := rt.(*types.Struct); !ok || st.Variants != nil || st.GoKind != types.GoNone {
			return unknown(fmt.Sprintf("record ends %d bytes into a %d-byte value", len(b), size))
		}
		// A struct cut short: the members it holds, then `?`.
	} else {
		b = b[:size]
	}
	switch v := rt.(type) {
	case *types.Base:
		return d.base(v, b)
	case *types.Enum:
		return d.enum(v, b)
	case *types.Pointer:
		return d.pointer(v, b)
	case *types.Array:
		return d.array(v, b, depth)
	case *types.Struct:
		return d.record(v, b, depth)
	case *types.FuncProto:
		return d.scalarHex(d.uint(b))
	case *types.Void, nil:
		return &Node{Kind: Record}
	}
	return unknown(fmt.Sprintf("type %T not decoded", t))
}

func (d *decoder) uint(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(d.bo.Uint16(b))
	case 4:
		return uint64(d.bo.Uint32(b))
	case 8:
		return d.bo.Uint64(b)
	}
	var v uint64
	for i := range min(len(b), 8) {
		if d.bo == binary.LittleEndian {
			v |= uint64(b[i]) << (8 * i)
		} else {
			v = v<<8 | uint64(b[i])
		}
	}
	return v
}

func signExtend(v uint64, bits int) int64 {
	if bits <= 0 || bits >= 64 {
		return int64(v)
	}
	s := 64 - bits
	return int64(v<<s) >> s
}

func (d *decoder) hex() bool { return d.o != nil && d.o.Hex }

func (d *decoder) scalarHex(v uint64) *Node {
	if v == 0 {
		return &Node{Kind: Scalar, Text: "0", JSON: v} // as pahole --hex prints it
	}
	return &Node{Kind: Scalar, Text: "0x" + strconv.FormatUint(v, 16), JSON: v}
}

func (d *decoder) integer(v uint64, signed bool, bits int) *Node {
	if signed {
		s := signExtend(v, bits)
		if d.hex() && s >= 0 {
			return &Node{Kind: Scalar, Text: "0x" + strconv.FormatInt(s, 16), JSON: s}
		}
		if d.hex() {
			return &Node{Kind: Scalar, Text: "-0x" + strconv.FormatUint(uint64(-s), 16), JSON: s}
		}
		return &Node{Kind: Scalar, Text: strconv.FormatInt(s, 10), JSON: s}
	}
	if bits < 64 {
		v &= 1<<bits - 1
	}
	if d.hex() {
		return d.scalarHex(v)
	}
	return &Node{Kind: Scalar, Text: strconv.FormatUint(v, 10), JSON: v}
}

func (d *decoder) base(t *types.Base, b []byte) *Node {
	bits := 8 * len(b)
	switch t.Encoding {
	case types.Float:
		return d.float(b)
	case types.Complex:
		h := len(b) / 2
		re, im := d.float(b[:h]), d.float(b[h:])
		if re.Unknown != "" || im.Unknown != "" {
			return unknown("complex part not decoded")
		}
		return &Node{Kind: Scalar, Text: "(" + re.Text + "+" + im.Text + "i)", JSON: []any{re.JSON, im.JSON}}
	case types.Bool:
		v := d.uint(b)
		if v > 1 {
			return &Node{Kind: Scalar, Text: strconv.FormatUint(v, 10), JSON: v}
		}
		if d.syntax == types.LangC && !strings.Contains(t.Name, "bool") {
			return &Node{Kind: Scalar, Text: strconv.FormatUint(v, 10), JSON: v == 1}
		}
		return &Node{Kind: Scalar, Text: strconv.FormatBool(v == 1), JSON: v == 1}
	case types.Char, types.UnsignedChar:
		v := d.uint(b)
		if len(b) == 1 && (t.Encoding == types.Char || d.syntax == types.LangC || d.syntax == types.LangCPlusPlus) {
			n := d.integer(v, t.Encoding == types.Char, 8)
			if v >= 0x20 && v < 0x7f {
				n.Text = strconv.QuoteRune(rune(v))
			}
			return n
		}
		return d.integer(v, t.Encoding == types.Char, bits)
	case types.UTF:
		v := d.uint(b)
		if len(b) <= 4 && v <= 0x10ffff {
			return &Node{Kind: Scalar, Text: strconv.QuoteRune(rune(v)), JSON: string(rune(v))}
		}
		return d.integer(v, false, bits)
	case types.Signed, types.Unsigned:
		if len(b) > 8 {
			return d.wide(b, t.Encoding == types.Signed)
		}
		return d.integer(d.uint(b), t.Encoding == types.Signed, bits)
	}
	return unknown(fmt.Sprintf("%s: encoding %d not decoded", t.Name, t.Encoding))
}

// wide decodes a 128-bit integer.
func (d *decoder) wide(b []byte, signed bool) *Node {
	le := make([]byte, len(b))
	copy(le, b)
	if d.bo == binary.LittleEndian {
		for i, j := 0, len(le)-1; i < j; i, j = i+1, j-1 {
			le[i], le[j] = le[j], le[i]
		}
	}
	v := new(big.Int).SetBytes(le)
	if signed && le[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	if d.hex() {
		return &Node{Kind: Scalar, Text: "0x" + v.Text(16), JSON: v.String()}
	}
	return &Node{Kind: Scalar, Text: v.String(), JSON: v.String()}
}

func (d *decoder) float(b []byte) *Node {
	var f float64
	bits := 64
	switch len(b) {
	case 4:
		f, bits = float64(math.Float32frombits(uint32(d.uint(b)))), 32
	case 8:
		f = math.Float64frombits(d.uint(b))
	case 10, 12, 16:
		var ok bool
		if f, ok = x87(b, d.bo); !ok {
			return unknown(fmt.Sprintf("%d-byte float not decoded", len(b)))
		}
	default:
		return unknown(fmt.Sprintf("%d-byte float not decoded", len(b)))
	}
	text := strconv.FormatFloat(f, 'g', -1, bits)
	var j any = f
	if math.IsInf(f, 0) || math.IsNaN(f) {
		j = text
	}
	return &Node{Kind: Scalar, Text: text, JSON: j}
}

// x87 converts an x87 80-bit extended value (long double on x86, padded to
// 12 or 16 bytes) to the nearest float64.
func x87(b []byte, bo binary.ByteOrder) (float64, bool) {
	if bo != binary.LittleEndian || len(b) < 10 {
		return 0, false
	}
	mant := binary.LittleEndian.Uint64(b)
	se := binary.LittleEndian.Uint16(b[8:])
	exp := int(se & 0x7fff)
	sign := 1.0
	if se&0x8000 != 0 {
		sign = -1
	}
	switch {
	case exp == 0 && mant == 0:
		return math.Copysign(0, sign), true
	case exp == 0x7fff:
		if mant<<1 == 0 {
			return math.Inf(int(sign)), true
		}
		return math.NaN(), true
	}
	if exp == 0 {
		exp = 1 // denormal
	}
	return sign * math.Ldexp(float64(mant), exp-16383-63), true
}

func (d *decoder) enum(t *types.Enum, b []byte) *Node {
	v := d.uint(b)
	sv := signExtend(v, 8*len(b))
	for _, e := range t.Values {
		if (t.Signed && e.Value == sv) || (!t.Signed && uint64(e.Value)&mask(len(b)) == v) {
			json := any(e.Name)
			return &Node{Kind: Scalar, Text: d.enumerator(t, e.Name), JSON: json}
		}
	}
	return d.integer(v, t.Signed, 8*len(b))
}

func mask(n int) uint64 {
	if n >= 8 {
		return math.MaxUint64
	}
	return 1<<(8*n) - 1
}

// enumerator spells an enumerator as the output syntax does.
func (d *decoder) enumerator(t *types.Enum, name string) string {
	switch d.syntax {
	case types.LangZig:
		return "." + name
	case types.LangRust:
		if t.Name != "" {
			return shortName(t.Name) + "::" + name
		}
	}
	return name
}

func shortName(n string) string {
	if i := strings.LastIndex(n, "::"); i >= 0 {
		return n[i+2:]
	}
	return n
}

func (d *decoder) pointer(t *types.Pointer, b []byte) *Node {
	v := d.uint(b)
	if v == 0 {
		return &Node{Kind: Scalar, Text: d.null(), JSON: nil}
	}
	n := d.scalarHex(v)
	if d.o != nil && d.o.Mem != nil && isCString(t.Target) && (d.syntax == types.LangC || d.syntax == types.LangCPlusPlus) {
		if s, ok := d.cstring(v); ok {
			n.Text += " " + s
			if u, err := strconv.Unquote(strings.TrimSuffix(s, "...")); err == nil {
				n.JSON = u // the text, which is what a reader of JSON wants
			}
		}
	}
	return n
}

func (d *decoder) null() string {
	switch d.syntax {
	case types.LangGo:
		return "nil"
	case types.LangZig, types.LangRust:
		return "null"
	}
	return "NULL"
}

func isCString(t types.Type) bool {
	b, ok := types.Resolve(t).(*types.Base)
	return ok && b.ByteSize == 1 && (b.Encoding == types.Char || b.Encoding == types.UnsignedChar)
}

func (d *decoder) stringMax() int {
	if d.o == nil || d.o.StringMax <= 0 {
		return 64
	}
	return d.o.StringMax
}

// cstring reads a NUL-terminated string at addr through Mem.
func (d *decoder) cstring(addr uint64) (string, bool) {
	b, err := d.o.Mem(addr, d.stringMax())
	if err != nil {
		return "", false
	}
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		return strconv.Quote(string(b[:i])), true
	}
	return strconv.Quote(string(b)) + "...", true
}

func (d *decoder) array(t *types.Array, b []byte, depth int) *Node {
	if t.Count <= 0 {
		return &Node{Kind: List}
	}
	if isCString(t.Elem) && (d.syntax == types.LangC || d.syntax == types.LangCPlusPlus) && (textual(b) || d.o != nil && d.o.CharText) {
		s := string(b)
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return &Node{Kind: Scalar, Text: strconv.Quote(s), JSON: s}
	}
	es := int64(len(b)) / t.Count
	n := &Node{Kind: List}
	for i := int64(0); i < t.Count; i++ {
		n.Elems = append(n.Elems, d.value(t.Elem, b[i*es:(i+1)*es], depth+1))
	}
	return n
}

// textual reports whether a char array holds a NUL-terminated string of
// printable bytes (else its elements are printed one by one).
func textual(b []byte) bool {
	end := strings.IndexByte(string(b), 0)
	if end < 0 {
		return false
	}
	for _, c := range b[:end] {
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return false
		}
	}
	for _, c := range b[end:] {
		if c != 0 {
			return false
		}
	}
	return true
}
