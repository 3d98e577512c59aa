package dwarf

import (
	"encoding/binary"

	"github.com/binscope/binscope/dwarf/loclist"
	"github.com/binscope/binscope/internal/leb128"
)

// The functions walk decodes some 20,000 subprograms and inline sites of
// a C++ program. Through debug/dwarf each costs a seek, a decode of every
// attribute into its own allocation, and for an inline site with
// DW_AT_ranges a second decode of its unit's DIE to find the base
// address. Here each is decoded from the scan's bytes by the one decoder
// (decode.go) into one reused entry, and its ranges are read with the
// unit's context kept from its unit DIE; the typed readers (quickParam,
// quickAttrs) read the few attributes a walk keeps without an entry.

// quickUnit is what the range lists of a unit's DIEs need of it: the
// bases its unit DIE gives and the sections they index.
type quickUnit struct {
	ok           bool   // the unit's DIE was read
	base         uint64 // DW_AT_entry_pc, else DW_AT_low_pc: where range offsets count from
	addrBase     int64  // DW_AT_addr_base
	hasAddrBase  bool   // 0 is a base too: the GNU split units' (gnusplit.go)
	rnglistsBase int64  // DW_AT_rnglists_base
	addr         []byte // .debug_addr
	rnglists     []byte // .debug_rnglists
	ranges       []byte // .debug_ranges
}

// setUnit keeps what the walk's range lists of the unit of cu need.
func (de *dieEntries) setUnit(cu *Entry) {
	u := quickUnit{ok: true}
	if v, ok := cu.Uint(AttrEntrypc); ok {
		u.base = v
	} else {
		u.base, _ = cu.Uint(AttrLowpc)
	}
	u.addrBase, u.hasAddrBase = cu.Int(AttrAddrBase)
	u.rnglistsBase, _ = cu.Int(AttrRnglistsBase)
	d := de.f.Debug
	u.addr, u.rnglists, u.ranges = d.DWARFSection(".debug_addr"), d.DWARFSection(".debug_rnglists"), d.DWARFSection(".debug_ranges")
	de.unit = u
}

// decoded decodes d, the DIE the scan just read, into the reused entry
// quickE; a DIE it cannot decode is errScan (see full).
func (de *dieEntries) decoded(d die) (*Entry, error) {
	if err := de.dd.decodeInto(d, &de.quickE); err != nil {
		return nil, errScan
	}
	return &de.quickE, nil
}

// field decodes the attribute at pos of the DIE the scan just read with
// the one value decoder (entryDecoder.field); false for a malformed
// value.
func (de *dieEntries) fieldAt(pos int, sp attrSpec, fl *Field) bool {
	if de.dd.setBases() != nil {
		return false
	}
	_, err := de.dd.field(pos, sp.form, sp, fl)
	return err == nil
}

// address reads an address form's value at pos: DW_FORM_addr, or an
// entry of .debug_addr (DW_FORM_addrx*).
func (de *dieEntries) address(pos int, sp attrSpec) (uint64, bool) {
	var fl Field
	if !de.fieldAt(pos, sp, &fl) || fl.kind != kindUint || fl.Class() != ClassAddress {
		return 0, false
	}
	return fl.n, true
}

// constClass is the class debug/dwarf gives a constant form's value of
// attribute a in a unit of version v: DWARF 2 and 3 encode the section
// offsets DWARF 4 gives DW_FORM_sec_offset (DW_AT_location's location
// list, DW_AT_ranges, DW_AT_stmt_list) as constants, which debug/dwarf
// classes by their attribute.
func constClass(a Attr, v int) Class {
	if c := ptrClass(a); v < 4 && c != ClassUnknown {
		return c
	}
	return ClassConstant
}

// addrx is entry i of the unit's .debug_addr table, of addresses of size
// bytes.
func (u *quickUnit) addrx(i uint64, size int, order binary.ByteOrder) (uint64, bool) {
	if !u.hasAddrBase {
		return 0, false
	}
	return addrEntry(u.addr, u.addrBase, i, size, order)
}

// DW_RLE_* codes.
const (
	rleEndOfList = iota
	rleBaseAddressx
	rleStartxEndx
	rleStartxLength
	rleOffsetPair
	rleBaseAddress
	rleStartEnd
	rleStartLength
)

