package dwarf

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/binscope/binscope/dwarf/loclist"
	"github.com/binscope/binscope/internal/leb128"
)

// Split DWARF 4, the GNU extension (gcc -gdwarf-4 -gsplit-dwarf), says
// the same as DWARF 5's in other words: the skeleton is a DWARF 4
// compile unit with DW_AT_GNU_dwo_name, DW_AT_GNU_dwo_id (the unit
// header has no id), DW_AT_GNU_addr_base and DW_AT_GNU_ranges_base; the
// .dwo unit is a DWARF 4 compile unit whose DIE carries the DWO id, whose
// strings and addresses are indices (DW_FORM_GNU_str_index into a
// .debug_str_offsets.dwo without a header, DW_FORM_GNU_addr_index and
// DW_OP_GNU_addr_index into the binary's .debug_addr), whose location
// lists are .debug_loc.dwo's DW_LLE_GNU_* entries (addresses as indices,
// a 4-byte length, a 2-byte expression length), and whose DW_AT_ranges
// are offsets into the binary's .debug_ranges from DW_AT_GNU_ranges_base.
//
// addGNU joins such a unit as add joins a DWARF 5 one, into a DWARF 5
// compile unit of the same length whose DIEs keep their offsets: the
// header grows by one byte and the unit DIE gives up DW_AT_GNU_dwo_id's
// 8 bytes for DW_AT_low_pc (DW_FORM_addrx3) and DW_AT_ranges (4 bytes);
// the index forms become DW_FORM_addrx and DW_FORM_strx (both ULEB128, as
// theirs); each DIE's DW_AT_ranges and location lists, rewritten in
// DWARF 5's lists into the joined sections, get those lists' offsets in
// place of theirs (4 bytes each).

// Attributes of the GNU extension.
const (
	attrGNUDwoID      = Attr(0x2131)
	attrGNURangesBase = Attr(0x2132)
	attrGNUAddrBase   = Attr(0x2133)
)

// Forms of the GNU extension and the DWARF 5 forms that say the same.
const (
	fGNUAddrIndex = 0x1f01 // DW_FORM_addrx
	fGNUStrIndex  = 0x1f02 // DW_FORM_strx
)

// gnuSkeleton is the skeleton a DWARF 4 unit entry e at unit offset pos
// is, ok false when it is none.
func (f *File) gnuSkeleton(e *Entry, pos int) (skeleton, bool, error) {
	name, _ := e.Str(attrGNUDwoName)
	if name == "" {
		return skeleton{}, false, nil
	}
	s := skeleton{off: pos, gnu: true, dwoName: name, stmt: -1}
	switch id := e.Val(attrGNUDwoID).(type) {
	case int64:
		s.id = uint64(id)
	case uint64:
		s.id = id
	default:
		return skeleton{}, false, fmt.Errorf("skeleton unit at %#x: no DW_AT_GNU_dwo_id", pos)
	}
	s.compDir, _ = e.Str(AttrCompDir)
	s.low, _ = e.Uint(AttrLowpc)
	if v, ok := e.Int(AttrStmtList); ok {
		s.stmt = v
	}
	s.addrBase, _ = e.Int(attrGNUAddrBase)
	s.rangesBase, _ = e.Int(attrGNURangesBase)
	var err error
	if s.ranges, err = f.ranges(e); err != nil {
		return skeleton{}, false, fmt.Errorf("skeleton unit at %#x: %w", pos, err)
	}
	return s, true, nil
}

// gnuAbbrevs is the abbreviation table at the start of b with the GNU
// index forms written as DWARF 5's, up to and with its terminating 0.
func gnuAbbrevs(b []byte) ([]byte, error) {
	var out []byte
	pos := 0
	uleb := func() (uint64, error) { return ulebAt(b, &pos) }
	for {
		code, err := uleb()
		if err != nil {
			return nil, err
		}
		out = leb128.AppendUint(out, code)
		if code == 0 {
			return out, nil
		}
		tag, err := uleb()
		if err != nil || pos >= len(b) {
			return nil, errScan
		}
		out = append(leb128.AppendUint(out, tag), b[pos])
		pos++
		for {
			attr, err1 := uleb()
			form, err2 := uleb()
			if err1 != nil || err2 != nil {
				return nil, errScan
			}
			switch form {
			case fGNUAddrIndex:
				form = fAddrx
			case fGNUStrIndex:
				form = fStrx
			case fImplicitConst, fIndirect:
				return nil, fmt.Errorf("form %#x in a DWARF 4 split unit", form)
			}
			out = leb128.AppendUint(leb128.AppendUint(out, attr), form)
			if attr == 0 && form == 0 {
				break
			}
		}
	}
}

