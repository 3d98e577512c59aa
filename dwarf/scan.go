package dwarf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/binscope/binscope/internal/leb128"
)

// scan walks the DIE tree of .debug_info reading of each DIE only its
// abbreviation (tag, children) and skipping its attributes by their forms,
// without allocating: most DIEs of a file are types, members and variables
// a walk over the functions passes by. A walk decodes the attributes it
// needs from the scan's bytes (quick.go, funcattrs.go), and the DIEs
// whose forms those do not read through the package's decoder
// (dieEntries.full, decode.go); a malformed byte is errScan, which costs
// the walk a span of that unit (see lost.go), reported as a
// *elfx.DecodeError naming the DIE. A unit header that does not read is a
// headerError, which refuses the file when it opens (checkUnits).
type scan struct {
	info   []byte
	abbrev []byte
	order  binary.ByteOrder
	tables *abbrevTables

	pos int // offset in info of the next DIE
	// limit, when not 0, is where the scan ends, as at the end of the
	// section: a unit's offset, or a DIE's at the depth of its unit's
	// children (see funcSpans).
	limit int
	u     scanHeader
	// at is where the DIE (or unit header) next read last starts.
	at int
}

var errScan = errors.New("DIE scan out of step")

// scanHeader is the header of the unit being scanned.
type scanHeader struct {
	start, end int // the unit's header and the offset after it
	first      int // the unit's first DIE
	version    int
	addrSize   int
	offSize    int
	table      *abbrevTable
}

// abbrevTables are the abbreviation tables a file's scans parsed, shared
// by the scans of the file (the functions walk and the type index run at
// once). A declaration is parsed once however many tables hold it (see
// table).
type abbrevTables struct {
	mu sync.Mutex
	m  map[tableKey]*abbrevTable
	// decls are the declarations parsed, by their unit format and bytes
	// (see table), and specs a scratch slice of table (under mu).
	decls map[string]*abbrevDecl
	specs []attrSpec
	key   []byte
}

type tableKey struct {
	off                        uint64
	version, addrSize, offSize int
}

// abbrevTable is one abbreviation table, for one unit format.
type abbrevTable struct {
	dense  []*abbrevDecl // by code, for the usual codes 1..n
	sparse map[uint64]*abbrevDecl
}

type abbrevDecl struct {
	tag      Tag
	children bool
	specs    []attrSpec
	fixed    int // bytes of all attributes when every form has a fixed size, else -1
	name     int // index of DW_AT_name in specs, or -1
	sibling  int // index of DW_AT_sibling in specs, or -1
	// nameAt and siblingAt are where the values of DW_AT_name and
	// DW_AT_sibling start, counted from the DIE's first attribute, when
	// the forms before them have fixed sizes; else -1.
	nameAt, siblingAt int
}

type attrSpec struct {
	attr     Attr
	form     uint64
	size     int   // fixed size of the form in this unit format, or -1
	implicit int64 // the value of a DW_FORM_implicit_const
}

// die is one scanned DIE. A null DIE has tag 0.
type die struct {
	off      Offset
	tag      Tag
	children bool
	decl     *abbrevDecl
	attrs    int // offset in info of its first attribute
}

// DWARF forms (DW_FORM_*).
const (
	fAddr          = 0x01
	fBlock2        = 0x03
	fBlock4        = 0x04
	fData2         = 0x05
	fData4         = 0x06
	fData8         = 0x07
	fString        = 0x08
	fBlock         = 0x09
	fBlock1        = 0x0a
	fData1         = 0x0b
	fFlag          = 0x0c
	fSdata         = 0x0d
	fStrp          = 0x0e
	fUdata         = 0x0f
	fRefAddr       = 0x10
	fRef1          = 0x11
	fRef2          = 0x12
	fRef4          = 0x13
	fRef8          = 0x14
	fRefUdata      = 0x15
	fIndirect      = 0x16
	fSecOffset     = 0x17
	fExprloc       = 0x18
	fFlagPresent   = 0x19
	fStrx          = 0x1a
	fAddrx         = 0x1b
	fRefSup4       = 0x1c
	fStrpSup       = 0x1d
	fData16        = 0x1e
	fLineStrp      = 0x1f
	fRefSig8       = 0x20
	fImplicitConst = 0x21
	fLoclistx      = 0x22
	fRnglistx      = 0x23
	fRefSup8       = 0x24
	fStrx1         = 0x25
	fStrx2         = 0x26
	fStrx3         = 0x27
	fStrx4         = 0x28
	fAddrx1        = 0x29
	fAddrx2        = 0x2a
	fAddrx3        = 0x2b
	fAddrx4        = 0x2c
	fGNURefAlt     = 0x1f20
	fGNUStrpAlt    = 0x1f21
)

