package dwarf

import (
	"strings"

	"github.com/binscope/binscope/internal/leb128"
)

// fnAttrs are the attributes the functions walk reads of a subprogram or
// an inline site, typed: through a debug/dwarf entry each value is an
// allocation of its own (an interface), and a C++ program's walk reads
// some 20,000 such DIEs. quickAttrs reads them straight from the scan's
// bytes (the tests' oracle, attrsOf, from debug/dwarf's entry).
type fnAttrs struct {
	name, linkage, mipsLinkage lazyStr
	external, declaration      bool
	inline                     int64 // DW_AT_inline, 0 when absent
	origin, spec, typ          Offset
	// decl_file and call_file index the unit's file table; -1 when
	// absent. The lines and the column are 0 when absent.
	declFile, declLine             int64
	callFile, callLine, callColumn int64
	low                            uint64
	hasLow                         bool
	high                           attrPC // DW_AT_high_pc
	entry                          attrPC // DW_AT_entry_pc
	rangesOff                      int64  // DW_AT_ranges: the list's offset
	hasRanges                      bool
	frameBase                      locAttr
	hasFrameBase                   bool
}

// attrPC is an address attribute that may also be an offset from the
// DIE's lowest address (DW_AT_high_pc, DW_AT_entry_pc).
type attrPC struct {
	addr   uint64
	offset int64
	kind   pcKind
}

type pcKind uint8

const (
	pcNone   pcKind = iota
	pcAddr          // an address (class address)
	pcOffset        // an offset (class constant)
)

// linkageName is DW_AT_linkage_name, else the pre-standard MIPS one.
func (a *fnAttrs) linkageName() lazyStr {
	if a.mipsLinkage == "" {
		return a.linkage // nothing to choose: read when needed
	}
	if l := a.linkage.String(); l != "" {
		return lazyStr(l)
	}
	return lazyStr(a.mipsLinkage.String())
}

// lazyStr is a string attribute as a walk keeps it, its bytes read only
// when needed (String): most subprograms of a C++ program are
// declarations a walk drops, their names never read. It is the string,
// or the bytes from its start to the end of a string section that ends
// with a NUL.
type lazyStr string

// String is the string s holds.
func (s lazyStr) String() string {
	if i := strings.IndexByte(string(s), 0); i >= 0 {
		return string(s[:i])
	}
	return string(s)
}

// lazyStr reads the string attribute at pos, as strBytes, without
// looking for its end when it lies in a section that ends with a NUL.
func (s *scan) lazyStr(pos int, sp attrSpec, ss *strSections) (lazyStr, bool) {
	if sp.form != fString {
		sec, off, _, ok := s.strPlace(pos, sp, ss)
		if !ok {
			return "", false
		}
		if sec[len(sec)-1] == 0 {
			return lazyStr(secString(sec[off:])), true
		}
	}
	b, _, ok := s.strBytes(pos, sp, ss)
	return lazyStr(secString(b)), ok
}

// quickAttrs reads the attributes of the DIE next just scanned (a
// subprogram or an inline site) from the scan's bytes, with the values
// debug/dwarf gives; false for a form it does not read or a malformed
// value.
func (de *dieEntries) quickAttrs() (fnAttrs, bool) {
	d, s := de.last, de.sc
	a := fnAttrs{declFile: -1, callFile: -1}
	if !de.unit.ok {
		return a, false
	}
	pos := d.attrs
	for _, sp := range d.decl.specs {
		next, err := s.skip(pos, sp)
		if err != nil {
			return a, false
		}
		ok := true
		if sp.form == fIndirect {
			if pos, sp, ok = s.indirect(pos, sp); !ok {
				return a, false
			}
		}
		switch sp.attr {
		case AttrName, AttrLinkageName, attrMIPSLinkageName:
			var v lazyStr
			if v, ok = s.lazyStr(pos, sp, de.strs); ok {
				switch sp.attr {
				case AttrName:
					a.name = v
				case AttrLinkageName:
					a.linkage = v
				default:
					a.mipsLinkage = v
				}
			}
		case AttrExternal:
			a.external, ok = s.flagAt(pos, sp.form)
		case AttrDeclaration:
			a.declaration, ok = s.flagAt(pos, sp.form)
		case AttrInline:
			a.inline, ok = s.constant(pos, sp)
		case AttrAbstractOrigin:
			a.origin, ok = s.walkRef(pos, sp)
		case AttrSpecification:
			a.spec, ok = s.walkRef(pos, sp)
		case AttrType:
			a.typ, ok = s.walkRef(pos, sp)
		case AttrDeclFile:
			a.declFile, ok = s.constant(pos, sp)
		case AttrDeclLine:
			a.declLine, ok = s.constant(pos, sp)
		case AttrCallFile:
			a.callFile, ok = s.constant(pos, sp)
		case AttrCallLine:
			a.callLine, ok = s.constant(pos, sp)
		case AttrCallColumn:
			a.callColumn, ok = s.constant(pos, sp)
		case AttrLowpc:
			a.low, ok = de.address(pos, sp)
			a.hasLow = ok
		case AttrHighpc:
			a.high, ok = de.pc(pos, sp)
		case AttrEntrypc:
			a.entry, ok = de.pc(pos, sp)
		case AttrRanges:
			a.rangesOff, ok = de.rangesAt(pos, sp)
			a.hasRanges = ok
		case AttrFrameBase:
			a.frameBase, ok = s.loc(pos, next, sp)
			a.hasFrameBase = ok
		}
		if !ok {
			return a, false
		}
		pos = next
	}
	return a, true
}

