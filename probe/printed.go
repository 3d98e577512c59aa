package probe

// How a fetched value prints: the type a definition may give (:u32,
// :string, :bytes, ...), its size, and the type a value of the model has
// when the definition gives none.

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// bitfieldType is the fetch that reads a bitfield at b: the fewest whole
// bytes (1, 2, 4 or 8) that hold it, with typ's signedness and format;
// "" when no 8 bytes hold it.
func bitfieldType(typ string, b spec.Bitfield) (string, *spec.Bitfield) {
	if typ == "string" || !strings.Contains("usx", typ[:1]) {
		return "", nil
	}
	for _, n := range []int64{8, 16, 32, 64} {
		if b.Offset+b.Size <= n {
			return fmt.Sprintf("%c%d", typ[0], n), &b
		}
	}
	return "", nil
}

func typeSize(typ string) int64 {
	switch strings.TrimLeft(typ, "usxf") {
	case "8":
		return 1
	case "16":
		return 2
	case "32":
		return 4
	}
	return 8
}

// defaultType is how a value of t prints when the definition gives no
// type: numbers as numbers, text as text, pointers in hex.
func defaultType(t types.Type) string {
	switch v := t.(type) {
	case *types.Base:
		if v.ByteSize <= 0 {
			return "u64" // a type the debug info does not give: the whole register
		}
		if v.ByteSize > 8 && v.Encoding != types.Float {
			return "" // __int128: no number type holds it (finish says so)
		}
		w := fmt.Sprint(v.ByteSize * 8)
		switch v.Encoding {
		case types.Float:
			return "f" + w
		case types.Signed, types.Char:
			return "s" + w
		case types.Complex:
			return ""
		}
		return "u" + w
	case *types.Enum:
		if v.Signed {
			return fmt.Sprintf("s%d", v.ByteSize*8)
		}
		return fmt.Sprintf("u%d", v.ByteSize*8)
	case *types.Pointer:
		if b, ok := types.Resolve(v.Target).(*types.Base); ok && b.ByteSize == 1 && (b.Encoding == types.Char || b.Encoding == types.UnsignedChar) && v.Name == "" {
			return "cstring" // C's char *; Go's *uint8 and Rust's *const u8 are pointers
		}
		return "x64"
	case *types.Struct:
		if isText(v) {
			return "string"
		}
		if isIface(v) {
			return "iface"
		}
	}
	return ""
}

// charArray is the length of a C char array (char[N], N > 0), or 0 for
// any other type.
func charArray(t types.Type) int64 {
	a, ok := t.(*types.Array)
	if !ok || a.Count <= 0 || a.Name != "" {
		return 0
	}
	b, ok := types.Resolve(a.Elem).(*types.Base)
	if !ok || b.ByteSize != 1 || b.Encoding != types.Char && b.Encoding != types.UnsignedChar {
		return 0
	}
	return a.Count
}

// isText reports the (pointer, length) structs that hold text: Go's
// string, Rust's &str, Zig's []const u8.
func isText(s *types.Struct) bool {
	switch {
	case s.GoKind == types.GoString:
		return true
	case s.Name == "&str" || s.Name == "[]const u8" || s.Name == "[]u8":
		return len(s.Members) == 2
	}
	return false
}

// isIface reports a Go interface value: its type word (an itab, or a
// type for interface{}) and its data word. Go's DWARF makes an interface
// type a typedef (error, io.Writer) of runtime.iface, or of runtime.eface
// for interface{}.
func isIface(s *types.Struct) bool {
	return (s.GoKind == types.GoInterface || s.Name == "runtime.iface" || s.Name == "runtime.eface") && len(s.Members) == 2 && s.ByteSize == 16
}

func kindOf(t types.Type) string {
	switch v := t.(type) {
	case *types.Struct:
		return v.Kind.String()
	case *types.Array:
		return "array"
	}
	return "value"
}
