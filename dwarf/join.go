package dwarf

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/leb128"
)

// Joining a split unit to its skeleton. The image keeps the debug file's
// sections as they are, and appends to them: each split unit (to
// .debug_info), its abbreviations (.debug_abbrev), its strings and string
// offsets (rebased onto the joined .debug_str), its location and range
// lists, a range list of the skeleton's code (.debug_rnglists) and the
// skeleton's base address (.debug_addr). The unit's own offsets stay
// valid: a split unit's header is 8 bytes longer than a compile unit's
// (the DWO id), and exactly those 8 bytes go to the unit DIE, which gains
//
//	DW_AT_low_pc    DW_FORM_addrx4      the skeleton's base address
//	DW_AT_ranges    DW_FORM_sec_offset  the skeleton's code
//
// and, costing no byte of the DIE, as DW_FORM_implicit_const in its
// abbreviation: DW_AT_stmt_list (the skeleton's line program, whose file
// table GCC's and clang's split units index with DW_AT_decl_file),
// DW_AT_addr_base (the skeleton's), DW_AT_str_offsets_base,
// DW_AT_loclists_base and DW_AT_rnglists_base (where the unit's
// contributions start in the joined sections). Every reference inside the
// unit (DW_FORM_ref*, DW_OP_convert's and DW_OP_entry_value's operands)
// keeps its offset, and no DIE past the first is rewritten.

// DW_AT_* bases debug/dwarf names under other spellings, and DW_FORMs.
const (
	attrLoclistsBase = Attr(0x8c)
	headerGrowth     = 8 // split compile header (20 bytes) less compile header (12)
)

// byteOrder is both of encoding/binary's byte order interfaces, as
// binary.LittleEndian and binary.BigEndian are.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// joined accumulates the joined sections.
type joined struct {
	order                                             byteOrder
	info, abbrev, str, strOffsets, loclists, rnglists []byte
	addr                                              []byte // the file's .debug_addr
	ranges4                                           []byte // the file's .debug_ranges (DWARF 4 GNU split units')
	strAt                                             map[string]int
	// lowAt and rangesAt are, for each unit in order, the offset in
	// .debug_addr of its base address and
	// the offset in .debug_rnglists of its ranges.
	lowAt, rangesAt []int
}

// join builds the debug image: the sections of df with units added.
func join(df *elfx.File, units []splitUnit) (*elfx.File, error) {
	get := func(name string) []byte {
		b, _ := df.SectionData(name)
		return b
	}
	order, ok := df.ByteOrder.(byteOrder)
	if !ok {
		return nil, fmt.Errorf("%s: byte order %v", df.Path, df.ByteOrder)
	}
	j := &joined{order: order, strAt: map[string]int{},
		info: slices.Clone(get(".debug_info")), abbrev: slices.Clone(get(".debug_abbrev")), str: slices.Clone(get(".debug_str")),
		strOffsets: slices.Clone(get(".debug_str_offsets")), loclists: slices.Clone(get(".debug_loclists")),
		rnglists: slices.Clone(get(".debug_rnglists")), addr: slices.Clone(get(".debug_addr")), ranges4: get(".debug_ranges")}
	j.skeletons(units)
	hidden := len(j.abbrev)
	j.abbrev = append(j.abbrev, hiddenAbbrevs...)
	for i, u := range units {
		add := j.add
		if u.sk.gnu {
			add = j.addGNU
		}
		if err := add(u, j.lowAt[i], j.rangesAt[i]); err != nil {
			return nil, elfx.Decode(u.from, ".debug_info.dwo", 0, err)
		}
		if err := j.hide(u.sk, hidden); err != nil {
			return nil, elfx.Decode(df.Path, ".debug_info", uint64(u.sk.off), err)
		}
	}
	replaced := map[string][]byte{".debug_info": j.info, ".debug_abbrev": j.abbrev, ".debug_str": j.str,
		".debug_str_offsets": j.strOffsets, ".debug_loclists": j.loclists, ".debug_rnglists": j.rnglists,
		".debug_addr": j.addr}
	return image(df, replaced)
}