// rnglist reads the DWARF 5 range list at off in .debug_rnglists.
func (de *dieEntries) rnglist(off int64, ret [][2]uint64) ([][2]uint64, bool) {
	return de.unit.rnglist(off, ret, de.sc.u.addrSize, de.sc.order)
}

// rnglist reads the DWARF 5 range list at off in .debug_rnglists, in a
// unit of addresses of size bytes.
func (u *quickUnit) rnglist(off int64, ret [][2]uint64, size int, order binary.ByteOrder) ([][2]uint64, bool) {
	b := u.rnglists
	if off < 0 || off >= int64(len(b)) {
		return nil, false
	}
	b = b[off:]
	r := loclist.Reader{B: b, Order: order, AddrSize: size, OK: true}
	base := u.base
	for n := 0; n < loclist.MaxEntries && r.OK; n++ {
		switch r.Byte() {
		case rleEndOfList:
			return ret, r.OK
		case rleBaseAddressx:
			base, r.OK = u.addrx(r.Uleb(), size, order)
		case rleStartxEndx:
			lo, ok1 := u.addrx(r.Uleb(), size, order)
			hi, ok2 := u.addrx(r.Uleb(), size, order)
			r.OK = r.OK && ok1 && ok2
			ret = append(ret, [2]uint64{lo, hi})
		case rleStartxLength:
			lo, ok := u.addrx(r.Uleb(), size, order)
			r.OK = r.OK && ok
			ret = append(ret, [2]uint64{lo, lo + r.Uleb()})
		case rleOffsetPair:
			lo := r.Uleb()
			ret = append(ret, [2]uint64{base + lo, base + r.Uleb()})
		case rleBaseAddress:
			base = r.Addr()
		case rleStartEnd:
			lo := r.Addr()
			ret = append(ret, [2]uint64{lo, r.Addr()})
		case rleStartLength:
			lo := r.Addr()
			ret = append(ret, [2]uint64{lo, lo + r.Uleb()})
		default:
			return nil, false
		}
	}
	return nil, false
}

// rangeList reads the DWARF 4 range list at off in .debug_ranges.
func (de *dieEntries) rangeList(off int64, ret [][2]uint64) ([][2]uint64, bool) {
	return de.unit.rangeList(off, ret, de.sc.u.addrSize, de.sc.order)
}

// rangeList reads the DWARF 4 range list at off in .debug_ranges, in a
// unit of addresses of sz bytes.
func (u *quickUnit) rangeList(off int64, ret [][2]uint64, sz int, order binary.ByteOrder) ([][2]uint64, bool) {
	b := u.ranges
	if off < 0 || off > int64(len(b)) {
		return nil, false
	}
	r := loclist.Reader{B: b[off:], Order: order, AddrSize: sz, OK: true}
	base := u.base
	for len(r.B) > 0 && r.OK {
		lo, hi := r.Addr(), r.Addr()
		switch {
		case !r.OK:
			return nil, false
		case lo == 0 && hi == 0:
			return ret, true
		case lo == ^uint64(0)>>uint((8-sz)*8):
			base = hi
		default:
			ret = append(ret, [2]uint64{base + lo, base + hi})
		}
	}
	return ret, r.OK
}

// ptrClass is the class debug/dwarf gives a DW_FORM_sec_offset value of
// attribute a.
func ptrClass(a Attr) Class {
	switch a {
	case AttrLocation, AttrStringLength, AttrReturnAddr, AttrDataMemberLoc,
		AttrFrameBase, AttrSegment, AttrStaticLink, AttrUseLocation,
		AttrVtableElemLoc, AttrLoclistsBase:
		return ClassLocListPtr
	case AttrRanges, AttrStartScope:
		return ClassRangeListPtr
	case AttrStmtList:
		return ClassLinePtr
	case AttrMacroInfo:
		return ClassMacPtr
	case AttrStrOffsetsBase:
		return ClassStrOffsetsPtr
	case AttrAddrBase:
		return ClassAddrPtr
	case AttrRnglistsBase:
		return ClassRngListsPtr
	}
	return ClassUnknown
}

