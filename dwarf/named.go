package dwarf

import (
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// LoadNamed reads the types called names (qualified names, as gopahole -C
// takes them) and what they refer to, without converting the rest of the
// file. It reads .debug_info unit after unit from its start (inflating a
// compressed section only that far), scanning each unit's top level, and
// stops at the first unit that defines each name (namedPrefix); the Spec
// holds the types found under those names. When that cannot answer (a
// name in no unit's top level exactly: a short name, a generic type's
// name, a nested type, a misspelling; a C++ unit, whose declarations
// resolve to definitions in other units; a type referring beyond the
// units read; a relocatable file) it outlines the whole file (outlined:
// where each name is listed, where each class is first defined, no node
// kept) and converts the types Load would list under those names from
// the units that says, which the index cache keeps for the next lookup
// (savedNamed); where the outline cannot answer, it indexes the whole
// file and converts those types from it (typesExact);
// for a name no type has exactly, it reads every type, as Load does, so
// lookups and suggestions see the whole file.
func LoadNamed(path string, names []string, opts *Options) (*types.Spec, error) {
	ef, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	df, err := debugFile(ef)
	if err != nil {
		ef.Close()
		return nil, err
	}
	if spec, ok := savedNamed(ef, df, names, opts); ok {
		return spec, nil
	}
	// The compressed sections from the index cache, or inflated into
	// it, as the lookup from the cache wants them next time: ahead, on
	// another core, while namedPrefix reads their start, once it can pay
	// (aheadAtOnce: a large .debug_info, or a name not in its start).
	var o Options
	if opts != nil {
		o = *opts
	}
	o.SavedSections, o.sectionsAhead = true, true
	f, save := startFile(ef, df, &o)
	if spec, ok := namedPrefix(ef, df, names, opts, f.prefixAhead); ok {
		f.dropStart(save)
		closeFiles(ef, df)
		return spec, nil
	}
	if err := f.finishOpen(save); err != nil {
		closeFiles(ef, df)
		return nil, err
	}
	defer f.Close()
	if spec, ok, err := f.outlined(names); err != nil || ok {
		return spec, err
	}
	if spec, ok, err := f.typesExact(names); err != nil || ok {
		return spec, err
	}
	return f.Types()
}

// unitSpan is a compile unit's extent in .debug_info.
type unitSpan struct {
	entry *Entry
	end   Offset // the next unit's offset, or 0 for the last
}

// namedSpec indexes the units found define the names (found[i], the index
// in units of the first unit defining names[i]) and converts the types of
// those names; ok is false when a unit is C++.
func (f *File) namedSpec(units []unitSpan, found []int, names []string) (spec *types.Spec, ok bool, err error) {
	ix := &index{}
	for _, u := range units {
		lang := langOf(u.entry, str(u.entry, AttrProducer))
		ix.units = append(ix.units, unit{name: u.entry.Name(), producer: str(u.entry, AttrProducer), lang: lang, entry: u.entry})
	}
	indexed := map[int]bool{}
	for _, u := range found {
		if ix.units[u].lang == types.LangCPlusPlus {
			return nil, false, nil
		}
		if indexed[u] {
			continue
		}
		indexed[u] = true
		if err := f.indexUnit(ix, u, units[u]); err != nil {
			return nil, false, err
		}
	}
	c := newConverter(f, ix, ix.nodes.size()/2)
	s := c.newSpec()
	added := map[types.Type]bool{}
	for _, n := range ix.named {
		switch n.tag {
		case TagStructType, TagUnionType, TagClassType, TagEnumerationType, TagTypedef:
		default:
			continue
		}
		e, err := n.entry()
		if err != nil {
			return nil, false, err
		}
		if e.Declaration() {
			continue
		}
		if q := n.scope + e.Name(); !contains(names, q) {
			continue
		}
		t, err := c.root(n.off)
		if err != nil {
			return nil, false, err
		}
		if added[t] {
			continue
		}
		added[t] = true
		if td, ok := t.(*types.Typedef); ok && td.Target != nil && td.Target.TypeName() == td.Name {
			continue
		}
		s.Add(t)
	}
	return s, true, nil
}

// unitEntries lists the compile units, reading only their first entries.
func (f *File) unitEntries() ([]unitSpan, error) {
	var units []unitSpan
	r := f.dieReader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, f.infoError(noOffset, err)
		}
		if e == nil {
			break
		}
		if e.Tag != TagCompileUnit && e.Tag != TagPartialUnit {
			return nil, nil // a type unit or something unexpected: take the slow path
		}
		if n := len(units); n > 0 {
			units[n-1].end = e.Offset
		}
		units = append(units, unitSpan{entry: e})
		r.SkipChildren()
	}
	return units, nil
}

// indexUnit indexes unit u's type entries into ix, over a scan of its
// DIEs (each decoded when a conversion first reads it).
func (f *File) indexUnit(ix *index, u int, span unitSpan) error {
	r := f.dieEntries(typeWalk)
	if !r.sc.seekUnit(int(span.entry.Offset)) {
		return f.decodeError(span.entry.Offset, "no unit header before the unit's entry")
	}
	if span.end != 0 {
		r.sc.limit = int(span.end)
	}
	lazy := &lazyEntries{f: f, ix: ix}
	ix.lazy = append(ix.lazy, lazy)
	b := &indexer{f: f, ix: ix, unit: int32(u), lazy: lazy, r: r}
	for first := true; ; first = false {
		e, err := r.next(false)
		if err != nil {
			return f.infoError(Offset(r.sc.at), err)
		}
		if e == nil {
			return nil
		}
		if e.Tag == TagCompileUnit || e.Tag == TagPartialUnit {
			if !first {
				return nil
			}
			// indexer.add appends units; this one is listed already.
			ix.units[u].hdr = r.sc.u
			ix.nodes.begin(Offset(r.sc.u.start), Offset(r.sc.u.end))
			b.stack = b.stack[:0]
			b.cur = frame{lang: ix.units[u].lang}
			if e.Children {
				b.stack = append(b.stack, frame{})
			}
			continue
		}
		if err := b.addScanned(e); err != nil {
			return err
		}
		if b.late != nil {
			b.late.end, b.late = Offset(r.sc.pos), nil
		}
	}
}

func contains(names []string, q string) bool {
	for _, w := range names {
		if w == q {
			return true
		}
	}
	return false
}
