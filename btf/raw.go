package btf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/types"
)

// rawBTF reads raw, non-split BTF (the running kernel's) straight into the
// model, type ID by type ID, as convertSpec does through cilium/ebpf's
// decoder but without its object graph: a full dump of the kernel's 100,000
// types spends most of its loading time building that graph. It decodes
// exactly what cilium/ebpf v0.22's decoder does (legacy bitfields,
// declaration tags, sign-extended enumerators); any record it does not
// understand is errRawFallback, and the caller decodes through cilium/ebpf
// instead, which gives corrupt input its usual error.
type rawBTF struct {
	bo    binary.ByteOrder
	recs  []byte   // the type section
	strs  string   // the string section, one allocation for every name
	offs  []uint32 // offs[id] is where type id's record starts; offs[0] is void's
	kinds []uint8  // the kind of each type
	// declTags are the IDs of the declaration tags on each type.
	declTags map[uint32][]uint32
	// named are the IDs namedComposites lists.
	named []uint32
}

var errRawFallback = errors.New("raw BTF needs the full decoder")

// invalid is the panic of a reference valid let through: a bug of valid,
// not bad input.
func invalid(what string, v uint32) string {
	return fmt.Sprintf("btf: raw reader: %s %d out of range, which rawBTF.valid should have refused", what, v)
}

// parseRaw indexes raw BTF: where each type's record starts, its
// declaration tags, and its named composites.
func parseRaw(raw []byte) (*rawBTF, error) {
	if len(raw) < 24 || !isRawBTF(raw) {
		return nil, errRawFallback
	}
	sec, err := sectionsOf(raw)
	if err != nil {
		return nil, errRawFallback
	}
	strs := sec.strs
	if len(strs) > 0 && (strs[len(strs)-1] != 0 || strs[0] != 0) {
		return nil, errRawFallback
	}
	r := &rawBTF{bo: sec.bo, recs: sec.recs, strs: string(strs)}
	n := len(r.recs) / 16
	r.offs = make([]uint32, 1, n+1)
	r.kinds = make([]uint8, 1, n+1)
	err = sec.eachRecord(func(id uint32, off int, nameOff, kind uint32, _ int) {
		r.offs = append(r.offs, uint32(off))
		r.kinds = append(r.kinds, uint8(kind))
		switch kind {
		case kindStruct, kindUnion, kindEnum, kindEnum64, kindTypedef:
			if nameOff != 0 {
				r.named = append(r.named, id)
			}
		case kindDeclTag:
			if r.declTags == nil {
				r.declTags = map[uint32][]uint32{}
			}
			target := sec.bo.Uint32(r.recs[off+8:])
			r.declTags[target] = append(r.declTags[target], id)
		}
	})
	if err != nil {
		return nil, errRawFallback
	}
	if !r.valid() {
		return nil, errRawFallback
	}
	return r, nil
}

// valid reports whether every name and type ID the conversion reads is in
// range (names start strings, IDs name types) and every declaration tag on
// a struct or union names the whole type or one of its members: then
// converting any type cannot fail half-way, and types may go to
// Options.Each as they are converted.
func (r *rawBTF) valid() bool {
	n := uint32(len(r.offs))
	name := func(off uint32) bool {
		return off == 0 || uint64(off) < uint64(len(r.strs)) && r.strs[off-1] == 0
	}
	u32 := func(off int) uint32 { return r.bo.Uint32(r.recs[off:]) }
	for id := 1; id < len(r.offs); id++ {
		off := int(r.offs[id])
		info, sizeType := u32(off+4), u32(off+8)
		vlen, data := int(info&0xffff), off+12
		if !name(u32(off)) {
			return false
		}
		switch r.kinds[id] {
		case 2, kindTypedef, 9, 10, 11, 12, kindVar, 18:
			if sizeType >= n {
				return false
			}
		case kindDeclTag:
			if sizeType >= n {
				return false
			}
			if k := r.kinds[sizeType]; k == kindStruct || k == kindUnion {
				idx := int32(u32(data))
				tvlen := int32(u32(int(r.offs[sizeType])+4) & 0xffff)
				if idx < -1 || idx >= tvlen {
					return false
				}
			}
		case kindArray:
			if u32(data) >= n || u32(data+4) >= n {
				return false
			}
		case kindStruct, kindUnion:
			for i := range vlen {
				if !name(u32(data+12*i)) || u32(data+12*i+4) >= n {
					return false
				}
			}
		case kindFuncProto:
			if sizeType >= n {
				return false
			}
			for i := range vlen {
				if !name(u32(data+8*i)) || u32(data+8*i+4) >= n {
					return false
				}
			}
		case kindEnum:
			for i := range vlen {
				if !name(u32(data + 8*i)) {
					return false
				}
			}
		case kindEnum64:
			for i := range vlen {
				if !name(u32(data + 12*i)) {
					return false
				}
			}
		}
	}
	return true
}

