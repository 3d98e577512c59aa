package dwarf

import (
	"errors"
	"fmt"
	"sort"
	"unsafe"
)

// infoUnit is one unit of .debug_info: its header, and the offset of its
// abbreviations.
type infoUnit struct {
	hdr    scanHeader // without its table (see dieReader.enter)
	abbrev uint64
}

// units are the units of .debug_info, in section order: their headers,
// read once per section's bytes (a lookup by name reads a prefix of the
// section before the whole, see namedPrefix). A header that does not
// read ends them (checkUnits refuses such a file when it opens).
func (f *File) units() []infoUnit {
	us, _ := f.readUnits()
	return us
}

// checkUnits reads the header of every unit of .debug_info: the first
// that does not read (its length, version, abbreviations' offset or
// address size) is the file's error, naming the unit's offset, as the
// units after it cannot be found. A .debug_info of no unit is one too.
func (f *File) checkUnits() error {
	us, err := f.readUnits()
	if err == nil && len(us) == 0 {
		err = f.infoError(0, errors.New("no compile unit"))
	}
	return err
}

// readUnits is units, and the error of the header that ended them.
func (f *File) readUnits() ([]infoUnit, error) {
	info := f.Debug.DWARFSection(".debug_info")
	f.cacheMu.Lock()
	defer f.cacheMu.Unlock()
	if f.infoUnits != nil && f.infoOf == unsafe.SliceData(info) && f.infoLen == len(info) {
		return f.infoUnits, f.unitsErr
	}
	var us []infoUnit
	var err error
	sc := f.newScan()
	for sc.pos < len(sc.info) {
		off, herr := sc.header()
		if herr != nil {
			err = f.infoError(Offset(sc.pos), fmt.Errorf("unit header: %w", herr))
			break
		}
		us = append(us, infoUnit{hdr: sc.u, abbrev: off})
		sc.skipUnit()
	}
	f.infoUnits, f.unitsErr, f.infoOf, f.infoLen = us, err, unsafe.SliceData(sc.info), len(sc.info)
	return us, err
}

// unitOf is the index in units of the unit whose DIEs hold off, -1 for
// none (an offset in a header, or past the section).
func (f *File) unitOf(off Offset) int {
	us := f.units()
	i := sort.Search(len(us), func(i int) bool { return us[i].hdr.end > int(off) })
	if i < len(us) && int(off) >= us[i].hdr.first {
		return i
	}
	return -1
}

// dieReader reads the DIEs of .debug_info in order, each decoded whole
// (entryDecoder), as debug/dwarf's Reader does: Seek, Next, SkipChildren,
// SeekPC. The walks that read most DIEs (functions, types) use the scan
// itself (dieEntries); this is for the walks over one unit or a few DIEs.
type dieReader struct {
	f    *File
	sc   *scan
	dd   *entryDecoder
	unit int // in f.units, -1 before the first Seek
	err  error
	// of the last entry Next returned: whether it has children, its
	// DW_AT_sibling (0 for none), whether it is a unit's.
	lastChildren bool
	lastSibling  Offset
	lastUnit     bool
}

// dieReader is a reader at the first DIE of .debug_info.
func (f *File) dieReader() *dieReader {
	sc := f.newScan()
	return &dieReader{f: f, sc: sc, dd: f.newDecoder(sc), unit: -1}
}

// enter moves to unit i, at offset pos.
func (r *dieReader) enter(i, pos int) {
	u := r.f.units()[i]
	r.unit, r.lastChildren = i, false
	if r.sc.u.start != u.hdr.start || r.sc.u.table == nil {
		t, err := r.sc.table(u.abbrev, &u.hdr)
		if err != nil {
			r.err = r.f.decodeError(Offset(u.hdr.start), "unreadable abbreviations (the unit at %#x)", u.hdr.start)
			return
		}
		r.sc.u = u.hdr
		r.sc.u.table = t
	}
	r.sc.pos = pos
	if err := r.dd.setBases(); err != nil {
		r.err = err
	}
}

// Seek moves to the DIE at off; 0 is the first of the section.
func (r *dieReader) Seek(off Offset) {
	r.err, r.lastChildren = nil, false
	us := r.f.units()
	if off == 0 {
		if len(us) > 0 {
			r.enter(0, us[0].hdr.first)
		}
		return
	}
	i := r.f.unitOf(off)
	if i < 0 {
		r.err = r.f.decodeError(off, "offset out of range")
		return
	}
	r.enter(i, int(off))
}

// Next returns the next DIE (a null one as an entry with tag 0), nil at
// the end of the section.
func (r *dieReader) Next() (*Entry, error) {
	if r.err != nil {
		return nil, r.err
	}
	us := r.f.units()
	for r.unit < 0 || r.sc.pos >= r.sc.u.end {
		if r.unit+1 >= len(us) {
			return nil, nil
		}
		r.enter(r.unit+1, us[r.unit+1].hdr.first)
		if r.err != nil {
			return nil, r.err
		}
	}
	d, ok, err := r.sc.next()
	if err == nil && !ok {
		err = errScan
	}
	if err != nil {
		r.err = r.f.decodeError(Offset(r.sc.at), "unreadable DIE (the unit at %#x)", r.sc.u.start)
		return nil, r.err
	}
	e, err := r.dd.decode(d)
	if err != nil {
		r.err = err
		return nil, err
	}
	r.lastChildren, r.lastSibling = e.Children, 0
	if e.Children {
		r.lastSibling, _ = e.Ref(AttrSibling)
	}
	r.lastUnit = e.Tag == TagCompileUnit || e.Tag == TagPartialUnit
	return e, nil
}

