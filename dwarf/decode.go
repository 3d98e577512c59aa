package dwarf

import (
	"bytes"
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/binscope/binscope/internal/leb128"
)

// entryDecoder decodes whole DIEs from a scan's bytes, every attribute,
// into entries with the values and classes debug/dwarf's Reader gives
// them (then resolveAlt's): the package's one DIE decoder, which the walks'
// typed readers (quick.go, funcattrs.go) shortcut for the attributes they
// read. debug/dwarf's Reader stays in the tests as its oracle.
type entryDecoder struct {
	f     *File
	sc    *scan
	ss    *strSections
	addr  []byte // .debug_addr
	rngls []byte // .debug_rnglists
	// bases are the DWARF 5 bases of the unit at basesAt (see setBases).
	bases   unitBases
	basesAt int
}

// unitBases are a DWARF 5 unit's DW_AT_str_offsets_base, DW_AT_addr_base
// and DW_AT_rnglists_base, as debug/dwarf reads them from its unit DIE
// (0 when absent, and for the units of earlier versions).
type unitBases struct{ str, addr, rnglists uint64 }

// newDecoder decodes the DIEs sc reads.
func (f *File) newDecoder(sc *scan) *entryDecoder {
	d := f.Debug
	return &entryDecoder{f: f, sc: sc, ss: f.strSections(), addr: d.DWARFSection(".debug_addr"),
		rngls: d.DWARFSection(".debug_rnglists"), basesAt: -1}
}

// setBases reads the bases of the scan's unit, once per unit, from its
// unit DIE: decoded with no bases, as debug/dwarf collects them.
func (dd *entryDecoder) setBases() error {
	sc := dd.sc
	if dd.basesAt == sc.u.start {
		return nil
	}
	dd.bases, dd.basesAt = unitBases{}, sc.u.start
	if sc.u.version < 5 {
		return nil
	}
	pos, at, limit := sc.pos, sc.at, sc.limit
	defer func() { sc.pos, sc.at, sc.limit = pos, at, limit }()
	sc.pos, sc.limit = sc.u.first, 0
	d, ok, err := sc.next()
	if err != nil || !ok || d.tag == 0 {
		return dd.f.decodeError(dwarf.Offset(sc.u.first), "unreadable unit DIE (the unit at %#x)", sc.u.start)
	}
	e, err := dd.attrs(d)
	if err != nil {
		return err
	}
	get := func(a dwarf.Attr) uint64 {
		v, _ := e.Val(a).(int64)
		return uint64(v)
	}
	dd.bases = unitBases{str: get(dwarf.AttrStrOffsetsBase), addr: get(dwarf.AttrAddrBase), rnglists: get(dwarf.AttrRnglistsBase)}
	return nil
}

// decode is the entry of d, the DIE the scan just read in its unit.
func (dd *entryDecoder) decode(d die) (*dwarf.Entry, error) {
	if d.tag == 0 {
		return &dwarf.Entry{}, nil
	}
	if err := dd.setBases(); err != nil {
		return nil, err
	}
	e, err := dd.attrs(d)
	if err != nil {
		return nil, err
	}
	dd.f.resolveAlt(e)
	return e, nil
}

// attrs decodes d's attributes with the bases dd holds.
func (dd *entryDecoder) attrs(d die) (*dwarf.Entry, error) {
	e := &dwarf.Entry{Offset: d.off, Tag: d.tag, Children: d.children, Field: make([]dwarf.Field, len(d.decl.specs))}
	pos := d.attrs
	for i, sp := range d.decl.specs {
		fl := &e.Field[i]
		fl.Attr = sp.attr
		form := sp.form
		if form == fIndirect {
			v, n := leb128.Uint(dd.sc.info[min(pos, dd.sc.u.end):dd.sc.u.end])
			if n <= 0 {
				return nil, dd.f.decodeError(d.off, "attribute %v: truncated form", sp.attr)
			}
			pos, form = pos+n, v
		}
		var err error
		fl.Val, pos, err = dd.value(pos, form, sp)
		if err != nil {
			return nil, dd.f.decodeError(d.off, "attribute %v (form %#x): %v", sp.attr, form, err)
		}
		fl.Class = formClass(form, sp.attr, dd.sc.u.version)
	}
	return e, nil
}

var errShort = errors.New("value past the end of its section")

// valueAt is the bytes of an attribute's value, at pos in its unit, up to
// the unit's end.
type valueAt struct {
	s   *scan
	pos int
	b   []byte
}