// newScan returns a scanner over the file's .debug_info (elfx keeps the
// bytes of every DWARF section it reads: inflated, relocated).
func (f *File) newScan() *scan {
	info, abbrev := f.Debug.DWARFSection(".debug_info"), f.Debug.DWARFSection(".debug_abbrev")
	return &scan{info: info, abbrev: abbrev, order: f.Debug.ByteOrder, tables: f.abbrevs}
}

// formSize is the size of a form's value in a unit format: 0 or more
// bytes, -1 for a size the value itself gives, -2 for a form the scanner
// does not know.
func formSize(form uint64, u *scanHeader) int {
	switch form {
	case fFlagPresent, fImplicitConst:
		return 0
	case fData1, fRef1, fFlag, fStrx1, fAddrx1:
		return 1
	case fData2, fRef2, fStrx2, fAddrx2:
		return 2
	case fStrx3, fAddrx3:
		return 3
	case fData4, fRef4, fStrx4, fAddrx4, fRefSup4:
		return 4
	case fData8, fRef8, fRefSig8, fRefSup8:
		return 8
	case fData16:
		return 16
	case fAddr:
		return u.addrSize
	case fRefAddr:
		if u.version == 2 {
			return u.addrSize
		}
		return u.offSize
	case fStrp, fLineStrp, fSecOffset, fStrpSup, fGNURefAlt, fGNUStrpAlt:
		return u.offSize
	case fSdata, fUdata, fRefUdata, fStrx, fAddrx, fLoclistx, fRnglistx, fString,
		fBlock, fBlock1, fBlock2, fBlock4, fExprloc, fIndirect:
		return -1
	}
	return -2
}

// table parses (once per unit format) the abbreviation table at off.
// Its declarations are shared with the tables parsed before it: a C++
// file's units declare mostly the same ones (ceph-osd's 415 tables, 3 MB
// of .debug_abbrev, took 59 MB with a copy of each declaration in each
// table).
func (s *scan) table(off uint64, u *scanHeader) (*abbrevTable, error) {
	k := tableKey{off, u.version, u.addrSize, u.offSize}
	s.tables.mu.Lock()
	defer s.tables.mu.Unlock()
	if t := s.tables.m[k]; t != nil {
		return t, nil
	}
	if off >= uint64(len(s.abbrev)) {
		return nil, errScan
	}
	if s.tables.decls == nil {
		s.tables.decls = map[string]*abbrevDecl{}
	}
	t := &abbrevTable{}
	b := s.abbrev[off:]
	for {
		code, n := leb128.Uint(b)
		if n <= 0 {
			return nil, errScan
		}
		b = b[n:]
		if code == 0 {
			break
		}
		d, n, err := s.decl(b, u)
		if err != nil {
			return nil, err
		}
		b = b[n:]
		switch {
		case code >= 1 && code <= uint64(len(t.dense)):
			t.dense[code-1] = d // a code twice: the last one, as debug/dwarf
		case code == uint64(len(t.dense)+1) && t.sparse == nil:
			t.dense = append(t.dense, d)
		default:
			if t.sparse == nil {
				t.sparse = map[uint64]*abbrevDecl{}
			}
			t.sparse[code] = d
		}
	}
	s.tables.m[k] = t
	return t, nil
}

