package dwarf

import (
	"strings"

	"github.com/binscope/binscope/types"
)

// An outline is a pass over the whole of .debug_info that keeps no node:
// only what a saved index (savedIndex) holds, the units each listed type
// name is in and the tag and size of each C++ class's first definition.
// A cold lookup by name (gopahole -C) makes one, then indexes only the
// units it names, as a warm lookup does from the index cache, which it
// writes: the nodes of every type of a file such as ceph-osd's (tens of
// millions) are never made.
type outline struct {
	// names are the units (their indexes, increasing) each listed type
	// name is in.
	names map[nameKey][]int32
	// shapes are the tag and size of the definitions recorded in
	// index.defs.
	shapes map[Offset]savedDef
	// bad: an attribute the scan could not read; the outline cannot
	// answer.
	bad bool
}

// nameKey is a listed type's qualified name: its scope and its name,
// the latter pointing into the string section.
type nameKey struct{ scope, name string }

// outlineName records that the listed type n (e, its DIE) is in the unit
// being indexed.
func (b *indexer) outlineName(n *node, e *Entry, scratch bool) {
	if !listedTag(e.Tag) || b.ix.out.names == nil {
		return
	}
	name := e.Name()
	if name == "" && scratch {
		// A type without children comes without its name (typeWalk).
		var ok bool
		if name, ok = b.r.sc.name(b.r.last, b.r.strs); !ok {
			b.ix.out.bad = true
			return
		}
	}
	o := b.ix.out
	k := nameKey{n.scope, name}
	if us := o.names[k]; len(us) == 0 || us[len(us)-1] != b.unit {
		o.names[k] = append(us, b.unit)
	}
}

// outlineShape records the tag and DW_AT_byte_size of e, a class's first
// definition.
func (b *indexer) outlineShape(e *Entry, scratch bool) {
	d := savedDef{off: e.Offset, tag: e.Tag, size: e.Val(AttrByteSize)}
	if scratch {
		var ok bool
		if d.size, ok = b.r.f.attr(b.r.sc, b.r.last, AttrByteSize, b.r.strs); !ok {
			b.ix.out.bad = true
			return
		}
	}
	if size, ok := d.size.(int64); !ok || size < 0 {
		d.size = nil // as the "types" entry keeps it
	}
	b.ix.out.shapes[e.Offset] = d
}

// attr reads the attribute a of d, a DIE s read: nil when d has none; ok
// is false for a form value does not read.
func (f *File) attr(s *scan, d die, a Attr, ss *strSections) (v any, ok bool) {
	pos := d.attrs
	var err error
	for _, sp := range d.decl.specs {
		if sp.attr == a {
			v, _, ok = f.value(s, pos, sp, ss)
			return v, ok
		}
		if pos, err = s.skip(pos, sp); err != nil {
			return nil, false
		}
	}
	return nil, true
}

// outline makes the file's saved index in one pass (see outline), with
// the units of the names when names is set; ok is false when the pass
// could not read what it needs.
func (f *File) outline(names bool) (si *savedIndex, out *index, ok bool, err error) {
	ix, err := f.indexAll(true, names)
	if err != nil || ix.out.bad {
		return nil, nil, false, err
	}
	si = &savedIndex{nunits: len(ix.units), units: map[string][]int{}, defs: make(map[classKey]savedDef, len(ix.defs))}
	for k, off := range ix.defs {
		d, ok := ix.out.shapes[off]
		if !ok {
			return nil, nil, false, nil
		}
		si.defs[k] = d
	}
	return si, ix, true, nil
}

// outlineUnits gives si the units of the names asked, from the outline
// ix; false when a name is listed nowhere exactly or is first listed in a
// unit that is not C++ (the lookups savedSpec leaves to others).
func outlineUnits(si *savedIndex, ix *index, names []string) bool {
	byLen := map[int][]string{}
	for _, q := range names {
		byLen[len(q)] = append(byLen[len(q)], q)
	}
	for k, us := range ix.out.names {
		for _, q := range byLen[len(k.scope)+len(k.name)] {
			if strings.HasPrefix(q, k.scope) && strings.HasSuffix(q, k.name) {
				for _, u := range us {
					si.units[q] = append(si.units[q], int(u))
				}
			}
		}
	}
	for _, n := range names {
		us := si.units[n]
		if len(us) == 0 || ix.units[us[0]].lang != types.LangCPlusPlus {
			return false
		}
	}
	return true
}

// outlined is LoadNamed's cold lookup of C++ names: an outline of the
// whole file, from which the index cache's entries are written, then
// the names' types converted from the units it names (savedSpec), as
// typesExact converts them from the whole index. ok is false when the
// outline cannot answer (see outlineUnits).
func (f *File) outlined(names []string) (spec *types.Spec, ok bool, err error) {
	if f.alt != nil || f.altMissing != "" {
		return nil, false, nil // the saved index has no alternate file
	}
	si, ix, ok, err := f.outline(true)
	if err != nil || !ok {
		return nil, false, err
	}
	if save := f.startSave(); save != nil {
		// The "types" entry is made while the names' types convert.
		f.writing.Go(func() { save.writeOutline(si, ix) })
	}
	if !outlineUnits(si, ix, names) {
		return nil, false, nil
	}
	return f.savedSpec(si, names)
}
