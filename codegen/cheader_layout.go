package codegen

import (
	"sort"

	"github.com/binscope/binscope/types"
)

// Layouts C can express: members rewritten where C cannot hold them as the
// binary has them.

// flexFits reports whether C's own rounding of a struct whose flexible
// array member starts at off gives s its size, so that no padding needs
// to follow the array.
func flexFits(off types.Bits, s *types.Struct, align int64) bool {
	end := (int64(off) + 7) / 8
	align = max(align, 1)
	return (end+align-1)/align*align == s.ByteSize
}

// padTo wraps a Rust enum's tag in an anonymous struct that puts it at
// its offset, as a member of the union the enum becomes.
func padTo(tag types.Member) types.Type {
	size, _ := types.Sizeof(tag.Type)
	return &types.Struct{Kind: types.KindStruct, ByteSize: tag.Offset.Bytes() + size, Packed: true,
		Members: []types.Member{{Name: "value", Type: tag.Type, Offset: tag.Offset}}}
}

// anonymous reports whether t is an unnamed struct or union, which C lets
// a struct hold as an unnamed member whose fields are the parent's.
func anonymous(t types.Type) bool {
	s, ok := types.Unqualified(t).(*types.Struct)
	return ok && s.Name == ""
}

// overlapsNext returns the struct type of ms[i] when the member after it
// starts inside it and it is neither a union nor a Rust enum; else nil.
func overlapsNext(ms []types.Member, i int) *types.Struct {
	if i+1 >= len(ms) {
		return nil
	}
	m := &ms[i]
	base, isStruct := types.Resolve(m.Type).(*types.Struct)
	if !isStruct || base.Kind == types.KindUnion || base.Variants != nil {
		return nil
	}
	size, _ := types.Sizeof(m.Type)
	if ms[i+1].Offset < m.Offset+types.Bits(size*8) {
		return base
	}
	return nil
}

// flattenOverlaps replaces a C++ base class whose tail padding holds the
// next member (the Itanium ABI reuses it: Derived::extra at 6 inside an
// 8-byte Base) by the base's own members, which C can lay out so.
func flattenOverlaps(ms []types.Member, w *types.Walk) []types.Member {
	flat := true
	for i := range ms {
		flat = flat && overlapsNext(ms, i) == nil
	}
	if flat {
		return ms // nothing to flatten: most structs
	}
	var out []types.Member
	for i, m := range ms {
		if base := overlapsNext(ms, i); base != nil && w.Enter(base) {
			inner := append([]types.Member(nil), base.Members...)
			sort.SliceStable(inner, func(a, b int) bool { return inner[a].Offset < inner[b].Offset })
			for _, im := range flattenOverlaps(inner, w) {
				im.Offset += m.Offset
				out = append(out, im)
			}
			w.Leave()
			continue
		}
		out = append(out, m)
	}
	return out
}