// SkipChildren moves past the children of the entry Next returned last:
// to its DW_AT_sibling, past its unit for a unit's entry, else past the
// null entry that ends them.
func (r *dieReader) SkipChildren() {
	if r.err != nil || !r.lastChildren {
		return
	}
	r.lastChildren = false
	switch {
	case r.lastSibling >= Offset(r.sc.pos):
		r.Seek(r.lastSibling)
	case r.lastUnit:
		r.sc.pos = r.sc.u.end
	default:
		for depth := 1; depth > 0; {
			if r.sc.pos >= r.sc.u.end {
				return // a unit ended inside the children: Next moves on
			}
			d, ok, err := r.sc.next()
			if err != nil || !ok {
				r.err = r.f.decodeError(Offset(r.sc.at), "unreadable DIE (the unit at %#x)", r.sc.u.start)
				return
			}
			switch {
			case d.tag == 0:
				depth--
			case d.children:
				depth++
			}
		}
	}
}

// errUnknownPC is SeekPC's error for an address no unit covers.
var errUnknownPC = errors.New("no compile unit covers the address")

// SeekPC returns the entry of the first unit whose ranges hold pc, and
// moves past it; errUnknownPC when none does.
func (r *dieReader) SeekPC(pc uint64) (*Entry, error) {
	for i, u := range r.f.units() {
		r.err = nil
		r.enter(i, u.hdr.first)
		e, err := r.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		rs, err := r.f.ranges(e)
		if err != nil {
			return nil, err
		}
		for _, rg := range rs {
			if rg[0] <= pc && pc < rg[1] {
				return e, nil
			}
		}
	}
	return nil, errUnknownPC
}

// entryAt is the DIE at off, decoded whole.
func (f *File) entryAt(off Offset) (*Entry, error) {
	r := f.dieReader()
	r.Seek(off)
	return r.Next()
}

// ranges is the address ranges of e, as debug/dwarf's Data.Ranges gives
// them: its DW_AT_low_pc and DW_AT_high_pc, and the list DW_AT_ranges
// names, whose offsets count from its unit's base address.
func (f *File) ranges(e *Entry) ([][2]uint64, error) {
	var ret [][2]uint64
	low, lowOK := e.Uint(AttrLowpc)
	if hf := e.AttrField(AttrHighpc); hf != nil && lowOK {
		switch {
		case hf.kind == kindUint && hf.Class() == ClassAddress:
			ret = append(ret, [2]uint64{low, hf.n})
		case hf.kind == kindInt && hf.Class() == ClassConstant:
			ret = append(ret, [2]uint64{low, low + hf.n})
		}
	}
	fl := e.AttrField(AttrRanges)
	if fl == nil {
		return ret, nil
	}
	i := f.unitOf(e.Offset)
	if i < 0 {
		return ret, nil
	}
	hdr := f.units()[i].hdr
	d := f.Debug
	u := quickUnit{rnglists: d.DWARFSection(".debug_rnglists"), ranges: d.DWARFSection(".debug_ranges")}
	off := int64(fl.n)
	v5 := hdr.version >= 5 && len(u.rnglists) > 0
	switch fl.kind {
	case kindInt:
		if v5 && fl.Class() != ClassRangeListPtr {
			return ret, nil
		}
	case kindUint:
		if !v5 || fl.Class() != ClassRngList {
			return ret, nil
		}
	default:
		return ret, nil
	}
	if !v5 && len(u.ranges) == 0 {
		return ret, nil
	}
	cu := e
	if e.Tag != TagCompileUnit {
		var err error
		if cu, err = f.entryAt(Offset(hdr.first)); err != nil || cu == nil {
			return nil, f.decodeError(e.Offset, "the unit's entry for the ranges: %v", err)
		}
	}
	if v, ok := cu.Uint(AttrEntrypc); ok {
		u.base = v
	} else {
		u.base, _ = cu.Uint(AttrLowpc)
	}
	u.addrBase, _ = cu.Int(AttrAddrBase)
	u.hasAddrBase, u.addr = true, d.DWARFSection(".debug_addr")
	var ok bool
	sec := ".debug_ranges"
	if v5 {
		sec = ".debug_rnglists"
		ret, ok = u.rnglist(off, ret, hdr.addrSize, d.ByteOrder)
	} else {
		ret, ok = u.rangeList(off, ret, hdr.addrSize, d.ByteOrder)
	}
	if !ok {
		return nil, f.sectionError(sec, off, "unreadable range list of the DIE at %#x", e.Offset)
	}
	return ret, nil
}

// Producer is the DW_AT_producer of the first compile unit whose ranges
// hold pc; ok is false when no unit does (or its entry cannot be read).
func (f *File) Producer(pc uint64) (producer string, ok bool) {
	cu, err := f.dieReader().SeekPC(pc)
	if err != nil || cu == nil {
		return "", false
	}
	return str(cu, AttrProducer), true
}