// skeletons appends one .debug_addr contribution of the units' base
// addresses and one .debug_rnglists contribution of their ranges, before
// the units' own lists.
func (j *joined) skeletons(units []splitUnit) {
	var lows, ranges []byte
	addrAt, listsAt := len(j.addr)+8, len(j.rnglists)+12
	for _, u := range units {
		j.lowAt = append(j.lowAt, addrAt+len(lows))
		j.rangesAt = append(j.rangesAt, listsAt+len(ranges))
		lows = j.order.AppendUint64(lows, u.sk.low)
		for _, r := range u.sk.ranges {
			ranges = append(ranges, 0x06) // DW_RLE_start_end
			ranges = j.order.AppendUint64(ranges, r[0])
			ranges = j.order.AppendUint64(ranges, r[1])
		}
		ranges = append(ranges, 0) // DW_RLE_end_of_list
	}
	j.addr = append(j.addr, contribution(j.order, 8, lows)...)
	j.rnglists = append(j.rnglists, contribution(j.order, 0, ranges)...)
}

// add appends one split unit, whose base address is at lowAt in the
// joined .debug_addr and ranges at rangesAt in .debug_rnglists.
func (j *joined) add(u splitUnit, lowAt, rangesAt int) error {
	sk := u.sk
	if len(u.unit) < 21 || j.order.Uint32(u.unit) >= 0xfffffff0 {
		return fmt.Errorf("split unit of DWO id %#x: DWARF 64 or truncated", sk.id)
	}
	bases := j.unitBases(u)
	if len(u.loclists) >= 12 {
		bases = append(bases, attrConst{attrLoclistsBase, int64(len(j.loclists) + 12)})
		j.loclists = append(j.loclists, u.loclists...)
	}
	if len(u.rnglists) >= 12 {
		bases = append(bases, attrConst{AttrRnglistsBase, int64(len(j.rnglists) + 12)})
		j.rnglists = append(j.rnglists, u.rnglists...)
	}
	sc := &scan{info: u.unit, abbrev: u.abbrev, order: j.order, tables: &abbrevTables{m: map[tableKey]*abbrevTable{}}}
	if err := sc.unit(); err != nil {
		return fmt.Errorf("split unit of DWO id %#x: %w", sk.id, err)
	}
	abbrevOff := uint64(j.order.Uint32(u.unit[8:]))
	cu, ok, err := sc.next()
	if err != nil || !ok || cu.tag != TagCompileUnit {
		return fmt.Errorf("split unit of DWO id %#x: no compile unit entry first", sk.id)
	}
	code, n := leb128.Uint(u.unit[20:])
	table, err := rewriteAbbrevs(u.abbrev[abbrevOff:], code, n, bases, nil)
	if err != nil {
		return fmt.Errorf("split unit of DWO id %#x: abbreviations at %#x: %w", sk.id, abbrevOff, err)
	}
	// The unit: a compile unit header, the unit DIE with its 8 more
	// bytes, the rest as it is.
	unit := make([]byte, 0, len(u.unit))
	unit = append(unit, u.unit[:4]...)
	unit = j.order.AppendUint16(unit, 5)
	unit = append(unit, 1, u.unit[7]) // DW_UT_compile, address size
	unit = j.order.AppendUint32(unit, uint32(len(j.abbrev)))
	unit = append(unit, table.code...)
	unit = append(unit, u.unit[20+n:sc.pos]...)
	lowAt -= int(sk.addrBase)
	if lowAt < 0 || lowAt%8 != 0 || u.unit[7] != 8 {
		return fmt.Errorf("split unit of DWO id %#x: DW_AT_addr_base %#x not on an 8-byte entry of .debug_addr", sk.id, sk.addrBase)
	}
	unit = j.order.AppendUint32(unit, uint32(lowAt/8))
	unit = j.order.AppendUint32(unit, uint32(rangesAt))
	unit = append(unit, u.unit[sc.pos:]...)
	if len(unit) != len(u.unit) {
		return fmt.Errorf("split unit of DWO id %#x: joined unit of %d bytes for %d", sk.id, len(unit), len(u.unit))
	}
	j.abbrev = append(j.abbrev, table.bytes...)
	j.info = append(j.info, unit...)
	return nil
}

