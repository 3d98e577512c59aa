package dwarf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"unsafe"

	"github.com/binscope/binscope/internal/leb128"
)

// keyAttrs are the attributes of a DIE a dedup key says, as debug/dwarf
// decodes them (int64, bool, string, []byte, Offset, or nil when
// absent).
type keyAttrs struct {
	tag                                   Tag
	name                                  []byte
	size, decl, typ, loc, dbo, bo, cvalue any
}

// dedupKey appends to b a description of the named type n by what its
// definition says, without converting it: tag, qualified name, size, and
// each part's tag, name and position. Identical keys in different compile
// units are one type. Most named types of a C program are defined again in
// every unit that includes their header, so the attributes come from the
// DIEs' bytes (rawAttrs), with the values debug/dwarf gives (the tests
// check both give the same key).
func (c *converter) dedupKey(b []byte, n *node) ([]byte, error) {
	if n.end != 0 {
		if err := c.f.expand(c.ix, n); err != nil {
			return b, err
		}
	}
	var a keyAttrs
	if err := c.keyAttrs(n, &a); err != nil {
		return b, err
	}
	b = strconv.AppendInt(b, int64(a.tag), 10)
	b = append(b, '|')
	b = append(b, n.scope...)
	b = append(b, a.name...)
	b = append(b, '|')
	b = appendVal(b, a.size)
	b = append(b, '|')
	b = appendVal(b, a.decl)
	if a.tag == TagTypedef {
		if off, ok := a.typ.(Offset); ok {
			t := c.ix.nodes.get(off)
			if t == nil && c.ix.saved != nil {
				t = c.ix.saved.node(c.ix, off) // in a unit not indexed yet
			}
			if t != nil {
				var ta keyAttrs
				if err := c.keyAttrs(t, &ta); err != nil {
					return b, err
				}
				b = append(b, '|')
				b = strconv.AppendInt(b, int64(ta.tag), 10)
				b = append(b, '|')
				b = append(b, ta.name...)
				b = append(b, '|')
				b = appendVal(b, ta.size)
				if len(ta.name) == 0 {
					// typedef struct { ... } name: the body tells apart.
					b = append(b, '{')
					var err error
					if b, err = c.dedupKey(b, t); err != nil {
						return b, err
					}
					b = append(b, '}')
				}
			}
		}
		return b, nil
	}
	for _, k := range n.kids {
		var ka keyAttrs
		if err := c.keyAttrs(k, &ka); err != nil {
			return b, err
		}
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(ka.tag), 10)
		b = append(b, ',')
		b = append(b, ka.name...)
		for _, v := range [...]any{ka.loc, ka.dbo, ka.bo, ka.cvalue} {
			b = append(b, ',')
			b = appendVal(b, v)
		}
	}
	return b, nil
}

// appendVal appends v as fmt's %v prints it.
func appendVal(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "<nil>"...)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return append(b, v...)
	case []byte:
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendUint(b, uint64(x), 10)
		}
		return append(b, ']')
	}
	return fmt.Appendf(b, "%v", v)
}

// keyAttrs reads n's key attributes from the DIE's bytes (rawAttrs); a
// DIE it cannot read is a *elfx.DecodeError naming it. An index built
// over debug/dwarf's Reader (the tests' oracle) reads them through
// keyOracle.
func (c *converter) keyAttrs(n *node, a *keyAttrs) error {
	if c.rawAttrs(n, a) {
		return nil
	}
	if c.keyOracle != nil {
		var err error
		*a, err = c.keyOracle(n) // by value: a stays on the caller's stack
		return err
	}
	return c.f.decodeError(n.off, "cannot read the attributes of the %v entry", n.tag)
}

// rawAttrs reads n's key attributes from the DIE's bytes, decoding each
// value as debug/dwarf does; false when the index was not built over a
// scan, or a form is one it does not read or a value is malformed.
func (c *converter) rawAttrs(n *node, a *keyAttrs) bool {
	if n.unit < 0 || int(n.unit) >= len(c.ix.units) {
		return false
	}
	hdr := &c.ix.units[n.unit].hdr
	if hdr.table == nil {
		return false
	}
	if c.keyScan == nil {
		if c.keyScan = c.f.newScan(); c.keyScan == nil {
			return false
		}
		c.strs = c.f.strSections()
	}
	sc := c.keyScan
	sc.u = *hdr
	c.strs.base = -1
	if base, ok := c.ix.units[n.unit].entry.Int(AttrStrOffsetsBase); ok {
		c.strs.base = base
	}
	pos := int(n.off)
	if pos < hdr.start || pos >= hdr.end || hdr.end > len(sc.info) {
		return false
	}
	code, k := leb128.Uint(sc.info[pos:hdr.end])
	if k <= 0 {
		return false
	}
	d := hdr.table.get(code)
	if d == nil || d.tag != n.tag {
		return false
	}
	pos += k
	*a = keyAttrs{tag: d.tag}
	named := false
	for _, sp := range d.specs {
		if sp.form == fIndirect {
			var ok bool
			if pos, sp, ok = sc.indirect(pos, sp); !ok {
				return false
			}
		}
		var dst *any
		switch sp.attr {
		case AttrName:
			if !named {
				var ok bool
				if a.name, pos, ok = sc.strBytes(pos, sp, c.strs); !ok {
					return false
				}
				named = true
				continue
			}
		case AttrByteSize:
			dst = &a.size
		case AttrDeclaration:
			dst = &a.decl
		case AttrType:
			dst = &a.typ
		case AttrDataMemberLoc:
			dst = &a.loc
		case AttrDataBitOffset:
			dst = &a.dbo
		case AttrBitOffset:
			dst = &a.bo
		case AttrConstValue:
			dst = &a.cvalue
		}
		var err error
		if dst == nil || *dst != nil {
			if pos, err = sc.skip(pos, sp); err != nil {
				return false
			}
			continue
		}
		var ok bool
		if *dst, pos, ok = c.f.value(sc, pos, sp, c.strs); !ok {
			return false
		}
	}
	return pos <= hdr.end
}

