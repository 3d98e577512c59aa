package dwarf

// index indexes the file's types (see indexWith) in one pass over
// .debug_info.
func (f *File) index() (*index, error) { return f.indexAll(false, false) }

// indexAll is index, or with outlined an outline of the file (see
// File.outline; with names, the units of each name).
func (f *File) indexAll(outlined, names bool) (*index, error) {
	return f.buildIndex(f.dieEntries(typeWalk), outlined, names)
}

// joinIndex appends b, the index of the units after a's, to a.
func joinIndex(a, b *index) *index {
	base := int32(len(a.units))
	b.nodes.each(func(_ Offset, n *node) { n.unit += base })
	a.units = append(a.units, b.units...)
	for _, l := range b.lazy {
		l.ix = a
	}
	a.lazy = append(a.lazy, b.lazy...)
	a.named = append(a.named, b.named...)
	a.lost.merge(b.lost)
	a.spans = append(a.spans, b.spans...)
	for k, off := range b.defs { // b's DIEs come after a's: a's first definitions stay
		if _, dup := a.defs[k]; !dup {
			if a.defs == nil {
				a.defs = map[classKey]Offset{}
			}
			a.defs[k] = off
		}
	}
	if a.out != nil {
		a.out.join(b.out, base)
	}
	a.nodes.offs = append(a.nodes.offs, b.nodes.offs...)
	a.nodes.list = append(a.nodes.list, b.nodes.list...)
	for off, n := range b.nodes.extra {
		if a.nodes.extra == nil {
			a.nodes.extra = map[Offset]*node{}
		}
		a.nodes.extra[off] = n
	}
	return a
}