// unitBases appends the unit's strings and string offsets (a DWARF 5
// contribution, rebased onto the joined .debug_str) and returns the unit
// DIE's bases: the skeleton's line program and .debug_addr table, and
// where its string offsets start.
func (j *joined) unitBases(u splitUnit) []attrConst {
	sk := u.sk
	strBase, ok := j.strAt[u.from]
	if !ok {
		strBase = len(j.str)
		j.str = append(j.str, u.str...)
		j.strAt[u.from] = strBase
	}
	var bases []attrConst
	if sk.stmt >= 0 {
		bases = append(bases, attrConst{AttrStmtList, sk.stmt})
	}
	bases = append(bases, attrConst{AttrAddrBase, sk.addrBase})
	if len(u.strOffsets) >= 8 {
		bases = append(bases, attrConst{AttrStrOffsetsBase, int64(len(j.strOffsets) + 8)})
		so := slices.Clone(u.strOffsets)
		for i := 8; i+4 <= len(so); i += 4 {
			j.order.PutUint32(so[i:], j.order.Uint32(so[i:])+uint32(strBase))
		}
		j.strOffsets = append(j.strOffsets, so...)
	}
	return bases
}

// hiddenAbbrevs is the table of a hidden skeleton: DW_TAG_skeleton_unit
// without children, its one attribute (DW_AT_hi_user) a block.
var hiddenAbbrevs = []byte{1, byte(tagSkeleton), 0, 0xff, 0x7f, fBlock, 0, 0, 0}

// hide turns the skeleton unit of a joined split unit into one without
// addresses, of the same length: its unit DIE's bytes become a block.
// Otherwise debug/dwarf's Reader.SeekPC, taking the first unit whose
// ranges hold an address, could stop at the skeleton.
func (j *joined) hide(sk skeleton, table int) error {
	length := int(j.order.Uint32(j.info[sk.off:]))
	hdr, abbrevAt := 20, 8 // DWARF 5 skeleton header, its abbreviation offset
	if sk.gnu {
		hdr, abbrevAt = 11, 6 // DWARF 4
	}
	rest := length + 4 - hdr // the bytes after the header
	n := rest - 2            // the block: its length's ULEB128 and then itself
	for n > 0 && 1+len(leb128.AppendUint(nil, uint64(n)))+n > rest {
		n--
	}
	if n <= 0 || 1+len(leb128.AppendUint(nil, uint64(n)))+n != rest {
		return fmt.Errorf("skeleton unit of %d bytes", length)
	}
	j.order.PutUint32(j.info[sk.off+abbrevAt:], uint32(table))
	die := j.info[sk.off+hdr : sk.off+4+length]
	b := leb128.AppendUint([]byte{1}, uint64(n))
	copy(die, b)
	clear(die[len(b):])
	return nil
}

// contribution is a .debug_addr (addrHdr 8: no offset table) or
// .debug_rnglists contribution holding body: a DWARF 5 header (unit
// length, version 5, address size 8, segment selector size 0, and for
// lists an offset_entry_count of 0), then body.
func contribution(order byteOrder, addrHdr int, body []byte) []byte {
	hdr := 12
	if addrHdr == 8 {
		hdr = 8
	}
	out := order.AppendUint32(nil, uint32(hdr-4+len(body)))
	out = order.AppendUint16(out, 5)
	out = append(out, 8, 0)
	if hdr == 12 {
		out = order.AppendUint32(out, 0)
	}
	return append(out, body...)
}

// attrConst is an attribute given as DW_FORM_implicit_const.
type attrConst struct {
	attr Attr
	val  int64
}

// abbrevCopy is a unit's abbreviation table as the joined unit reads it.
type abbrevCopy struct {
	bytes []byte // the table, its terminating 0 included
	code  []byte // the unit DIE's new code, as a ULEB128 of the old one's length
}

// unitAddrs say how a joined unit DIE differs besides its bases: the
// index of an attribute of its own it drops (DW_AT_GNU_dwo_id) and the
// form of its DW_AT_low_pc. nil: none dropped, DW_FORM_addrx4.
type unitAddrs struct {
	drop    int
	lowForm uint64
}

