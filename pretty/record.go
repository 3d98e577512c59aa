package pretty

import (
	"fmt"
	"sort"

	"github.com/binscope/binscope/types"
)

// record decodes a struct, union or class: its members in memory order,
// bitfields extracted, anonymous members flattened; a Rust enum decodes as
// the variant its discriminant selects; a Go string or slice is followed
// through Mem when one is given.
func (d *decoder) record(s *types.Struct, b []byte, depth int) *Node {
	if s.Variants != nil {
		return d.variant(s, b, depth)
	}
	if n, ok := d.goValue(s, b); ok {
		return n
	}
	n := &Node{Kind: Record}
	d.members(n, s.Members, b, 0, depth)
	return n
}

// members appends the fields of ms, at base bits into b, to n.
func (d *decoder) members(n *Node, ms []types.Member, b []byte, base types.Bits, depth int) {
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return ms[order[i]].Offset < ms[order[j]].Offset })
	for _, i := range order {
		m := &ms[i]
		if m.Dynamic != types.DynamicNone {
			n.Fields = append(n.Fields, Field{m.Name, unknown("member at a location read at run time: " + m.Dynamic.String())})
			continue
		}
		off := base + m.Offset
		if m.Name == "" && !m.Embedded {
			if st, ok := types.Resolve(m.Type).(*types.Struct); ok && st.Variants == nil {
				d.members(n, st.Members, b, off, depth+1)
				continue
			}
		}
		name := m.Name
		if name == "" {
			name = types.ShortName(m.Type.TypeName())
		}
		n.Fields = append(n.Fields, Field{name, d.member(m, b, off, depth)})
	}
}

func (d *decoder) member(m *types.Member, b []byte, off types.Bits, depth int) *Node {
	if m.BitSize > 0 {
		return d.bitfield(m, b, off)
	}
	if off%8 != 0 {
		return unknown(fmt.Sprintf("member at bit %d is not byte aligned", off))
	}
	start := int64(off / 8)
	if start > int64(len(b)) {
		return unknown("record ends before the member")
	}
	return d.value(m.Type, b[start:], depth+1)
}

// bitfield extracts a bitfield member: off counts bits from the start of
// the record in the little-endian convention (DW_AT_data_bit_offset).
func (d *decoder) bitfield(m *types.Member, b []byte, off types.Bits) *Node {
	if m.BitSize > 64 {
		return unknown("bitfield wider than 64 bits")
	}
	first, last := int64(off)/8, (int64(off)+int64(m.BitSize)-1)/8
	if last >= int64(len(b)) {
		return unknown("record ends before the bitfield")
	}
	if d.o.order().Uint16([]byte{1, 0}) != 1 {
		return unknown("big-endian bitfields not decoded")
	}
	var v uint64
	for i := last; i >= first; i-- {
		v = v<<8 | uint64(b[i])
	}
	v >>= uint(int64(off) % 8)
	bits := int(m.BitSize)
	if bits < 64 {
		v &= 1<<bits - 1
	}
	signed := false
	switch t := types.Resolve(m.Type).(type) {
	case *types.Base:
		signed = t.Encoding == types.Signed || t.Encoding == types.Char
		if t.Encoding == types.Bool {
			return &Node{Kind: Scalar, Text: fmt.Sprint(v == 1), JSON: v == 1}
		}
	case *types.Enum:
		signed = t.Signed
		sv := signExtend(v, bits)
		for _, e := range t.Values {
			if (signed && e.Value == sv) || (!signed && uint64(e.Value) == v) {
				return &Node{Kind: Scalar, Text: d.enumerator(t, e.Name), JSON: e.Name}
			}
		}
	}
	return d.integer(v, signed, bits)
}

// variant decodes a Rust enum with data: the tag selects the variant whose
// discriminant it equals, else the default (dataful) variant.
func (d *decoder) variant(s *types.Struct, b []byte, depth int) *Node {
	vp := s.Variants
	var pick *types.Variant
	if vp.Tag != nil {
		tag := d.member(vp.Tag, b, vp.Tag.Offset, depth)
		if tag.Unknown != "" {
			return tag
		}
		size, _ := types.Sizeof(vp.Tag.Type)
		start := vp.Tag.Offset.Bytes()
		if size <= 0 || size > 8 || start+size > int64(len(b)) {
			return unknown("enum tag not decoded")
		}
		raw := d.uint(b[start : start+size])
		for i := range vp.Variants {
			v := &vp.Variants[i]
			if !v.Default && uint64(v.Discr)&mask(int(size)) == raw {
				pick = v
				break
			}
		}
		if pick == nil {
			for i := range vp.Variants {
				if vp.Variants[i].Default {
					pick = &vp.Variants[i]
				}
			}
		}
	} else if len(vp.Variants) == 1 {
		pick = &vp.Variants[0]
	}
	if pick == nil {
		return unknown("the discriminant matches no variant")
	}
	n := &Node{Kind: Record, Variant: pick.Member.Name}
	if st, ok := types.Resolve(pick.Member.Type).(*types.Struct); ok {
		d.members(n, st.Members, b, pick.Member.Offset, depth+1)
	}
	return n
}
