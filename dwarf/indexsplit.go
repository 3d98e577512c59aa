package dwarf

import (
	"debug/dwarf"
	"runtime"
	"sync"
)

// minSplit is the size of .debug_info below which the index is built on
// one core: starting a second costs more than it saves.
const minSplit = 1 << 20

// index indexes the file's types (see indexWith): on two cores, the
// units of the first half of .debug_info on one, those of the second on
// the other, the halves then joined in DIE order, as one pass would have
// built it.
func (f *File) index() (*index, error) { return f.indexAll(false, false) }

// indexAll is index, or with outlined an outline of the file (see
// File.outline; with names, the units of each name).
func (f *File) indexAll(outlined, names bool) (*index, error) {
	sc := f.newScan()
	if runtime.GOMAXPROCS(0) < 2 || len(sc.info) < minSplit {
		return f.buildIndex(f.dieEntries(typeWalk), outlined, names)
	}
	split := 0 // the first unit starting in the second half
	for sc.pos < len(sc.info) && sc.pos < len(sc.info)/2 {
		if _, err := sc.header(); err != nil {
			// A unit header lost: the pass reports it.
			return f.buildIndex(f.dieEntries(typeWalk), outlined, names)
		}
		sc.skipUnit()
		split = sc.pos
	}
	if split == 0 || split >= len(sc.info) {
		return f.buildIndex(f.dieEntries(typeWalk), outlined, names)
	}
	first, second := f.dieEntries(typeWalk), f.dieEntries(typeWalk)
	first.sc.limit = split
	second.sc.pos = split
	var ix [2]*index
	var errs [2]error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ix[1], errs[1] = f.buildIndex(second, outlined, names)
	}()
	ix[0], errs[0] = f.buildIndex(first, outlined, names)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return joinIndex(ix[0], ix[1]), nil
}

// joinIndex appends b, the index of the units after a's, to a.
func joinIndex(a, b *index) *index {
	base := int32(len(a.units))
	b.nodes.each(func(_ dwarf.Offset, n *node) { n.unit += base })
	a.units = append(a.units, b.units...)
	for _, l := range b.lazy {
		l.ix = a
	}
	a.lazy = append(a.lazy, b.lazy...)
	a.named = append(a.named, b.named...)
	a.lost.merge(b.lost)
	for k, off := range b.defs { // b's DIEs come after a's: a's first definitions stay
		if _, dup := a.defs[k]; !dup {
			if a.defs == nil {
				a.defs = map[classKey]dwarf.Offset{}
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
			a.nodes.extra = map[dwarf.Offset]*node{}
		}
		a.nodes.extra[off] = n
	}
	return a
}