// decl reads the declaration at the start of b (after its code) for
// the unit format of u, and returns it and its length in b: the one
// parsed before from the same bytes for the same format, else a new one.
// s.tables is locked.
func (s *scan) decl(b []byte, u *scanHeader) (*abbrevDecl, int, error) {
	tag, n := leb128.Uint(b)
	if n <= 0 || len(b) < n+1 {
		return nil, 0, errScan
	}
	d := abbrevDecl{tag: Tag(tag), children: b[n] != 0, name: -1, sibling: -1}
	at := n + 1
	specs := s.tables.specs[:0]
	defer func() { s.tables.specs = specs[:0] }()
	for {
		attr, n := leb128.Uint(b[at:])
		if n <= 0 {
			return nil, 0, errScan
		}
		at += n
		form, n := leb128.Uint(b[at:])
		if n <= 0 {
			return nil, 0, errScan
		}
		at += n
		if attr == 0 && form == 0 {
			break
		}
		var implicit int64
		if form == fImplicitConst {
			if implicit, n = leb128.Int(b[at:]); n <= 0 {
				return nil, 0, errScan
			}
			at += n
		}
		// A form the scan does not know (size -2) fails the DIEs
		// that use it, when skipped, as debug/dwarf fails them.
		size := formSize(form, u)
		switch Attr(attr) {
		case AttrName:
			d.name = len(specs)
		case AttrSibling:
			d.sibling = len(specs)
		}
		specs = append(specs, attrSpec{attr: Attr(attr), form: form, size: size, implicit: implicit})
	}
	// The sizes of forms depend on the unit format, as well as the bytes.
	key := append(s.tables.key[:0], byte(u.version), byte(u.addrSize), byte(u.offSize))
	key = append(key, b[:at]...)
	s.tables.key = key
	if p := s.tables.decls[string(key)]; p != nil {
		return p, at, nil
	}
	d.specs = slices.Clone(specs)
	d.nameAt, d.siblingAt = fixedAt(d.specs, d.name), fixedAt(d.specs, d.sibling)
	for _, sp := range d.specs {
		if sp.size < 0 {
			d.fixed = -1
			break
		}
		d.fixed += sp.size
	}
	p := &d
	s.tables.decls[string(key)] = p
	return p, at, nil
}

// fixedAt is where the value of specs[i] starts, from the first
// attribute's, when the forms before it have fixed sizes; else -1 (and
// for i = -1).
func fixedAt(specs []attrSpec, i int) int {
	if i < 0 {
		return -1
	}
	at := 0
	for _, sp := range specs[:i] {
		if sp.size < 0 {
			return -1
		}
		at += sp.size
	}
	return at
}

func (t *abbrevTable) get(code uint64) *abbrevDecl {
	if code >= 1 && code <= uint64(len(t.dense)) {
		return t.dense[code-1]
	}
	return t.sparse[code]
}

// unit reads the unit header at s.pos and its abbreviations.
func (s *scan) unit() error {
	abbrevOff, err := s.header()
	if err != nil {
		return err
	}
	t, err := s.table(abbrevOff, &s.u)
	if err != nil {
		return err
	}
	s.u.table = t
	return nil
}

// header reads the unit header at s.pos into s.u and moves to the unit's
// first entry; it returns the offset of the unit's abbreviations. A
// header it cannot read is a headerError saying what is wrong with it.
func (s *scan) header() (uint64, error) {
	b := s.info[s.pos:]
	if len(b) < 4 {
		return 0, headerError("unit header cut short by the section's end")
	}
	u := scanHeader{start: s.pos, offSize: 4}
	length := uint64(s.order.Uint32(b))
	hdr := 4
	if length == 0xffffffff {
		if len(b) < 12 {
			return 0, headerError("unit header cut short by the section's end")
		}
		length, u.offSize, hdr = s.order.Uint64(b[4:]), 8, 12
	} else if length >= 0xfffffff0 {
		return 0, headerErrorf("reserved unit length %#x", length)
	}
	if length > uint64(len(b)-hdr) {
		return 0, headerErrorf("unit length %#x runs past the section's end (%#x bytes left)", length, len(b)-hdr)
	}
	u.end = s.pos + hdr + int(length)
	b = b[hdr : hdr+int(length)]
	if len(b) < 2 {
		return 0, headerErrorf("unit of %d bytes: no room for its version", length)
	}
	u.version = int(s.order.Uint16(b))
	if u.version < 2 || u.version > 5 {
		return 0, headerErrorf("unsupported DWARF version %d", u.version)
	}
	abbrevOff, b, err := s.headerRest(&u, b[2:])
	if err != nil {
		return 0, err
	}
	if abbrevOff >= uint64(len(s.abbrev)) {
		return 0, headerErrorf("abbreviations at %#x, past the end of .debug_abbrev (%#x bytes)", abbrevOff, len(s.abbrev))
	}
	if a := u.addrSize; a != 1 && a != 2 && a != 4 && a != 8 {
		return 0, headerErrorf("address size %d (not 1, 2, 4 or 8)", a)
	}
	u.first = u.end - len(b)
	s.u = u
	s.pos = u.first
	return abbrevOff, nil
}