// str is the name at off in the string section.
func (r *rawBTF) str(off uint32) string {
	if off == 0 {
		return ""
	}
	if uint64(off) >= uint64(len(r.strs)) || r.strs[off-1] != 0 {
		panic(invalid("name offset", off))
	}
	s := r.strs[off:]
	return s[:strings.IndexByte(s, 0)]
}

// rawConverter is converter over rawBTF: the model value of each type ID
// is recorded before its parts are converted, so cycles end.
type rawConverter struct {
	*converter
	r    *rawBTF
	memo []types.Type
}

func (c *rawConverter) u32(off int) uint32 { return c.r.bo.Uint32(c.r.recs[off:]) }

// typ converts type id (converter.typ's cases, in its order of recursion).
func (c *rawConverter) typ(id uint32) types.Type {
	if id == 0 {
		return c.void
	}
	if int(id) >= len(c.r.offs) {
		panic(invalid("type ID", id))
	}
	if m := c.memo[id]; m != nil {
		return m
	}
	off := int(c.r.offs[id])
	info := c.u32(off + 4)
	kflag, vlen := info>>31 == 1, int(info&0xffff)
	sizeType := c.u32(off + 8)
	data := off + 12
	switch c.r.kinds[id] {
	case kindInt:
		name := c.r.str(c.u32(off))
		b := &types.Base{Name: name, ByteSize: int64(sizeType),
			Encoding: intEncodingOf(name, cbtf.IntEncoding((c.u32(data)>>24)&0xf))}
		c.memo[id] = b
		return b
	case 16: // FLOAT
		b := &types.Base{Name: c.r.str(c.u32(off)), ByteSize: int64(sizeType), Encoding: types.Float}
		c.memo[id] = b
		return b
	case 2: // PTR
		p := &types.Pointer{ByteSize: c.ptr}
		c.memo[id] = p
		p.Target = c.typ(sizeType)
		return p
	case kindArray:
		a := &types.Array{Count: int64(c.u32(data + 8))}
		c.memo[id] = a
		a.Elem = c.typ(c.u32(data))
		return a
	case kindTypedef:
		td := &types.Typedef{Name: c.r.str(c.u32(off)), Lang: types.LangC}
		c.memo[id] = td
		td.Target = c.typ(sizeType)
		return td
	case 9: // VOLATILE
		return c.qual(id, types.Volatile, "", sizeType)
	case 10: // CONST
		return c.qual(id, types.Const, "", sizeType)
	case 11: // RESTRICT
		return c.qual(id, types.Restrict, "", sizeType)
	case 18: // TYPE_TAG
		return c.qual(id, types.TypeTag, c.r.str(c.u32(off)), sizeType)
	case kindEnum, kindEnum64:
		e := &types.Enum{Name: c.r.str(c.u32(off)), ByteSize: int64(sizeType), Signed: kflag, Lang: types.LangC}
		e.Values = make([]types.EnumValue, vlen)
		for i := range vlen {
			if c.r.kinds[id] == kindEnum {
				v := c.u32(data + 8*i + 4)
				val := int64(v)
				if kflag {
					val = int64(int32(v))
				}
				e.Values[i] = types.EnumValue{Name: c.r.str(c.u32(data + 8*i)), Value: val}
				continue
			}
			lo, hi := c.u32(data+12*i+4), c.u32(data+12*i+8)
			e.Values[i] = types.EnumValue{Name: c.r.str(c.u32(data + 12*i)), Value: int64(uint64(hi)<<32 | uint64(lo))}
		}
		c.memo[id] = e
		return e
	case 7: // FWD
		s := &types.Struct{Name: c.r.str(c.u32(off)), Incomplete: true, Lang: types.LangC}
		if kflag {
			s.Kind = types.KindUnion
		}
		c.memo[id] = s
		return s
	case kindStruct, kindUnion:
		return c.composite(id, off, kflag, vlen)
	case kindFuncProto:
		fp := &types.FuncProto{}
		c.memo[id] = fp
		fp.Return = c.typ(sizeType)
		for i := range vlen {
			nameOff, pt := c.u32(data+8*i), c.u32(data+8*i+4)
			name := c.r.str(nameOff)
			if i == vlen-1 && name == "" && pt == 0 {
				fp.Variadic = true
				break
			}
			fp.Params = append(fp.Params, types.FuncParam{Name: name, Type: c.typ(pt)})
		}
		return fp
	case 12, kindVar: // FUNC, VAR: what they stand for
		c.memo[id] = c.void
		r := c.typ(sizeType)
		c.memo[id] = r
		return r
	}
	// Datasec, a declaration tag named as a type: opaque, with no size.
	return c.void
}

