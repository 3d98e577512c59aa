package dwarf

import (
	"strings"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// namedPrefix is LoadNamed's fast path: it reads .debug_info from its
// start one compile unit at a time (inflating a compressed section only
// that far), scans each unit's top level, and stops at the first unit
// that defines each name; the sections kept then hold only the units read
// (and the line programs of the units found), and the types are
// converted from them (namedSpec); kept for speed: `bash bench/before.sh
// main REV 9 C-link_map-cold` with no prefix read in REV: 21 times the
// CPU time (9 of 9 pairs). ok is false when it cannot answer
// exactly: a name found in no unit (a short or generic name: the whole
// file decides), a C++ unit, a form the scan does not read, or any error,
// which the full read then reports if it is real. What it read stays read
// for that full read (elfx.Lazy). ahead, when not nil, is called once the
// read passes aheadAfter bytes of .debug_info with a name still missing.
func namedPrefix(ef, df *elfx.File, names []string, opts *Options, ahead func()) (spec *types.Spec, ok bool) {
	if len(names) == 0 || !df.PrefixReadable() {
		return nil, false
	}
	info, err := df.LazySection(".debug_info")
	if err != nil {
		return nil, false
	}
	found, end, lineEnd, ok := prefixScan(df, info, names, ahead)
	if !ok {
		return nil, false
	}
	ok, err = df.PrefixSections(end, lineEnd)
	if err != nil || !ok {
		return nil, false
	}
	f := makeFile(ef, df, opts)
	units, err := f.unitEntries()
	if err != nil || len(units) == 0 {
		return nil, false
	}
	for _, u := range found {
		if u >= len(units) {
			return nil, false
		}
	}
	spec, ok, err = f.namedSpec(units, found, names)
	if err != nil {
		return nil, false
	}
	return spec, ok
}

// prefixScan reads units from the start of .debug_info until each name
// is found at a unit's top level; it returns the index of the first unit
// defining each name, how many bytes of .debug_info the units read take,
// and how many of .debug_line their line programs need; ahead as for
// namedPrefix.
func prefixScan(df *elfx.File, info *elfx.Lazy, names []string, ahead func()) (found []int, end, lineEnd uint64, ok bool) {
	sections := map[string][]byte{}
	for _, name := range []string{".debug_abbrev", ".debug_str", ".debug_line_str", ".debug_str_offsets"} {
		l, err := df.LazySection(name)
		if err == elfx.ErrNoSection {
			continue
		}
		if err != nil {
			return nil, 0, 0, false
		}
		if sections[name], err = l.All(); err != nil {
			return nil, 0, 0, false
		}
	}
	if sections[".debug_abbrev"] == nil {
		return nil, 0, 0, false
	}
	ss := &strSections{str: sections[".debug_str"], lineStr: sections[".debug_line_str"], offsets: sections[".debug_str_offsets"]}
	sc := &scan{abbrev: sections[".debug_abbrev"], order: df.ByteOrder, tables: &abbrevTables{m: map[tableKey]*abbrevTable{}}}
	found = make([]int, len(names))
	for i := range found {
		found[i] = -1
	}
	left := len(names)
	var line *elfx.Lazy
	for u := 0; left > 0 && end < info.Size(); u++ {
		next, ok := unitEnd(df, info, end)
		if !ok {
			return nil, 0, 0, false
		}
		var err error
		if sc.info, err = info.Prefix(next); err != nil {
			return nil, 0, 0, false
		}
		sc.pos = int(end)
		hits, stmt, ok := scanUnitTop(sc, names, ss)
		if !ok {
			return nil, 0, 0, false
		}
		end = next
		for i, h := range hits {
			if h && found[i] < 0 {
				found[i] = u
				left--
			}
		}
		if ahead != nil && left > 0 && end >= aheadAfter {
			ahead()
			ahead = nil
		}
		// The line programs of every unit read: a type of a found unit
		// may refer to one in an earlier unit, whose files it names.
		if stmt >= 0 {
			if line == nil {
				if line, err = df.LazySection(".debug_line"); err != nil {
					return nil, 0, 0, false
				}
			}
			n, ok := unitEnd(df, line, uint64(stmt))
			if !ok {
				return nil, 0, 0, false
			}
			lineEnd = max(lineEnd, n)
		}
	}
	return found, end, lineEnd, left == 0
}

// unitEnd is the offset after the unit at off of a section l whose units
// start with their length (compile units, line programs), read that far.
func unitEnd(df *elfx.File, l *elfx.Lazy, off uint64) (uint64, bool) {
	b, err := l.Prefix(off + 12)
	if err != nil || uint64(len(b)) < off+4 {
		return 0, false
	}
	length, hdr := uint64(df.ByteOrder.Uint32(b[off:])), uint64(4)
	if length == 0xffffffff {
		if uint64(len(b)) < off+12 {
			return 0, false
		}
		length, hdr = df.ByteOrder.Uint64(b[off+4:]), 12
	}
	end := off + hdr + length
	if length == 0 || end > l.Size() {
		return 0, false
	}
	return end, true
}

// scanUnitTop scans the unit at sc.pos (its bytes at hand in sc.info) as
// scanUnit does: which names its top level (namespaces included) defines
// a type of. It returns the unit's DW_AT_stmt_list, or -1; ok is false
// when the scan cannot read the unit.
func scanUnitTop(sc *scan, names []string, ss *strSections) (hits []bool, stmt int64, ok bool) {
	hits = make([]bool, len(names))
	if err := sc.unit(); err != nil {
		return nil, 0, false
	}
	cu, ok, err := sc.next()
	if err != nil || !ok || (cu.tag != TagCompileUnit && cu.tag != TagPartialUnit) {
		return nil, 0, false
	}
	stmt = -1
	if v, ok := sc.offsetAttr(cu, AttrStmtList); ok {
		stmt = int64(v)
	}
	ss.base = -1
	if v, ok := sc.offsetAttr(cu, AttrStrOffsetsBase); ok {
		ss.base = int64(v)
	}
	if !cu.children {
		return hits, stmt, true
	}
	var scopes []string
	scope := ""
	for {
		d, ok, err := sc.next()
		if err != nil || !ok || int(d.off) >= sc.u.end {
			return nil, 0, false
		}
		if d.tag == 0 {
			if len(scopes) == 0 {
				return hits, stmt, true
			}
			scope, scopes = scopes[len(scopes)-1], scopes[:len(scopes)-1]
			continue
		}
		var name []byte
		if d.decl.name >= 0 {
			sp := d.decl.specs[d.decl.name]
			pos, _, ok := sc.attrPos(d, AttrName)
			if !ok {
				return nil, 0, false
			}
			if name, _, ok = sc.strBytes(pos, sp, ss); !ok {
				return nil, 0, false
			}
		}
		if d.tag == TagNamespace || d.tag == TagModule {
			if d.children {
				scopes = append(scopes, scope)
				if len(name) == 0 {
					name = []byte("(anonymous namespace)")
				}
				scope += string(name) + "::"
			}
			continue
		}
		if isTypeTag(d.tag) && len(name) > 0 {
			decl, ok := sc.flag(d, AttrDeclaration)
			if !ok {
				return nil, 0, false
			}
			for i, want := range names {
				hits[i] = hits[i] || (!decl && len(want) == len(scope)+len(name) &&
					strings.HasPrefix(want, scope) && want[len(scope):] == string(name))
			}
		}
		if err := sc.skipChildren(d); err != nil {
			return nil, 0, false
		}
	}
}

// attrPos is the offset in sc.info of the value of d's attribute a, and
// its form; ok is false when d has no such attribute or the scan cannot
// skip to it.
func (sc *scan) attrPos(d die, a Attr) (pos int, form uint64, ok bool) {
	pos = d.attrs
	var err error
	for _, sp := range d.decl.specs {
		if sp.attr == a {
			return pos, sp.form, true
		}
		if pos, err = sc.skip(pos, sp); err != nil {
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// offsetAttr reads d's attribute a as a section offset or constant.
func (sc *scan) offsetAttr(d die, a Attr) (uint64, bool) {
	pos, form, ok := sc.attrPos(d, a)
	if !ok {
		return 0, false
	}
	b := sc.info[pos:sc.u.end]
	size := 0
	switch form {
	case fSecOffset:
		size = sc.u.offSize
	case fData4:
		size = 4
	case fData8:
		size = 8
	default:
		return 0, false
	}
	if len(b) < size {
		return 0, false
	}
	if size == 8 {
		return sc.order.Uint64(b), true
	}
	return uint64(sc.order.Uint32(b)), true
}

// flag reads d's flag attribute a: false when d has none; ok is false
// for a form the scan does not read as a flag (an implicit constant).
func (sc *scan) flag(d die, a Attr) (set, ok bool) {
	pos, form, ok := sc.attrPos(d, a)
	if !ok {
		return false, true
	}
	return sc.flagAt(pos, form)
}