// headerRest reads the header of u after its version, from b: the offset
// of its abbreviations, its address size, and in DWARF 5 its unit type
// and the fields that type adds; it returns what follows (the DIEs).
func (s *scan) headerRest(u *scanHeader, b []byte) (abbrevOff uint64, rest []byte, err error) {
	off := func() uint64 {
		if u.offSize == 8 {
			v := s.order.Uint64(b)
			b = b[8:]
			return v
		}
		v := uint64(s.order.Uint32(b))
		b = b[4:]
		return v
	}
	if u.version <= 4 {
		if len(b) < u.offSize+1 {
			return 0, nil, u.tooShort()
		}
		abbrevOff = off()
		u.addrSize = int(b[0])
		return abbrevOff, b[1:], nil
	}
	if len(b) < 2+u.offSize {
		return 0, nil, u.tooShort()
	}
	utype := b[0]
	u.addrSize = int(b[1])
	b = b[2:]
	abbrevOff = off()
	switch utype {
	case 1, 3: // compile, partial
	case 4, 5: // skeleton, split compile: a DWO id
		if len(b) < 8 {
			return 0, nil, u.tooShort()
		}
		b = b[8:]
	case 2, 6: // type units: signature and type offset
		if len(b) < 8+u.offSize {
			return 0, nil, u.tooShort()
		}
		b = b[8+u.offSize:]
	default:
		return 0, nil, headerErrorf("unknown unit type %#x", utype)
	}
	return abbrevOff, b, nil
}

// headerError is a unit header the scan cannot read: what is wrong with
// it. To the walks it is errScan (errors.Is).
type headerError string

func (e headerError) Error() string        { return string(e) }
func (e headerError) Is(target error) bool { return target == errScan }

func (u *scanHeader) tooShort() error {
	return headerErrorf("unit of %d bytes too short for its header", u.end-u.start)
}

func headerErrorf(format string, args ...any) headerError {
	return headerError(fmt.Sprintf(format, args...))
}

// next returns the next DIE, ok false at the end of the section.
func (s *scan) next() (d die, ok bool, err error) {
	if s.limit > 0 && s.pos >= s.limit {
		return die{}, false, nil
	}
	for s.pos >= s.u.end {
		if s.pos >= len(s.info) {
			return die{}, false, nil
		}
		s.at = s.pos
		if err := s.unit(); err != nil {
			return die{}, false, err
		}
	}
	s.at = s.pos
	d.off = Offset(s.pos)
	code, n := leb128.Uint(s.info[s.pos:s.u.end])
	if n <= 0 {
		return die{}, false, errScan
	}
	s.pos += n
	if code == 0 {
		return d, true, nil
	}
	dc := s.u.table.get(code)
	if dc == nil {
		return die{}, false, errScan
	}
	d.tag, d.children, d.decl, d.attrs = dc.tag, dc.children, dc, s.pos
	if dc.fixed >= 0 {
		s.pos += dc.fixed
	} else {
		for _, sp := range dc.specs {
			if s.pos, err = s.skip(s.pos, sp); err != nil {
				return die{}, false, err
			}
		}
	}
	if s.pos > s.u.end {
		return die{}, false, errScan
	}
	return d, true, nil
}

// seekUnit moves to the header of the unit whose entry is at die,
// reading the headers from the section's start; false when no unit's
// entry is there.
func (s *scan) seekUnit(die int) bool {
	for s.pos = 0; s.pos < len(s.info) && s.pos <= die; s.skipUnit() {
		start := s.pos
		if _, err := s.header(); err != nil {
			return false
		}
		if s.pos == die {
			s.pos, s.u = start, scanHeader{}
			return true
		}
	}
	return false
}

// skipUnit moves to the end of the current unit: past the children of
// its unit DIE.
func (s *scan) skipUnit() { s.pos = s.u.end }

// skipChildren moves past the children of d, the DIE just returned: to
// its DW_AT_sibling as debug/dwarf's Reader does, else past the DIEs up
// to the null entry that ends them.
func (s *scan) skipChildren(d die) error {
	if !d.children {
		return nil
	}
	if to, ok := s.sibling(d); ok {
		if to < s.pos || to > s.u.end {
			return errScan
		}
		s.pos = to
		return nil
	}
	start := s.u.start
	for depth := 1; depth > 0; {
		c, ok, err := s.next()
		if err != nil {
			return err
		}
		if !ok || s.u.start != start {
			return errScan // the unit ended inside the children
		}
		switch {
		case c.tag == 0:
			depth--
		case c.children:
			depth++
		}
	}
	return nil
}