// word reads an n-byte unsigned value.
func (v valueAt) word(n int) (uint64, error) {
	b, s := v.b, v.s
	if n > len(b) {
		return 0, errShort
	}
	switch n {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(s.order.Uint16(b)), nil
	case 3:
		if s.order == binary.LittleEndian {
			return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16, nil
		}
		return uint64(b[0])<<16 | uint64(b[1])<<8 | uint64(b[2]), nil
	case 4:
		return uint64(s.order.Uint32(b)), nil
	case 8:
		return s.order.Uint64(b), nil
	}
	return 0, fmt.Errorf("unsupported size %d", n)
}

// fixed reads an n-byte unsigned value and the offset after it.
func (v valueAt) fixed(n int) (uint64, int, error) {
	x, err := v.word(n)
	return x, v.pos + n, err
}

// uleb reads an unsigned LEB128 value and the offset after it.
func (v valueAt) uleb() (uint64, int, error) {
	x, n := leb128.Uint(v.b)
	if n <= 0 {
		return 0, 0, errShort
	}
	return x, v.pos + n, nil
}

// block is the n bytes after a length of hdr bytes.
func (v valueAt) block(n uint64, hdr int) (any, int, error) {
	if hdr > len(v.b) || n > uint64(len(v.b)-hdr) {
		return nil, 0, errShort
	}
	end := hdr + int(n)
	return v.b[hdr:end:end], v.pos + end, nil
}

// index reads the index of a DW_FORM_addrx* or DW_FORM_strx* value.
func (v valueAt) index(form uint64) (uint64, int, error) {
	if form == fAddrx || form == fStrx {
		return v.uleb()
	}
	return v.fixed(formSize(form, &v.s.u))
}

// value decodes the value of form at pos, as debug/dwarf does, and
// returns the offset after it.
func (dd *entryDecoder) value(pos int, form uint64, sp attrSpec) (any, int, error) {
	s := dd.sc
	u := &s.u
	if pos > u.end {
		return nil, 0, errShort
	}
	v := valueAt{s: s, pos: pos, b: s.info[pos:u.end]}
	refAddr := u.offSize
	if u.version == 2 {
		refAddr = u.addrSize
	}
	switch form {
	case fAddr:
		return v.fixed(u.addrSize)
	case fBlock1, fBlock2, fBlock4:
		hdr := 1
		if form == fBlock2 {
			hdr = 2
		} else if form == fBlock4 {
			hdr = 4
		}
		n, err := v.word(hdr)
		if err != nil {
			return nil, 0, err
		}
		return v.block(n, hdr)
	case fBlock, fExprloc:
		n, next, err := v.uleb()
		if err != nil {
			return nil, 0, err
		}
		return v.block(n, next-pos)
	case fData1, fData2, fData4, fData8:
		x, next, err := v.fixed(formSize(form, u))
		return int64(x), next, err
	case fData16:
		return v.block(16, 0)
	case fSdata:
		x, n := leb128.Int(v.b)
		if n <= 0 {
			return nil, 0, errShort
		}
		return x, pos + n, nil
	case fUdata:
		x, next, err := v.uleb()
		return int64(x), next, err
	case fImplicitConst:
		return sp.implicit, pos, nil
	case fFlag:
		x, next, err := v.fixed(1)
		return x == 1, next, err
	case fFlagPresent:
		return true, pos, nil
	case fRefAddr:
		x, next, err := v.fixed(refAddr)
		return dwarf.Offset(x), next, err
	case fRef1, fRef2, fRef4, fRef8:
		x, next, err := v.fixed(formSize(form, u))
		return dwarf.Offset(x) + dwarf.Offset(u.start), next, err
	case fRefUdata:
		x, next, err := v.uleb()
		return dwarf.Offset(x) + dwarf.Offset(u.start), next, err
	case fStrpSup, fRefSup4, fRefSup8:
		n := u.offSize
		if form != fStrpSup {
			n = formSize(form, u)
		}
		x, next, err := v.fixed(n)
		if n == 4 {
			return uint32(x), next, err
		}
		return x, next, err
	case fSecOffset, fGNURefAlt, fGNUStrpAlt:
		x, next, err := v.fixed(u.offSize)
		return int64(x), next, err
	case fRefSig8:
		return v.fixed(8)
	case fLoclistx:
		return v.uleb()
	}
	return dd.indexed(v, form)
}

