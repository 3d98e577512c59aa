package dwarf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/binscope/binscope/internal/leb128"
)

// entryDecoder decodes DIEs from a scan's bytes, every attribute, into
// entries (entry.go) with the values and classes debug/dwarf's Reader
// gives them (then resolveField's): its field method is the package's one
// attribute-value decoder, which the walks' typed readers (quick.go,
// funcattrs.go) shortcut for the attributes they read. debug/dwarf's
// Reader stays in the tests as its oracle.
type entryDecoder struct {
	f     *File
	sc    *scan
	ss    *strSections // ss.base: the unit's DW_AT_str_offsets_base (see setBases)
	addr  []byte       // .debug_addr
	rngls []byte       // .debug_rnglists
	// bases are the DWARF 5 bases of the unit at basesAt (see setBases).
	bases   unitBases
	basesAt int
	unitE   Entry // the unit DIE setBases reads, reused
}

// unitBases are a DWARF 5 unit's DW_AT_addr_base and DW_AT_rnglists_base,
// as debug/dwarf reads them from its unit DIE (0 when absent, and for the
// units of earlier versions).
type unitBases struct{ addr, rnglists uint64 }

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
	dd.bases, dd.basesAt, dd.ss.base = unitBases{}, sc.u.start, 0
	if sc.u.version < 5 {
		return nil
	}
	pos, at, limit := sc.pos, sc.at, sc.limit
	defer func() { sc.pos, sc.at, sc.limit = pos, at, limit }()
	sc.pos, sc.limit = sc.u.first, 0
	d, ok, err := sc.next()
	if err != nil || !ok || d.tag == 0 {
		return dd.f.decodeError(Offset(sc.u.first), "unreadable unit DIE (the unit at %#x)", sc.u.start)
	}
	e := &dd.unitE
	if err := dd.attrs(d, e); err != nil {
		return err
	}
	get := func(a Attr) uint64 {
		v, _ := e.Int(a)
		return uint64(v)
	}
	dd.bases = unitBases{addr: get(AttrAddrBase), rnglists: get(AttrRnglistsBase)}
	dd.ss.base = int64(get(AttrStrOffsetsBase))
	return nil
}

// decode is the entry of d, the DIE the scan just read in its unit, in
// an allocation of its own.
func (dd *entryDecoder) decode(d die) (*Entry, error) {
	e := &Entry{}
	if err := dd.decodeInto(d, e); err != nil {
		return nil, err
	}
	return e, nil
}

// decodeInto decodes d into e, reusing e's fields.
func (dd *entryDecoder) decodeInto(d die, e *Entry) error {
	if d.tag == 0 {
		*e = Entry{Field: e.Field[:0]}
		return nil
	}
	if err := dd.setBases(); err != nil {
		return err
	}
	return dd.attrs(d, e)
}

// attrs decodes d's attributes into e with the bases dd holds.
func (dd *entryDecoder) attrs(d die, e *Entry) error {
	n := len(d.decl.specs)
	fields := e.Field[:0]
	if cap(fields) < n {
		fields = make([]Field, 0, n)
	}
	*e = Entry{Offset: d.off, Tag: d.tag, Children: d.children, Field: fields[:n]}
	pos := d.attrs
	for i, sp := range d.decl.specs {
		fl := &e.Field[i]
		*fl = Field{Attr: sp.attr}
		form := sp.form
		if form == fIndirect {
			v, n := leb128.Uint(dd.sc.info[min(pos, dd.sc.u.end):dd.sc.u.end])
			if n <= 0 {
				return dd.f.decodeError(d.off, "attribute %v: truncated form", sp.attr)
			}
			pos, form = pos+n, v
		}
		var err error
		if pos, err = dd.field(pos, form, sp, fl); err != nil {
			return dd.f.decodeError(d.off, "attribute %v (form %#x): %v", sp.attr, form, err)
		}
	}
	return nil
}