// sibling is d's DW_AT_sibling as an offset in .debug_info.
func (s *scan) sibling(d die) (int, bool) {
	pos, sp, ok := s.attrAt(d, d.decl.sibling, d.decl.siblingAt)
	if !ok {
		return 0, false
	}
	v, ok := s.refOffset(pos, sp)
	if !ok || sp.form == fRefAddr || v < uint64(s.u.start) || v > uint64(len(s.info)) {
		return 0, false
	}
	return int(v), true
}

// attrAt is where the value of d's attribute specs[i] starts (at, when
// not -1, counted from the first attribute), and its spec; false for
// i = -1 (no such attribute) or bytes the scan cannot skip.
func (s *scan) attrAt(d die, i, at int) (int, attrSpec, bool) {
	if i < 0 {
		return 0, attrSpec{}, false
	}
	if at >= 0 {
		return d.attrs + at, d.decl.specs[i], true
	}
	pos := d.attrs
	var err error
	for _, sp := range d.decl.specs[:i] {
		if pos, err = s.skip(pos, sp); err != nil {
			return 0, attrSpec{}, false
		}
	}
	return pos, d.decl.specs[i], true
}

// declaration reads d's DW_AT_declaration from the scan's bytes (false
// when absent); ok is false for a form the scan does not read.
func (s *scan) declaration(d die) (decl, ok bool) {
	pos := d.attrs
	var err error
	for _, sp := range d.decl.specs {
		if sp.attr == AttrDeclaration {
			return s.flagAt(pos, sp.form)
		}
		if pos, err = s.skip(pos, sp); err != nil {
			return false, false
		}
	}
	return false, true
}

// skip returns the offset after the value of one attribute at pos.
func (s *scan) skip(pos int, sp attrSpec) (int, error) {
	if sp.size >= 0 {
		return pos + sp.size, nil
	}
	end := s.u.end
	if pos >= end {
		return 0, errScan
	}
	b := s.info[pos:end]
	uv := func() (uint64, int, error) {
		v, n := leb128.Uint(b)
		if n <= 0 {
			return 0, 0, errScan
		}
		return v, n, nil
	}
	var length uint64
	var hdr int
	switch sp.form {
	case fSdata, fUdata, fRefUdata, fStrx, fAddrx, fLoclistx, fRnglistx:
		_, n, err := uv()
		return pos + n, err
	case fString:
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return pos + i + 1, nil
		}
		return 0, errScan
	case fBlock1:
		length, hdr = uint64(b[0]), 1
	case fBlock2:
		if len(b) < 2 {
			return 0, errScan
		}
		length, hdr = uint64(s.order.Uint16(b)), 2
	case fBlock4:
		if len(b) < 4 {
			return 0, errScan
		}
		length, hdr = uint64(s.order.Uint32(b)), 4
	case fBlock, fExprloc:
		v, n, err := uv()
		if err != nil {
			return 0, err
		}
		length, hdr = v, n
	case fIndirect:
		form, n, err := uv()
		if err != nil {
			return 0, err
		}
		size := formSize(form, &s.u)
		if size == -2 || form == fIndirect || form == fImplicitConst {
			return 0, errScan
		}
		return s.skip(pos+n, attrSpec{form: form, size: size})
	default:
		return 0, errScan
	}
	if length > uint64(len(b)-hdr) {
		return 0, errScan
	}
	return pos + hdr + int(length), nil
}

// name is d's DW_AT_name when its form is one the scan reads (an inline
// string, an offset into .debug_str or .debug_line_str, an index into
// .debug_str_offsets when ss has the unit's base); ok is false for other
// forms and for no name.
func (s *scan) name(d die, ss *strSections) (name string, ok bool) {
	if d.decl == nil {
		return "", false
	}
	pos, sp, ok := s.attrAt(d, d.decl.name, d.decl.nameAt)
	if !ok {
		return "", false
	}
	b, _, ok := s.strBytes(pos, sp, ss)
	return secString(b), ok
}
