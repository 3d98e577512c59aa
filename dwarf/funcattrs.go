package dwarf

import (
	"debug/dwarf"
)

// fnAttrs are the attributes the functions walk reads of a subprogram or
// an inline site, typed: through a debug/dwarf entry each value is an
// allocation of its own (an interface), and a C++ program's walk reads
// some 20,000 such DIEs. attrsOf reads them from an entry; quickAttrs
// straight from the scan's bytes, with the same values.
type fnAttrs struct {
	name, linkage, mipsLinkage string
	external, declaration      bool
	inline                     int64 // DW_AT_inline, 0 when absent
	origin, spec, typ          dwarf.Offset
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

// attrsOf reads a from an entry, with the values debug/dwarf gives.
func attrsOf(e *dwarf.Entry) fnAttrs {
	a := fnAttrs{declFile: -1, callFile: -1}
	for _, fl := range e.Field {
		switch fl.Attr {
		case dwarf.AttrName:
			a.name, _ = fl.Val.(string)
		case dwarf.AttrLinkageName:
			a.linkage, _ = fl.Val.(string)
		case attrMIPSLinkageName:
			a.mipsLinkage, _ = fl.Val.(string)
		case dwarf.AttrExternal:
			a.external, _ = fl.Val.(bool)
		case dwarf.AttrDeclaration:
			a.declaration, _ = fl.Val.(bool)
		case dwarf.AttrInline:
			a.inline, _ = fl.Val.(int64)
		case dwarf.AttrAbstractOrigin:
			a.origin, _ = fl.Val.(dwarf.Offset)
		case dwarf.AttrSpecification:
			a.spec, _ = fl.Val.(dwarf.Offset)
		case dwarf.AttrType:
			a.typ, _ = fl.Val.(dwarf.Offset)
		case dwarf.AttrDeclFile:
			if v, ok := fl.Val.(int64); ok { // as fileName reads it
				a.declFile = v
			}
		case dwarf.AttrDeclLine:
			a.declLine = constOr(fl.Val, 0)
		case dwarf.AttrCallFile:
			if v, ok := fl.Val.(int64); ok {
				a.callFile = v
			}
		case dwarf.AttrCallLine:
			a.callLine = constOr(fl.Val, 0)
		case dwarf.AttrCallColumn:
			a.callColumn = constOr(fl.Val, 0)
		case dwarf.AttrLowpc:
			a.low, a.hasLow = fl.Val.(uint64)
		case dwarf.AttrHighpc:
			a.high = pcOf(fl.Val)
		case dwarf.AttrEntrypc:
			a.entry = pcOf(fl.Val)
		case dwarf.AttrRanges:
			switch v := fl.Val.(type) {
			case int64:
				a.rangesOff, a.hasRanges = v, true
			case uint64:
				a.rangesOff, a.hasRanges = int64(v), fl.Class == dwarf.ClassRngList
			}
		case dwarf.AttrFrameBase:
			a.frameBase, a.hasFrameBase = readLocAttr(e, dwarf.AttrFrameBase)
		}
	}
	return a
}

// constOr is a constant's value (debug/dwarf's int64, or a uint64), else
// none.
func constOr(v any, none int64) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		return int64(x)
	}
	return none
}

func pcOf(v any) attrPC {
	switch x := v.(type) {
	case uint64:
		return attrPC{addr: x, kind: pcAddr}
	case int64:
		return attrPC{offset: x, kind: pcOffset}
	}
	return attrPC{}
}

// linkageName is DW_AT_linkage_name, else the pre-standard MIPS one.
func (a *fnAttrs) linkageName() string {
	if a.linkage != "" {
		return a.linkage
	}
	return a.mipsLinkage
}

// quickAttrs reads the attributes of the DIE next just scanned (a
// subprogram or an inline site) from the scan's bytes, as attrsOf reads
// its entry; false leaves it to the entry (a form read only by
// debug/dwarf).
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
		switch sp.attr {
		case dwarf.AttrName, dwarf.AttrLinkageName, attrMIPSLinkageName:
			var b []byte
			if b, _, ok = s.strBytes(pos, sp, de.strs); ok {
				switch sp.attr {
				case dwarf.AttrName:
					a.name = secString(b)
				case dwarf.AttrLinkageName:
					a.linkage = secString(b)
				default:
					a.mipsLinkage = secString(b)
				}
			}
		case dwarf.AttrExternal:
			a.external, ok = s.flagAt(pos, sp.form)
		case dwarf.AttrDeclaration:
			a.declaration, ok = s.flagAt(pos, sp.form)
		case dwarf.AttrInline:
			a.inline, ok = s.constant(pos, sp)
		case dwarf.AttrAbstractOrigin:
			a.origin, ok = s.ref(pos, sp)
		case dwarf.AttrSpecification:
			a.spec, ok = s.ref(pos, sp)
		case dwarf.AttrType:
			a.typ, ok = s.ref(pos, sp)
		case dwarf.AttrDeclFile:
			a.declFile, ok = s.constant(pos, sp)
		case dwarf.AttrDeclLine:
			a.declLine, ok = s.constant(pos, sp)
		case dwarf.AttrCallFile:
			a.callFile, ok = s.constant(pos, sp)
		case dwarf.AttrCallLine:
			a.callLine, ok = s.constant(pos, sp)
		case dwarf.AttrCallColumn:
			a.callColumn, ok = s.constant(pos, sp)
		case dwarf.AttrLowpc:
			a.low, _, ok = de.address(pos, sp)
			a.hasLow = ok
		case dwarf.AttrHighpc:
			a.high, ok = de.pc(pos, sp)
		case dwarf.AttrEntrypc:
			a.entry, ok = de.pc(pos, sp)
		case dwarf.AttrRanges:
			a.rangesOff, ok = de.rangesAt(pos, sp)
			a.hasRanges = ok
		case dwarf.AttrFrameBase:
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
// returned, and returns the entry to read its ranges from (attrRanges):
// in a typed walk, from the scan's bytes where quickAttrs can, else from
// its entry.
func (de *dieEntries) attrs(e *dwarf.Entry) (fnAttrs, *dwarf.Entry, error) {
	if e != &de.scratchE {
		return attrsOf(e), e, nil
	}
	if a, ok := de.quickAttrs(); ok {
		return a, e, nil
	}
	full, ok := de.quick(de.last)
	if !ok {
		var err error
		if full, err = de.full(de.last); err != nil {
			return fnAttrs{}, nil, err
		}
	}
	return attrsOf(full), full, nil
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
		v, _, ok := de.address(pos, sp)
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
		fl, _, ok := de.quickValue(pos, sp)
		v, _ := fl.Val.(uint64)
		return int64(v), ok
	}
	return s.constant(pos, sp) // DWARF 2 and 3 data forms, as debug/dwarf reads them
}

// attrRanges is the address ranges of the DIE a describes, as ranges
// reads them from its entry; e is that entry, or the scratch entry when
// quickAttrs read a (then a range list it cannot read is left to
// debug/dwarf through the DIE's full entry).
func (de *dieEntries) attrRanges(e *dwarf.Entry, a *fnAttrs) ([][2]uint64, error) {
	if e != &de.scratchE {
		return de.ranges(e)
	}
	var ret [][2]uint64
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
		return de.f.Data.Ranges(full) // and the error it says
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