// gnuScan is a scan of a DWARF 4 split unit (header included) whose
// abbreviations are at abbrevOff in abbrev, read with DWARF 5's forms;
// the unit's copy it reads says abbreviation offset 0. It stands at the
// unit DIE, which it returns.
func gnuScan(unit, abbrev []byte, order binary.ByteOrder) (*scan, die, error) {
	if len(unit) < 12 || order.Uint32(unit) >= 0xfffffff0 || order.Uint16(unit[4:]) != 4 || unit[10] != 8 {
		return nil, die{}, fmt.Errorf("not a DWARF 4 unit of 32-bit format and 8-byte addresses")
	}
	off := uint64(order.Uint32(unit[6:]))
	if off >= uint64(len(abbrev)) {
		return nil, die{}, fmt.Errorf("abbreviations at %#x past the section's %d bytes", off, len(abbrev))
	}
	table, err := gnuAbbrevs(abbrev[off:])
	if err != nil {
		return nil, die{}, fmt.Errorf("abbreviations at %#x: %w", off, err)
	}
	u := slices.Clone(unit)
	order.PutUint32(u[6:], 0)
	sc := &scan{info: u, abbrev: table, order: order, tables: &abbrevTables{m: map[tableKey]*abbrevTable{}}}
	if err := sc.unit(); err != nil {
		return nil, die{}, err
	}
	cu, ok, err := sc.next()
	if err != nil || !ok || cu.tag != TagCompileUnit {
		return nil, die{}, fmt.Errorf("no compile unit entry first")
	}
	return sc, cu, nil
}

// gnuIDAt is where the value of the unit DIE's DW_AT_GNU_dwo_id (data8)
// is in sc's unit, with the index of its spec; false for none.
func gnuIDAt(sc *scan, cu die) (pos, spec int, ok bool) {
	for i, sp := range cu.decl.specs {
		if sp.attr == attrGNUDwoID && sp.form == fData8 {
			p, _, ok := sc.attrAt(cu, i, -1)
			return p, i, ok
		}
	}
	return 0, 0, false
}

// gnuDwoUnit finds the DWARF 4 split unit whose DIE says DWO id id in a
// .dwo's sections.
func gnuDwoUnit(secs map[string][]byte, id uint64, order binary.ByteOrder) ([]byte, bool) {
	info := secs[".debug_info.dwo"]
	for pos := 0; pos+12 <= len(info); {
		length := int(order.Uint32(info[pos:]))
		if length >= 0xfffffff0 || pos+4+length > len(info) {
			return nil, false
		}
		unit := info[pos : pos+4+length]
		if sc, cu, err := gnuScan(unit, secs[".debug_abbrev.dwo"], order); err == nil {
			if at, _, ok := gnuIDAt(sc, cu); ok && at+8 <= len(unit) && order.Uint64(unit[at:]) == id {
				return unit, true
			}
		}
		pos += 4 + length
	}
	return nil, false
}