// blockClass is the class debug/dwarf gives a DW_FORM_block* value of
// attribute a: a location description's attributes hold expressions.
func blockClass(a Attr) Class {
	switch a {
	case AttrLocation, AttrByteSize, AttrBitOffset, AttrBitSize, AttrStringLength,
		AttrLowerBound, AttrReturnAddr, AttrStrideSize, AttrUpperBound, AttrCount,
		AttrDataMemberLoc, AttrFrameBase, AttrSegment, AttrStaticLink, AttrUseLocation,
		AttrVtableElemLoc, AttrAllocated, AttrAssociated, AttrDataLocation, AttrStride:
		return ClassExprLoc
	}
	return ClassBlock
}

// param reads the formal parameter e, which next returned as the scratch
// entry, from the scan's bytes; a form the scan does not read, or a
// malformed value, is errScan (see attrs).
func (de *dieEntries) param(e *Entry) (param, error) {
	if e == &de.scratchE {
		if p, ok := de.quickParam(); ok {
			return p, nil
		}
	}
	return param{}, errScan
}

// quickParam reads the formal parameter just scanned without an entry
// (C++ has two for every subprogram, and an entry costs an allocation for
// most of its values), with the values debug/dwarf gives; false for a form
// it does not read or a malformed value.
func (de *dieEntries) quickParam() (param, bool) {
	d, s := de.last, de.sc
	p := param{off: d.off}
	var konst int64
	hasKonst := false
	pos := d.attrs
	for _, sp := range d.decl.specs {
		next, err := s.skip(pos, sp)
		if err != nil {
			return param{}, false
		}
		ok := true
		if sp.form == fIndirect {
			if pos, sp, ok = s.indirect(pos, sp); !ok {
				return param{}, false
			}
		}
		switch sp.attr {
		case AttrName:
			var b []byte
			b, _, ok = s.strBytes(pos, sp, de.strs)
			p.name = secString(b)
		case AttrType:
			p.typ, ok = s.walkRef(pos, sp)
		case AttrAbstractOrigin:
			p.origin, ok = s.walkRef(pos, sp)
		case AttrVarParam:
			p.result, ok = s.flagAt(pos, sp.form)
		case AttrLocation:
			p.loc, ok = s.loc(pos, next, sp)
			p.hasLoc = ok
		case AttrConstValue:
			konst, hasKonst = s.constant(pos, sp)
		}
		if !ok {
			return param{}, false
		}
		pos = next
	}
	if hasKonst && !p.hasLoc {
		k := konst // on the heap only here: konst itself is not, for every other parameter
		p.konst = &k
	}
	return p, true
}

// ref reads a reference within the unit or .debug_info (DW_FORM_ref*),
// as debug/dwarf's Offset.
func (s *scan) ref(pos int, sp attrSpec) (Offset, bool) {
	v, ok := s.refOffset(pos, sp)
	return Offset(v), ok
}

// refOffset is a reference's offset in .debug_info, not cut to 32 bits.
func (s *scan) refOffset(pos int, sp attrSpec) (uint64, bool) {
	b := s.info[pos:s.u.end]
	base := uint64(s.u.start)
	refAddr := s.u.offSize
	if s.u.version == 2 {
		refAddr = s.u.addrSize
	}
	switch {
	case sp.form == fRef1 && len(b) >= 1:
		return base + uint64(b[0]), true
	case sp.form == fRef2 && len(b) >= 2:
		return base + uint64(s.order.Uint16(b)), true
	case sp.form == fRef4 && len(b) >= 4:
		return base + uint64(s.order.Uint32(b)), true
	case sp.form == fRef8 && len(b) >= 8:
		return base + s.order.Uint64(b), true
	case sp.form == fRefUdata:
		x, n := leb128.Uint(b)
		return base + x, n > 0
	case sp.form == fRefAddr && refAddr == 4 && len(b) >= 4:
		return uint64(s.order.Uint32(b)), true
	case sp.form == fRefAddr && refAddr == 8 && len(b) >= 8:
		return s.order.Uint64(b), true
	case (sp.form == fGNURefAlt && s.u.offSize == 4 || sp.form == fRefSup4) && len(b) >= 4:
		if v := uint64(s.order.Uint32(b)); v < uint64(altBit) {
			return uint64(altBit) | v, true // in the dwz alternate file
		}
	case (sp.form == fGNURefAlt && s.u.offSize == 8 || sp.form == fRefSup8) && len(b) >= 8:
		if v := s.order.Uint64(b); v < uint64(altBit) {
			return uint64(altBit) | v, true
		}
	}
	return 0, false
}

