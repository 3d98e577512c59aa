package codegen

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// Enums of C headers: their bodies and the sizes clang gives them.

func (h *header) enum(e *types.Enum) {
	in := h.info(e)
	if in.state == stDone {
		return
	}
	in.state = stDone
	tag := h.tagOf(e)
	fmt.Fprintf(&h.out, "/* %s */\n", e.Name)
	fmt.Fprintf(&h.out, "enum %s %s;\n", tag, h.enumBody(e, tag, ""))
	if h.asserts && e.ByteSize > 0 {
		fmt.Fprintf(&h.out, "_Static_assert(sizeof(enum %s) == %d, \"%s: size\");\n", tag, e.ByteSize, tag)
	}
	h.out.WriteString("\n")
}

// enumBody spells the enumerators; those of languages other than C and
// C++ are prefixed with the enum's name, as C puts all enumerators in one
// namespace.
func (h *header) enumBody(e *types.Enum, tag, indent string) string {
	if h.worker { // its names come in the walk's order
		h.bad = true
		return "{}"
	}
	var b strings.Builder
	// C sizes an enum by its values; force the binary's size when they
	// would give another: packed when that gives the size, else clang's
	// fixed underlying type (enum E : unsigned short).
	fixed := e.ByteSize > 0 && e.ByteSize != 4 && packedEnumSize(e) != e.ByteSize
	if fixed {
		enc := types.Unsigned
		if e.Signed {
			enc = types.Signed
		}
		if base, n := cBase(&types.Base{ByteSize: e.ByteSize, Encoding: enc}); n == 0 {
			b.WriteString(": " + base + " ")
		} else {
			fixed = false
		}
	}
	b.WriteString("{\n")
	for _, v := range e.Values {
		name := v.Name
		if e.Lang != types.LangC && e.Lang != types.LangUnknown || name == "" {
			name = tag + "__" + name
		}
		id := h.idents.unique(name)
		val := strconv.FormatInt(v.Value, 10)
		switch {
		case !e.Signed && v.Value < 0:
			val = strconv.FormatUint(uint64(v.Value), 10) + "ULL"
		case v.Value == math.MinInt64: // no literal spells it
			val = "(-9223372036854775807LL - 1)"
		}
		fmt.Fprintf(&b, "%s\t%s = %s,\n", indent, id, val)
	}
	if len(e.Values) == 0 {
		fmt.Fprintf(&b, "%s\t%s__empty = 0,\n", indent, tag)
	}
	b.WriteString(indent + "}")
	if e.ByteSize > 0 && e.ByteSize != 4 && !fixed {
		b.WriteString(" __attribute__((packed))")
	}
	return b.String()
}

// packedEnumSize is the size clang gives a packed enum with e's values: the
// smallest of 1, 2, 4 and 8 bytes that holds them all.
// (signed ones when a value is negative).
func packedEnumSize(e *types.Enum) int64 {
	neg := false
	for _, v := range e.Values {
		neg = neg || e.Signed && v.Value < 0
	}
	size := int64(1)
	for _, v := range e.Values {
		for size < 8 {
			bits := uint(size * 8)
			var fits bool
			if neg {
				fits = v.Value >= -(1<<(bits-1)) && v.Value < 1<<(bits-1)
			} else {
				fits = uint64(v.Value) < 1<<bits
			}
			if fits {
				break
			}
			size *= 2
		}
	}
	return size
}