// addGNU appends one DWARF 4 split unit (see the top of this file),
// whose base address is at lowAt in the joined .debug_addr and ranges at
// rangesAt in .debug_rnglists.
func (j *joined) addGNU(u splitUnit, lowAt, rangesAt int) error {
	sk := u.sk
	sc, cu, err := gnuScan(u.unit, u.abbrev, j.order)
	if err != nil {
		return fmt.Errorf("split unit of DWO id %#x: %w", sk.id, err)
	}
	idAt, idSpec, ok := gnuIDAt(sc, cu)
	if !ok {
		return fmt.Errorf("split unit of DWO id %#x: no DW_AT_GNU_dwo_id of 8 bytes in its DIE", sk.id)
	}
	cuEnd := sc.pos
	// The unit's strings: a DWARF 5 contribution of its offsets.
	str := j.order.AppendUint32(nil, uint32(len(u.strOffsets)+4))
	str = append(j.order.AppendUint16(str, 5), 0, 0)
	u.strOffsets = append(str, u.strOffsets...)
	bases := j.unitBases(u)
	lowAt -= int(sk.addrBase)
	if lowAt < 0 || lowAt%8 != 0 || lowAt/8 >= 1<<24 {
		return fmt.Errorf("split unit of DWO id %#x: DW_AT_GNU_addr_base %#x not on an 8-byte entry of .debug_addr within 2^24", sk.id, sk.addrBase)
	}
	code, n := leb128.Uint(sc.info[cu.off:])
	table, err := rewriteAbbrevs(sc.abbrev, code, n, bases, &unitAddrs{drop: idSpec, lowForm: fAddrx3})
	if err != nil {
		return fmt.Errorf("split unit of DWO id %#x: %w", sk.id, err)
	}
	lists := &gnuLists{j: j, u: u, loc: map[uint32]uint32{}, rng: map[uint32]uint32{}, locStart: len(j.loclists), rngStart: len(j.rnglists)}
	j.loclists = append(j.loclists, make([]byte, 12)...)
	j.rnglists = append(j.rnglists, make([]byte, 12)...)
	if err := lists.rewrite(sc); err != nil {
		return fmt.Errorf("split unit of DWO id %#x: %w", sk.id, err)
	}
	lists.close()
	// The unit: a compile unit header one byte longer, the unit DIE
	// without the DWO id and with the skeleton's code, the rest as it is
	// (the lists' offsets rewritten).
	in := sc.info
	unit := make([]byte, 0, len(in))
	unit = append(unit, in[:4]...)
	unit = j.order.AppendUint16(unit, 5)
	unit = append(unit, 1, 8) // DW_UT_compile, address size
	unit = j.order.AppendUint32(unit, uint32(len(j.abbrev)))
	unit = append(unit, table.code...)
	unit = append(unit, in[int(cu.off)+n:idAt]...)
	unit = append(unit, in[idAt+8:cuEnd]...)
	unit = append(unit, byte(lowAt/8), byte(lowAt/8>>8), byte(lowAt/8>>16)) // DW_FORM_addrx3
	if j.order.Uint16([]byte{1, 0}) != 1 {                                  // big-endian
		k := len(unit) - 3
		unit[k], unit[k+2] = unit[k+2], unit[k]
	}
	unit = j.order.AppendUint32(unit, uint32(rangesAt))
	unit = append(unit, in[cuEnd:]...)
	if len(unit) != len(in) {
		return fmt.Errorf("split unit of DWO id %#x: joined unit of %d bytes for %d", sk.id, len(unit), len(in))
	}
	j.abbrev = append(j.abbrev, table.bytes...)
	j.info = append(j.info, unit...)
	return nil
}

// gnuLists rewrites one unit's location lists and ranges into DWARF 5
// contributions of the joined .debug_loclists and .debug_rnglists, each
// list once.
type gnuLists struct {
	j                  *joined
	u                  splitUnit
	loc, rng           map[uint32]uint32 // the unit's offsets -> the joined sections'
	locStart, rngStart int               // the contributions' headers
}

// locationAttrs are the attributes whose DW_FORM_sec_offset is a
// location list in DWARF 4.
var locationAttrs = map[Attr]bool{AttrLocation: true, AttrFrameBase: true, AttrStringLength: true,
	AttrReturnAddr: true, AttrStaticLink: true, AttrUseLocation: true, AttrVtableElemLoc: true,
	AttrDataMemberLoc: true, AttrSegment: true}