// loc reads a location attribute whose value lies at [pos, next) as
// readLocAttr reads debug/dwarf's value of it.
func (s *scan) loc(pos, next int, sp attrSpec) (locAttr, bool) {
	switch sp.form {
	case fExprloc, fBlock, fBlock1, fBlock2, fBlock4:
		_, hdr := s.blockLen(s.info[pos:s.u.end], sp.form)
		return locAttr{expr: s.info[pos+hdr : next : next]}, true
	case fSecOffset:
		if s.u.offSize == 8 {
			return locAttr{list: true, offset: int64(s.order.Uint64(s.info[pos:]))}, true
		}
		return locAttr{list: true, offset: int64(s.order.Uint32(s.info[pos:]))}, true
	case fLoclistx:
		v, n := leb128.Uint(s.info[pos:s.u.end])
		return locAttr{list: true, index: v, indexed: true}, n > 0
	}
	if v, ok := s.constant(pos, sp); ok {
		return locAttr{list: true, offset: v}, true // a constant reads as debug/dwarf's int64
	}
	return locAttr{}, false
}

// constant reads a constant form's value as debug/dwarf's int64; false
// for other forms.
func (s *scan) constant(pos int, sp attrSpec) (int64, bool) {
	b := s.info[pos:s.u.end]
	switch {
	case sp.form == fData1 && len(b) >= 1:
		return int64(b[0]), true
	case sp.form == fData2 && len(b) >= 2:
		return int64(s.order.Uint16(b)), true
	case sp.form == fData4 && len(b) >= 4:
		return int64(s.order.Uint32(b)), true
	case sp.form == fData8 && len(b) >= 8:
		return int64(s.order.Uint64(b)), true
	case sp.form == fSdata:
		v, n := leb128.Int(b)
		return v, n > 0
	case sp.form == fUdata:
		v, n := leb128.Uint(b)
		return int64(v), n > 0
	case sp.form == fImplicitConst:
		return sp.implicit, true
	}
	return 0, false
}

// quickEntry decodes n from the scan's bytes into an entry of its own;
// false leaves it to the dieReader. A type conversion reads thousands of
// DIEs, one at a time (under l.mu).
func (l *lazyEntries) quickEntry(n *node) (*Entry, bool) {
	de, d, ok := l.scanTo(n)
	if !ok {
		return nil, false
	}
	e, err := de.dd.decode(d)
	return e, err == nil
}

// scanTo positions l's scan on n's DIE (in n's unit) and reads it. l is
// locked.
func (l *lazyEntries) scanTo(n *node) (*dieEntries, die, bool) {
	if l.ix == nil || int(n.unit) >= len(l.ix.units) {
		return nil, die{}, false
	}
	u := &l.ix.units[n.unit]
	if u.hdr.table == nil || u.entry == nil || (u.entry.Tag != TagCompileUnit && u.entry.Tag != TagPartialUnit) {
		return nil, die{}, false
	}
	if l.de == nil {
		l.de = l.f.dieEntries(funcWalk)
	}
	de := l.de
	if de.sc.u.start != u.hdr.start || de.sc.u.table != u.hdr.table || de.unitAt != u.hdr.start {
		de.sc.u, de.unitAt = u.hdr, u.hdr.start
		de.strs.base = -1
		if base, ok := u.entry.Int(AttrStrOffsetsBase); ok {
			de.strs.base = base
		}
		de.setUnit(u.entry)
	}
	if int(n.off) < u.hdr.start || int(n.off) >= u.hdr.end {
		return nil, die{}, false
	}
	de.sc.pos = int(n.off)
	d, ok, err := de.sc.next()
	if err != nil || !ok || d.off != n.off || d.tag != n.tag {
		return nil, die{}, false
	}
	return de, d, true
}