// strSections are the sections string forms point into, and the string
// offsets base of the unit being read (-1 when it has none).
type strSections struct {
	str, lineStr, offsets []byte
	base                  int64
	alt                   []byte // the dwz alternate file's .debug_str
}

func (f *File) strSections() *strSections {
	d := f.Debug
	ss := &strSections{str: d.DWARFSection(".debug_str"), lineStr: d.DWARFSection(".debug_line_str"),
		offsets: d.DWARFSection(".debug_str_offsets"), base: -1}
	if f.alt != nil {
		ss.alt = f.alt.debugStr()
	}
	return ss
}

// secString is a string attribute's bytes (strBytes) as a string,
// without a copy: the sections a scan reads are never written once read
// (elfx reads them into buffers it only appends to, and keeps none whose
// bytes relocations change), and the string keeps its section's buffer
// alive. A C++ walk reads some 20,000 names.
func secString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// strBytes reads a string attribute's bytes at pos: inline, in .debug_str
// or .debug_line_str, or through .debug_str_offsets (DW_FORM_strx*).
func (s *scan) strBytes(pos int, sp attrSpec, ss *strSections) (v []byte, next int, ok bool) {
	sec, off, next, ok := s.strPlace(pos, sp, ss)
	if !ok {
		return nil, 0, false
	}
	i := bytes.IndexByte(sec[off:], 0)
	if i < 0 {
		return nil, 0, false
	}
	if sp.form == fString {
		next = pos + i + 1
	}
	return sec[off : off+uint64(i)], next, true
}

// strPlace is where the string attribute at pos starts: at sec[off:]
// (off within sec), and the position after the attribute (but for
// DW_FORM_string, whose end is the string's).
func (s *scan) strPlace(pos int, sp attrSpec, ss *strSections) (sec []byte, off uint64, next int, ok bool) {
	if pos > s.u.end {
		return nil, 0, 0, false
	}
	b := s.info[pos:s.u.end]
	sec, off = b, 0
	word := func(b []byte, size int) (uint64, bool) {
		switch {
		case len(b) < size:
			return 0, false
		case size == 8:
			return s.order.Uint64(b), true
		case size == 4:
			return uint64(s.order.Uint32(b)), true
		case size == 3 && s.order == binary.LittleEndian:
			return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16, true
		case size == 3:
			return uint64(b[2]) | uint64(b[1])<<8 | uint64(b[0])<<16, true
		case size == 2:
			return uint64(s.order.Uint16(b)), true
		}
		return uint64(b[0]), true
	}
	switch sp.form {
	case fString:
	case fStrp, fLineStrp, fGNUStrpAlt, fStrpSup:
		if off, ok = word(b, s.u.offSize); !ok {
			return nil, 0, 0, false
		}
		switch sp.form {
		case fStrp:
			sec = ss.str
		case fLineStrp:
			sec = ss.lineStr
		default: // in the dwz alternate file
			sec = ss.alt
		}
		next = pos + s.u.offSize
	case fStrx, fStrx1, fStrx2, fStrx3, fStrx4:
		var i uint64
		if sp.form == fStrx {
			var n int
			if i, n = leb128.Uint(b); n <= 0 {
				return nil, 0, 0, false
			}
			next = pos + n
		} else {
			if i, ok = word(b, sp.size); !ok {
				return nil, 0, 0, false
			}
			next = pos + sp.size
		}
		at := uint64(ss.base) + i*uint64(s.u.offSize)
		if ss.base < 0 || i > uint64(len(ss.offsets)) || at+uint64(s.u.offSize) > uint64(len(ss.offsets)) {
			return nil, 0, 0, false
		}
		if off, ok = word(ss.offsets[at:], s.u.offSize); !ok {
			return nil, 0, 0, false
		}
		sec = ss.str
	default:
		return nil, 0, 0, false
	}
	if off >= uint64(len(sec)) {
		return nil, 0, 0, false
	}
	return sec, off, next, true
}

// blockLen is the length of a block form's value and the size of the
// length before it.
func (s *scan) blockLen(b []byte, form uint64) (uint64, int) {
	switch form {
	case fBlock1:
		return uint64(b[0]), 1
	case fBlock2:
		return uint64(s.order.Uint16(b)), 2
	case fBlock4:
		return uint64(s.order.Uint32(b)), 4
	}
	x, n := leb128.Uint(b)
	return x, n
}