// indexed decodes the value of a string form, or of a form that indexes
// .debug_addr or .debug_rnglists.
func (dd *entryDecoder) indexed(v valueAt, form uint64) (any, int, error) {
	u := &dd.sc.u
	order := dd.sc.order
	switch form {
	case fString:
		i := bytes.IndexByte(v.b, 0)
		if i < 0 {
			return nil, 0, errShort
		}
		return secString(v.b[:i]), v.pos + i + 1, nil
	case fStrp, fLineStrp:
		off, next, err := v.fixed(u.offSize)
		if err != nil {
			return nil, 0, err
		}
		sec := dd.ss.str
		if form == fLineStrp {
			if sec = dd.ss.lineStr; len(sec) == 0 {
				return nil, 0, errors.New("DW_FORM_line_strp with no .debug_line_str section")
			}
		}
		str, err := cString(sec, off)
		return str, next, err
	case fStrx, fStrx1, fStrx2, fStrx3, fStrx4:
		i, next, err := v.index(form)
		if err != nil {
			return nil, 0, err
		}
		if len(dd.ss.offsets) == 0 {
			return nil, 0, errors.New("DW_FORM_strx with no .debug_str_offsets section")
		}
		off, ok := offsetEntry(dd.ss.offsets, dd.bases.str, i, u.offSize, order)
		if !ok {
			return nil, 0, fmt.Errorf("string index %d out of .debug_str_offsets", i)
		}
		str, err := cString(dd.ss.str, off)
		return str, next, err
	case fAddrx, fAddrx1, fAddrx2, fAddrx3, fAddrx4:
		i, next, err := v.index(form)
		if err != nil {
			return nil, 0, err
		}
		if len(dd.addr) == 0 {
			return nil, 0, errors.New("DW_FORM_addrx with no .debug_addr section")
		}
		a, ok := addrEntry(dd.addr, int64(dd.bases.addr), i, u.addrSize, order)
		if !ok {
			return nil, 0, fmt.Errorf("address index %d out of .debug_addr", i)
		}
		return a, next, nil
	case fRnglistx:
		i, next, err := v.uleb()
		if err != nil {
			return nil, 0, err
		}
		off, ok := offsetEntry(dd.rngls, dd.bases.rnglists, i, u.offSize, order)
		if !ok {
			return nil, 0, fmt.Errorf("range list index %d out of .debug_rnglists", i)
		}
		return dd.bases.rnglists + off, next, nil
	}
	return nil, 0, errors.New("unknown form")
}

// offsetEntry is entry i of a table of offsets of size bytes at base in
// sec.
func offsetEntry(sec []byte, base, i uint64, size int, order binary.ByteOrder) (uint64, bool) {
	at := base + i*uint64(size)
	if at < base || at > uint64(len(sec)) || uint64(len(sec))-at < uint64(size) {
		return 0, false
	}
	if size == 8 {
		return order.Uint64(sec[at:]), true
	}
	return uint64(order.Uint32(sec[at:])), true
}

// cString is the NUL-terminated string at off in sec.
func cString(sec []byte, off uint64) (string, error) {
	if off > uint64(len(sec)) {
		return "", errShort
	}
	i := bytes.IndexByte(sec[off:], 0)
	if i < 0 {
		return "", errShort
	}
	return secString(sec[off : off+uint64(i)]), nil
}

// formClass is the class debug/dwarf gives a value of form of attribute
// a in a unit of version v.
func formClass(form uint64, a dwarf.Attr, v int) dwarf.Class {
	switch form {
	case fAddr, fAddrx, fAddrx1, fAddrx2, fAddrx3, fAddrx4:
		return dwarf.ClassAddress
	case fBlock1, fBlock2, fBlock4, fBlock:
		return blockClass(a)
	case fData1, fData2, fData4, fData8, fSdata, fUdata, fData16, fImplicitConst:
		return constClass(a, v)
	case fFlag, fFlagPresent:
		return dwarf.ClassFlag
	case fRefAddr, fRef1, fRef2, fRef4, fRef8, fRefUdata, fRefSup4, fRefSup8:
		return dwarf.ClassReference
	case fRefSig8:
		return dwarf.ClassReferenceSig
	case fString, fStrp, fStrx, fStrpSup, fLineStrp, fStrx1, fStrx2, fStrx3, fStrx4:
		return dwarf.ClassString
	case fSecOffset:
		return ptrClass(a)
	case fExprloc:
		return dwarf.ClassExprLoc
	case fGNURefAlt:
		return dwarf.ClassReferenceAlt
	case fGNUStrpAlt:
		return dwarf.ClassStringAlt
	case fLoclistx:
		return dwarf.ClassLocList
	case fRnglistx:
		return dwarf.ClassRngList
	}
	return dwarf.ClassUnknown
}
