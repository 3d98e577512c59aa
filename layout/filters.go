package layout

import (
	"strings"

	"github.com/binscope/binscope/types"
)

// quietText is a printed type without its comments, as pahole -q prints
// it: the lines that are only a comment (offsets of cachelines, holes,
// the trailer) go, and so do the offset and size comments after the
// members; a C++ base's "<ancestor>" line stays, being the member itself.
func quietText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, line := range strings.SplitAfter(s, "\n") {
		body := strings.TrimRight(line, "\n")
		trimmed := strings.TrimSpace(body)
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(trimmed, "/*") && strings.Index(trimmed, "*/") == len(trimmed)-2 && !strings.Contains(trimmed, "<ancestor>") {
			continue
		}
		if i := strings.LastIndex(body, "/*"); i > 0 && strings.HasSuffix(body, "*/") &&
			strings.HasSuffix(strings.TrimRight(body[:i], " \t"), ";") && !strings.Contains(body[i:], "<ancestor>") {
			body = strings.TrimRight(body[:i], " \t")
		}
		b.WriteString(body)
		if strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// fixSilly returns s with its silly bitfields (a bitfield as wide as its
// type, at a byte boundary: int x:32) made plain members, as pahole's
// --fixup_silly_bitfields reads them; s itself when it has none.
func fixSilly(s *types.Struct) *types.Struct {
	var out *types.Struct
	for i := range s.Members {
		m := &s.Members[i]
		size, _ := types.Sizeof(m.Type)
		if m.BitSize == 0 || int64(m.BitSize) != size*8 || m.Offset%8 != 0 {
			continue
		}
		if out == nil {
			c := *s
			c.Members = append([]types.Member(nil), s.Members...)
			out = &c
		}
		out.Members[i].BitSize = 0
	}
	if out == nil {
		return s
	}
	return out
}

// flexible reports whether s ends in a flexible array member (int
// data[], or the older zero-length data[0]).
func flexible(s *types.Struct) bool {
	if len(s.Members) == 0 || s.Kind == types.KindUnion {
		return false
	}
	last := s.Members[0]
	for _, m := range s.Members[1:] {
		if m.Offset >= last.Offset {
			last = m
		}
	}
	a, ok := types.Unqualified(last.Type).(*types.Array)
	return ok && a.Count <= 0
}

// endsInFlexible reports whether struct s's last declared member is a
// flexible array of one dimension (data[], data[0]), as pahole's
// class__has_flexible_array asks it: of the member's own type, not one a
// typedef names.
func endsInFlexible(s *types.Struct) bool {
	if len(s.Members) == 0 || s.Kind == types.KindUnion {
		return false
	}
	a, ok := s.Members[len(s.Members)-1].Type.(*types.Array)
	if !ok || a.Count > 0 {
		return false
	}
	_, multi := a.Elem.(*types.Array)
	return !multi
}

// embedsFlexible reports whether struct s holds, by value and at any
// depth, a struct that ends in a flexible array (pahole's
// class__has_embedded_flexible_array: "in the middle" of s).
func embedsFlexible(s *types.Struct) bool {
	var w types.Walk
	return embedsFlexibleWalk(s, &w)
}

func embedsFlexibleWalk(s *types.Struct, w *types.Walk) bool {
	if s.Kind == types.KindUnion || !w.Enter(s) {
		return false
	}
	defer w.Leave()
	for _, m := range s.Members {
		inner, ok := types.Resolve(m.Type).(*types.Struct)
		if !ok || inner.Kind == types.KindUnion || (m.Embedded && m.Virtual) {
			continue
		}
		if endsInFlexible(inner) || (inner != s && embedsFlexibleWalk(inner, w)) {
			return true
		}
	}
	return false
}