// rewrite walks every DIE after the unit DIE, putting the joined lists'
// offsets in place of the unit's.
func (g *gnuLists) rewrite(sc *scan) error {
	for {
		d, ok, err := sc.next()
		if err != nil {
			return err
		}
		if !ok || int(d.off) >= sc.u.end {
			return nil
		}
		if d.tag == 0 {
			continue
		}
		pos := d.attrs
		for _, sp := range d.decl.specs {
			if sp.form == fSecOffset && (sp.attr == AttrRanges || locationAttrs[sp.attr]) {
				v := g.j.order.Uint32(sc.info[pos:])
				var nv uint32
				if sp.attr == AttrRanges {
					nv, err = g.ranges(v)
				} else {
					nv, err = g.location(v)
				}
				if err != nil {
					return fmt.Errorf("DIE at %#x: %w", d.off, err)
				}
				g.j.order.PutUint32(sc.info[pos:], nv)
			}
			if pos, err = sc.skip(pos, sp); err != nil {
				return err
			}
		}
	}
}

// location is the joined offset of the .debug_loc.dwo list at off: its
// DW_LLE_GNU_* entries as DWARF 5's (the indices stay indices into the
// same .debug_addr).
func (g *gnuLists) location(off uint32) (uint32, error) {
	if at, ok := g.loc[off]; ok {
		return at, nil
	}
	list, err := loclist.GNU(g.u.loc, int64(off), g.j.order)
	if err != nil {
		return 0, err
	}
	at := uint32(len(g.j.loclists))
	out := g.j.loclists
	for _, e := range list {
		switch e.Kind {
		case loclist.GNUBaseAddress:
			out = leb128.AppendUint(append(out, lleBaseAddrx), e.A)
			continue
		case loclist.GNUStartEnd:
			out = leb128.AppendUint(leb128.AppendUint(append(out, lleStartxEndx), e.A), e.B)
		case loclist.GNUStartLength:
			out = leb128.AppendUint(leb128.AppendUint(append(out, lleStartxLength), e.A), e.B)
		}
		out = append(leb128.AppendUint(out, uint64(len(e.Expr))), e.Expr...)
	}
	g.j.loclists = append(out, lleEnd)
	g.loc[off] = at
	return at, nil
}

// DW_LLE_* codes written.
const (
	lleEnd          = 0
	lleBaseAddrx    = 1
	lleStartxEndx   = 2
	lleStartxLength = 3
)

// ranges is the joined offset of the range list at off from the
// skeleton's DW_AT_GNU_ranges_base in the binary's .debug_ranges
// (DWARF 4: address pairs from the unit's base address, a base address
// selection, 0 0 at the end), as DW_RLE_start_end entries.
func (g *gnuLists) ranges(off uint32) (uint32, error) {
	if at, ok := g.rng[off]; ok {
		return at, nil
	}
	b := g.j.ranges4
	o := g.u.sk.rangesBase + int64(off)
	if o < 0 || o >= int64(len(b)) {
		return 0, fmt.Errorf("range list at %#x past .debug_ranges's %d bytes", o, len(b))
	}
	at := uint32(len(g.j.rnglists))
	r := loclist.Reader{B: b[o:], Order: g.j.order, AddrSize: 8, OK: true}
	base, out := g.u.sk.low, g.j.rnglists
	for n := 0; n < loclist.MaxEntries && r.OK; n++ {
		lo, hi := r.Addr(), r.Addr()
		switch {
		case !r.OK:
		case lo == 0 && hi == 0:
			g.j.rnglists = append(out, 0) // DW_RLE_end_of_list
			g.rng[off] = at
			return at, nil
		case lo == ^uint64(0):
			base = hi
		default:
			out = append(out, rleStartEnd)
			out = g.j.order.AppendUint64(g.j.order.AppendUint64(out, base+lo), base+hi)
		}
	}
	return 0, fmt.Errorf("range list at %#x of .debug_ranges unreadable", o)
}

// close writes the contributions' headers.
func (g *gnuLists) close() {
	copy(g.j.loclists[g.locStart:], contribution(g.j.order, 0, nil))
	g.j.order.PutUint32(g.j.loclists[g.locStart:], uint32(len(g.j.loclists)-g.locStart-4))
	copy(g.j.rnglists[g.rngStart:], contribution(g.j.order, 0, nil))
	g.j.order.PutUint32(g.j.rnglists[g.rngStart:], uint32(len(g.j.rnglists)-g.rngStart-4))
}