// value decodes the attribute value at pos of a DIE s reads as
// debug/dwarf's Reader gives it (then resolveField), with the string
// sections ss (no DW_FORM_strx* when ss.base < 0) and no address or
// range list table: the one value decoder (field) for the readers that
// keep a value whatever its type. ok is false for a form it does not
// read or a malformed value.
func (f *File) value(s *scan, pos int, sp attrSpec, ss *strSections) (v any, next int, ok bool) {
	dd := entryDecoder{f: f, sc: s, ss: ss}
	var fl Field
	next, err := dd.field(pos, sp.form, sp, &fl)
	if err != nil {
		return nil, 0, false
	}
	return fl.Val(), next, true
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
func (v valueAt) block(n uint64, hdr int) ([]byte, int, error) {
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

// field decodes the value of form at pos into fl, with the class
// debug/dwarf gives it (then resolveField's), and returns the offset after
// it.
func (dd *entryDecoder) field(pos int, form uint64, sp attrSpec, fl *Field) (int, error) {
	s := dd.sc
	u := &s.u
	if pos > u.end {
		return 0, errShort
	}
	v := valueAt{s: s, pos: pos, b: s.info[pos:u.end]}
	class := formClass(form, sp.attr, u.version)
	switch form {
	case fAddr:
		x, next, err := v.fixed(u.addrSize)
		fl.setUint(x, class)
		return next, err
	case fBlock1, fBlock2, fBlock4, fBlock, fExprloc, fData16:
		b, next, err := v.blockOf(form)
		fl.setBytes(b, class)
		return next, err
	case fData1, fData2, fData4, fData8, fSecOffset:
		x, next, err := v.fixed(formSize(form, u))
		fl.setInt(int64(x), class)
		return next, err
	case fUdata:
		x, next, err := v.uleb()
		fl.setInt(int64(x), class)
		return next, err
	case fSdata:
		x, n := leb128.Int(v.b)
		if n <= 0 {
			return 0, errShort
		}
		fl.setInt(x, class)
		return pos + n, nil
	case fImplicitConst:
		fl.setInt(sp.implicit, class)
		return pos, nil
	case fFlag:
		x, next, err := v.fixed(1)
		fl.setFlag(x == 1)
		return next, err
	case fFlagPresent:
		fl.setFlag(true)
		return pos, nil
	case fRefSig8:
		x, next, err := v.fixed(8)
		fl.setUint(x, class)
		return next, err
	case fLoclistx:
		x, next, err := v.uleb()
		fl.setUint(x, class)
		return next, err
	}
	if next, ok, err := dd.ref(v, form, class, fl); ok {
		return next, err
	}
	return dd.indexed(v, form, class, fl)
}

// blockOf reads a block form's value (DW_FORM_data16's 16 bytes too).
func (v valueAt) blockOf(form uint64) ([]byte, int, error) {
	switch form {
	case fData16:
		return v.block(16, 0)
	case fBlock, fExprloc:
		n, next, err := v.uleb()
		if err != nil {
			return nil, 0, err
		}
		return v.block(n, next-v.pos)
	}
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
}

// ref decodes a reference form's value (and the dwz alternate file's
// string offsets, which resolveField reads as its references); ok is false
// for another form.
func (dd *entryDecoder) ref(v valueAt, form uint64, class Class, fl *Field) (next int, ok bool, err error) {
	u := &dd.sc.u
	var x uint64
	switch form {
	case fRefAddr:
		n := u.offSize
		if u.version == 2 {
			n = u.addrSize
		}
		x, next, err = v.fixed(n)
		fl.setRef(Offset(x), class)
	case fRef1, fRef2, fRef4, fRef8, fRefUdata:
		if form == fRefUdata {
			x, next, err = v.uleb()
		} else {
			x, next, err = v.fixed(formSize(form, u))
		}
		fl.setRef(Offset(x)+Offset(u.start), class)
	case fStrpSup, fRefSup4, fRefSup8:
		n := u.offSize
		if form != fStrpSup {
			n = formSize(form, u)
		}
		x, next, err = v.fixed(n)
		fl.setUint(x, class)
		if n == 4 {
			fl.kind = kindUint32
		}
		dd.f.resolveField(fl)
	case fGNURefAlt, fGNUStrpAlt:
		x, next, err = v.fixed(u.offSize)
		fl.setInt(int64(x), class)
		dd.f.resolveField(fl)
	default:
		return 0, false, nil
	}
	return next, true, err
}

// indexed decodes the value of a string form, or of a form that indexes
// .debug_addr or .debug_rnglists.
func (dd *entryDecoder) indexed(v valueAt, form uint64, class Class, fl *Field) (int, error) {
	u := &dd.sc.u
	order := dd.sc.order
	switch form {
	case fString:
		i := bytes.IndexByte(v.b, 0)
		if i < 0 {
			return 0, errShort
		}
		fl.setStringBytes(v.b[:i], class)
		return v.pos + i + 1, nil
	case fStrp, fLineStrp:
		off, next, err := v.fixed(u.offSize)
		if err != nil {
			return 0, err
		}
		sec := dd.ss.str
		if form == fLineStrp {
			if sec = dd.ss.lineStr; len(sec) == 0 {
				return 0, errors.New("DW_FORM_line_strp with no .debug_line_str section")
			}
		}
		str, err := cString(sec, off)
		fl.setStringBytes(str, class)
		return next, err
	case fStrx, fStrx1, fStrx2, fStrx3, fStrx4:
		i, next, err := v.index(form)
		if err != nil {
			return 0, err
		}
		if len(dd.ss.offsets) == 0 || dd.ss.base < 0 {
			return 0, errors.New("DW_FORM_strx with no .debug_str_offsets section")
		}
		off, ok := offsetEntry(dd.ss.offsets, uint64(dd.ss.base), i, u.offSize, order)
		if !ok {
			return 0, fmt.Errorf("string index %d out of .debug_str_offsets", i)
		}
		str, err := cString(dd.ss.str, off)
		fl.setStringBytes(str, class)
		return next, err
	case fAddrx, fAddrx1, fAddrx2, fAddrx3, fAddrx4:
		i, next, err := v.index(form)
		if err != nil {
			return 0, err
		}
		if len(dd.addr) == 0 {
			return 0, errors.New("DW_FORM_addrx with no .debug_addr section")
		}
		a, ok := addrEntry(dd.addr, int64(dd.bases.addr), i, u.addrSize, order)
		if !ok {
			return 0, fmt.Errorf("address index %d out of .debug_addr", i)
		}
		fl.setUint(a, class)
		return next, nil
	case fRnglistx:
		i, next, err := v.uleb()
		if err != nil {
			return 0, err
		}
		off, ok := offsetEntry(dd.rngls, dd.bases.rnglists, i, u.offSize, order)
		if !ok {
			return 0, fmt.Errorf("range list index %d out of .debug_rnglists", i)
		}
		fl.setUint(dd.bases.rnglists+off, class)
		return next, nil
	}
	return 0, errors.New("unknown form")
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

// cString is the bytes of the NUL-terminated string at off in sec.
func cString(sec []byte, off uint64) ([]byte, error) {
	if off > uint64(len(sec)) {
		return nil, errShort
	}
	i := bytes.IndexByte(sec[off:], 0)
	if i < 0 {
		return nil, errShort
	}
	return sec[off : off+uint64(i)], nil
}

// formClass is the class debug/dwarf gives a value of form of attribute
// a in a unit of version v.
func formClass(form uint64, a Attr, v int) Class {
	switch form {
	case fAddr, fAddrx, fAddrx1, fAddrx2, fAddrx3, fAddrx4:
		return ClassAddress
	case fBlock1, fBlock2, fBlock4, fBlock:
		return blockClass(a)
	case fData1, fData2, fData4, fData8, fSdata, fUdata, fData16, fImplicitConst:
		return constClass(a, v)
	case fFlag, fFlagPresent:
		return ClassFlag
	case fRefAddr, fRef1, fRef2, fRef4, fRef8, fRefUdata, fRefSup4, fRefSup8:
		return ClassReference
	case fRefSig8:
		return ClassReferenceSig
	case fString, fStrp, fStrx, fStrpSup, fLineStrp, fStrx1, fStrx2, fStrx3, fStrx4:
		return ClassString
	case fSecOffset:
		return ptrClass(a)
	case fExprloc:
		return ClassExprLoc
	case fGNURefAlt:
		return ClassReferenceAlt
	case fGNUStrpAlt:
		return ClassStringAlt
	case fLoclistx:
		return ClassLocList
	case fRnglistx:
		return ClassRngList
	}
	return ClassUnknown
}
