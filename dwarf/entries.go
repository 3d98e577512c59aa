package dwarf

import ()

// walk says which DIEs a walk over .debug_info reads attributes of.
type walk int

const (
	// funcWalk scans, decoding units, subprograms, inline sites and
	// (when asked) formal parameters; scopes carry their names.
	funcWalk walk = iota
	// typeWalk scans, decoding units; scopes and types with children
	// carry their names, other types an empty one when they have a name.
	typeWalk
)

// dieEntries yields the DIEs of .debug_info to a walk, from a scan,
// decoding only the DIEs the walk reads attributes of. A DIE the walk does
// not read comes as a scratch entry (offset, tag, children; the name of a
// scope or type) that the next call reuses.
type dieEntries struct {
	f        *File
	w        walk
	sc       *scan
	dd       *entryDecoder // decodes the DIEs read whole (full)
	last     die
	scratchE Entry
	field    [1]Field
	strs     *strSections
	// A funcWalk decodes subprograms and inline sites into quickE,
	// reused; unit is what their range lists need of their unit.
	unit   quickUnit
	unitAt int // the start of the unit unit describes
	quickE Entry
	// typed: subprograms and inline sites come as scratch entries, read
	// with attrs (funcattrs.go).
	typed bool
}

// dieEntries starts a walk of kind w.
func (f *File) dieEntries(w walk) *dieEntries {
	sc := f.newScan()
	return &dieEntries{f: f, w: w, sc: sc, dd: f.newDecoder(sc), strs: f.strSections()}
}

// next returns the next entry, nil at the end. params asks for a formal
// parameter's attributes.
func (de *dieEntries) next(params bool) (*Entry, error) {
	d, ok, err := de.sc.next()
	if err != nil || !ok {
		return nil, err
	}
	if de.sc.u.start != de.unitAt {
		// A new unit: quick decoding waits for its unit DIE's bases
		// (a type unit's DIE gives none).
		de.unitAt, de.unit = de.sc.u.start, quickUnit{}
	}
	de.last = d
	full, named, unread := false, false, false
	switch d.tag {
	case 0:
		de.scratchE = Entry{}
		return &de.scratchE, nil
	case TagCompileUnit, TagPartialUnit:
		full = true
	case TagSubprogram, TagInlinedSubroutine:
		// A typed walk reads them with attrs, from the scratch entry.
		full = de.w == funcWalk && !de.typed
	case TagNamespace, TagModule, TagStructType, TagClassType, TagUnionType:
		named = true
	case tagLLVMAnnotation:
		// A decl tag: its name and text (clang's, rare outside BPF).
		full = de.w == funcWalk
	default:
		if de.w == typeWalk && isTypeTag(d.tag) {
			// The index reads the name of a type that scopes its
			// children; of the others, only whether they have one.
			named, unread = d.children, !d.children
		}
	}
	if full {
		unit := d.tag == TagCompileUnit || d.tag == TagPartialUnit
		if !unit && de.w == funcWalk {
			return de.decoded(d)
		}
		e, err := de.full(d)
		if err == nil && unit {
			de.strs.base = -1 // the unit's names index .debug_str_offsets from here
			if base, ok := e.Int(AttrStrOffsetsBase); ok {
				de.strs.base = base
			}
			de.setUnit(e)
		}
		return e, err
	}
	de.scratchE = Entry{Offset: d.off, Tag: d.tag, Children: d.children}
	if (named || unread) && d.decl.name >= 0 {
		name, ok := "", true
		if named {
			name, ok = de.sc.name(d, de.strs)
		}
		if !ok {
			return de.full(d)
		}
		de.field[0] = Field{Attr: AttrName}
		de.field[0].setString(name, ClassString)
		de.scratchE.Field = de.field[:]
	}
	return &de.scratchE, nil
}

// declaration is the DW_AT_declaration of the DIE next just returned.
func (de *dieEntries) declaration() (decl, ok bool) {
	return de.sc.declaration(de.last)
}

// scratch reports whether e is the scratch entry next reuses.
func (de *dieEntries) scratch(e *Entry) bool { return e == &de.scratchE }

// full decodes d, the DIE the scan just read, whole; a DIE it cannot
// decode is errScan (the walk loses a span of its unit: see lost.go).
func (de *dieEntries) full(d die) (*Entry, error) {
	e, err := de.dd.decode(d)
	if err != nil {
		return nil, errScan
	}
	return e, nil
}

// skipUnit skips the children of the unit entry just returned.
func (de *dieEntries) skipUnit() { de.sc.skipUnit() }

// skipChildren skips the children of the entry just returned.
func (de *dieEntries) skipChildren() error { return de.sc.skipChildren(de.last) }