func (c *rawConverter) qual(id uint32, k types.QualKind, tag string, target uint32) types.Type {
	q := &types.Qualifier{Kind: k, Tag: tag}
	c.memo[id] = q
	q.Target = c.typ(target)
	return q
}

func (c *rawConverter) composite(id uint32, off int, bitfield bool, vlen int) types.Type {
	kind := types.KindStruct
	if c.r.kinds[id] == kindUnion {
		kind = types.KindUnion
	}
	s := &types.Struct{Kind: kind, Name: c.r.str(c.u32(off)), ByteSize: int64(c.u32(off + 8)), Lang: types.LangC}
	c.memo[id] = s
	s.Members = make([]types.Member, vlen)
	data := off + 12
	for i := range vlen {
		mt, moff := c.u32(data+12*i+4), c.u32(data+12*i+8)
		m := &s.Members[i]
		m.Name = c.r.str(c.u32(data + 12*i))
		m.Type = c.typ(mt)
		m.Offset = types.Bits(moff)
		if bitfield {
			m.BitSize = types.Bits(moff >> 24)
			m.Offset = types.Bits(moff & 0xffffff)
		} else if bitOff, bits, ok := c.legacyBitfield(mt); ok {
			m.Offset += bitOff
			m.BitSize = bits
		}
	}
	for _, tag := range c.r.declTags[id] {
		toff := int(c.r.offs[tag])
		value := c.r.str(c.u32(toff))
		switch idx := int32(c.u32(toff + 12)); {
		case idx == -1:
			s.Tags = append(s.Tags, value)
		case idx >= 0 && int(idx) < vlen:
			s.Members[idx].Tags = append(s.Members[idx].Tags, value)
		default:
			panic(invalid("declaration tag component", uint32(idx)))
		}
	}
	c.pending = append(c.pending, s)
	return s
}

// legacyBitfield reads the bit offset and size an integer type id records
// for a member of a struct without the kind flag (BTF before bitfields
// were recorded on members), as cilium/ebpf applies them.
func (c *rawConverter) legacyBitfield(id uint32) (off, bits types.Bits, ok bool) {
	if id == 0 || int(id) >= len(c.r.offs) || c.r.kinds[id] != kindInt {
		return 0, 0, false
	}
	rec := int(c.r.offs[id])
	size, enc := c.u32(rec+8), c.u32(rec+12)
	off, bits = types.Bits((enc>>16)&0xff), types.Bits(enc&0xff)
	if off > 0 || uint32(bits/8) != size {
		return off, bits, true
	}
	return 0, 0, false
}