// attrs reads the attributes of e, a subprogram or an inline site next
// returned as the scratch entry of a typed walk, from the scan's bytes. A
// form the scan does not read, or a malformed value, is errScan: the walk
// leaves a span of the unit out (see lost.go).
func (de *dieEntries) attrs(e *Entry) (fnAttrs, error) {
	if e == &de.scratchE {
		if a, ok := de.quickAttrs(); ok {
			return a, nil
		}
	}
	return fnAttrs{}, errScan
}

// walkRef reads a reference as a walk keeps it, as debug/dwarf's entry
// gives it as an offset: a DIE's offset, or 0 for a type signature
// (DW_FORM_ref_sig8: a type unit's type, in no DIE of .debug_info).
func (s *scan) walkRef(pos int, sp attrSpec) (Offset, bool) {
	if sp.form == fRefSig8 {
		return 0, pos+8 <= s.u.end
	}
	return s.ref(pos, sp)
}

// indirect resolves a DW_FORM_indirect attribute at pos: the offset of
// its value and its spec with the form the value names.
func (s *scan) indirect(pos int, sp attrSpec) (int, attrSpec, bool) {
	form, n := leb128.Uint(s.info[pos:s.u.end])
	if n <= 0 || form == fIndirect || form == fImplicitConst {
		return 0, sp, false
	}
	return pos + n, attrSpec{attr: sp.attr, form: form, size: formSize(form, &s.u)}, true
}

// flagAt reads a flag of form form at pos as debug/dwarf does (true is
// 1); ok is false for another form.
func (s *scan) flagAt(pos int, form uint64) (set, ok bool) {
	switch form {
	case fFlagPresent:
		return true, true
	case fFlag:
		return pos < s.u.end && s.info[pos] == 1, pos < s.u.end
	}
	return false, false
}

// pc reads DW_AT_high_pc or DW_AT_entry_pc: an address, or a constant
// offset.
func (de *dieEntries) pc(pos int, sp attrSpec) (attrPC, bool) {
	switch sp.form {
	case fAddr, fAddrx, fAddrx1, fAddrx2, fAddrx3, fAddrx4:
		v, ok := de.address(pos, sp)
		return attrPC{addr: v, kind: pcAddr}, ok
	}
	v, ok := de.sc.constant(pos, sp)
	return attrPC{offset: v, kind: pcOffset}, ok
}

// rangesAt reads DW_AT_ranges: the offset of its list in .debug_ranges or
// .debug_rnglists, a DW_FORM_rnglistx index resolved through the unit's
// table.
func (de *dieEntries) rangesAt(pos int, sp attrSpec) (int64, bool) {
	s := de.sc
	switch sp.form {
	case fSecOffset:
		if pos+s.u.offSize > s.u.end {
			return 0, false
		}
		if s.u.offSize == 8 {
			return int64(s.order.Uint64(s.info[pos:])), true
		}
		return int64(s.order.Uint32(s.info[pos:])), true
	case fRnglistx:
		var fl Field
		ok := de.fieldAt(pos, sp, &fl) && fl.kind == kindUint
		return int64(fl.n), ok
	}
	return s.constant(pos, sp) // DWARF 2 and 3 data forms, as debug/dwarf reads them
}

// attrRanges is the address ranges of the DIE a describes, as
// debug/dwarf's Data.Ranges gives them (nil for none), appended to buf[:0]
// (the caller's to reuse: the walk copies what it keeps); e is the scratch
// entry attrs read a from (a range list the scan does not read is left to
// debug/dwarf through the DIE's full entry).
func (de *dieEntries) attrRanges(e *Entry, a fnAttrs, buf [][2]uint64) ([][2]uint64, error) {
	if e != &de.scratchE {
		return nil, errScan
	}
	ret := buf[:0]
	if a.hasLow {
		switch a.high.kind {
		case pcAddr:
			ret = append(ret, [2]uint64{a.low, a.high.addr})
		case pcOffset:
			ret = append(ret, [2]uint64{a.low, a.low + uint64(a.high.offset)})
		}
	}
	if !a.hasRanges {
		return ret, nil
	}
	var out [][2]uint64
	ok := false
	if de.sc.u.version >= 5 {
		out, ok = de.rnglist(a.rangesOff, ret)
	} else {
		out, ok = de.rangeList(a.rangesOff, ret)
	}
	if !ok {
		full, err := de.full(de.last)
		if err != nil {
			return nil, err
		}
		return de.f.ranges(full) // and the error it says
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// entryPC is DW_AT_entry_pc of the DIE a describes, whose ranges are rs:
// an address, or an offset from its first range (see entryPCOf).
func (a *fnAttrs) entryPC(rs [][2]uint64) uint64 {
	switch a.entry.kind {
	case pcAddr:
		return a.entry.addr
	case pcOffset:
		if len(rs) > 0 {
			return rs[0][0] + uint64(a.entry.offset)
		}
	}
	return 0
}