// rewriteAbbrevs copies the abbreviation table at the start of b, adding
// a declaration for the unit DIE (whose code, n bytes long, is cuCode):
// the unit's own attributes (but the one ua drops), then DW_AT_low_pc
// (addrx4, or ua's form) and DW_AT_ranges (sec_offset), then the bases as
// implicit constants.
func rewriteAbbrevs(b []byte, cuCode uint64, n int, bases []attrConst, ua *unitAddrs) (abbrevCopy, error) {
	if ua == nil {
		ua = &unitAddrs{drop: -1, lowForm: fAddrx4}
	}
	var cu []byte // the unit declaration's children flag and attribute specs, terminator left out
	top := uint64(0)
	pos := 0
	uleb := func() (uint64, error) { return ulebAt(b, &pos) }
	for {
		code, err := uleb()
		if err != nil {
			return abbrevCopy{}, err
		}
		if code == 0 {
			break
		}
		top = max(top, code)
		if _, err := uleb(); err != nil { // tag
			return abbrevCopy{}, err
		}
		if pos >= len(b) {
			return abbrevCopy{}, errScan
		}
		start := pos
		pos++            // children
		var specs []byte // of the unit DIE: children flag, the specs kept
		if code == cuCode {
			specs = append(specs, b[start])
		}
		for k := 0; ; k++ {
			at := pos
			attr, err := uleb()
			if err != nil {
				return abbrevCopy{}, err
			}
			form, err := uleb()
			if err != nil {
				return abbrevCopy{}, err
			}
			if attr == 0 && form == 0 {
				break
			}
			for _, c := range bases {
				if code == cuCode && Attr(attr) == c.attr {
					return abbrevCopy{}, fmt.Errorf("the unit DIE has %v of its own", c.attr)
				}
			}
			if form == fImplicitConst {
				_, k := leb128.Int(b[pos:])
				if k <= 0 {
					return abbrevCopy{}, errScan
				}
				pos += k
			}
			if code == cuCode && k != ua.drop {
				specs = append(specs, b[at:pos]...)
			}
		}
		if code == cuCode {
			cu = specs
		}
	}
	if cu == nil {
		return abbrevCopy{}, fmt.Errorf("no declaration of code %d", cuCode)
	}
	newCode := leb128.AppendUint(nil, top+1)
	if len(newCode) > n {
		return abbrevCopy{}, fmt.Errorf("%d codes: a new one does not fit the unit DIE's", top)
	}
	for len(newCode) < n { // pad to the old code's length
		newCode[len(newCode)-1] |= 0x80
		newCode = append(newCode, 0)
	}
	out := append([]byte(nil), b[:pos-1]...) // the declarations, not the table's 0
	out = append(out, newCode...)
	out = leb128.AppendUint(out, uint64(TagCompileUnit))
	out = append(out, cu...)
	out = leb128.AppendUint(leb128.AppendUint(out, uint64(AttrLowpc)), ua.lowForm)
	out = leb128.AppendUint(leb128.AppendUint(out, uint64(AttrRanges)), fSecOffset)
	for _, c := range bases {
		out = leb128.AppendUint(leb128.AppendUint(out, uint64(c.attr)), fImplicitConst)
		out = leb128.AppendInt(out, c.val)
	}
	out = append(out, 0, 0, 0)
	return abbrevCopy{bytes: out, code: newCode}, nil
}

// ulebAt reads the ULEB128 number at *pos in b and moves *pos past it.
func ulebAt(b []byte, pos *int) (uint64, error) {
	v, k := leb128.Uint(b[*pos:])
	if k <= 0 {
		return 0, errScan
	}
	*pos += k
	return v, nil
}

// image is the ELF image of df with the sections in replaced put in
// place of (or beside) its own. Of df's other sections it keeps those a
// debug file is read for: DWARF, symbols and notes.
func image(df *elfx.File, replaced map[string][]byte) (*elfx.File, error) {
	var secs []elfx.Section
	for _, s := range df.Sections {
		keep := strings.HasPrefix(s.Name, ".debug_") || s.Name == ".symtab" || s.Name == ".strtab" || s.Type == elf.SHT_NOTE
		if !keep || s.Type == elf.SHT_NOBITS {
			continue
		}
		b, ok := replaced[s.Name]
		if ok {
			delete(replaced, s.Name)
		} else {
			var err error
			if b, err = df.SectionData(s.Name); err != nil {
				return nil, err
			}
		}
		link := ""
		if s.Link > 0 && int(s.Link) < len(df.Sections) {
			link = df.Sections[s.Link].Name
		}
		secs = append(secs, elfx.Section{Name: s.Name, Type: s.Type, Flags: s.Flags, Addr: s.Addr, Link: link,
			Info: s.Info, Align: s.Addralign, Entsize: s.Entsize, Data: b})
	}
	for _, name := range slices.Sorted(maps.Keys(replaced)) {
		secs = append(secs, elfx.Section{Name: name, Type: elf.SHT_PROGBITS, Align: 1, Data: replaced[name]})
	}
	return elfx.Build(df.Path, df, secs)
}
