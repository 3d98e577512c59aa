package codegen

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// The asserts of a struct's member offsets.

// offsetAsserts are the offset asserts of the struct being written, whose
// type is word ("struct tag").
type offsetAsserts struct {
	buf       bytes.Buffer
	word, tag string
}

func writeAll(b *strings.Builder, parts ...string) {
	for _, p := range parts {
		b.WriteString(p)
	}
}

// assertMember adds "path) == offset" for a member, and for the fields of
// an unnamed struct member (whose fields belong to the parent) or of an
// inline anonymous struct. Bitfields have no offsetof.
func (h *header) assertMember(asserts *offsetAsserts, prefix, name string, off, bits types.Bits, t types.Type, w *types.Walk) {
	if bits > 0 || off%8 != 0 {
		return
	}
	if name != "" {
		b := &asserts.buf
		b.WriteString("_Static_assert(__builtin_offsetof(")
		b.WriteString(asserts.word)
		b.WriteString(", ")
		b.WriteString(prefix)
		b.WriteString(name)
		b.WriteString(") == ")
		b.Write(strconv.AppendInt(b.AvailableBuffer(), off.Bytes(), 10))
		b.WriteString(", \"")
		b.WriteString(asserts.tag)
		b.WriteString(": offset\");\n")
	}
	s, ok := types.Unqualified(t).(*types.Struct)
	if !ok || s.Name != "" || s.Variants != nil || !w.Enter(s) {
		return
	}
	defer w.Leave()
	inner := prefix
	if name != "" {
		inner = prefix + name + "."
	}
	var names namer
	for _, m := range s.Members {
		n := m.Name
		if n == "" && !anonymous(m.Type) {
			n = fmt.Sprintf("__anon_%d", m.Offset.Bytes())
		}
		if n != "" {
			n = names.fresh(memberName(n))
		}
		h.assertMember(asserts, inner, n, off+m.Offset, m.BitSize, m.Type, w)
	}
}
