package dwarf

import (
	"debug/dwarf"
	"github.com/binscope/binscope/internal/par"
	"runtime"
	"sync"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// LoadNamed reads the types called names (qualified names, as gopahole -C
// takes them) and what they refer to, without converting the rest of the
// file. It first reads .debug_info unit after unit from its start
// (inflating a compressed section only that far), scanning each unit's top
// level, and stops at the first unit that defines each name (namedPrefix).
// Where that cannot answer (a name form the scan does not read, a type
// referring beyond the units read), a scan of every unit's top-level
// entries (skipping their children, on every core) finds those units, and
// only they are indexed. The Spec holds the types found under those names.
// When a name is in no unit's top level exactly (a short name, a generic
// type's name, a nested type, a misspelling) or its unit is C++ (whose
// declarations resolve to definitions in other units), it reads every
// type, as Load does, so lookups and suggestions see the whole file.
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
	if spec, ok := namedPrefix(ef, df, names, opts); ok {
		closeFiles(ef, df)
		return spec, nil
	}
	f, err := newFileFrom(ef, df, opts)
	if err != nil {
		closeFiles(ef, df)
		return nil, err
	}
	defer f.Close()
	spec, ok, err := f.typesNamed(names)
	if err != nil || ok {
		return spec, err
	}
	return f.Types()
}

// unitSpan is a compile unit's extent in .debug_info.
type unitSpan struct {
	entry *dwarf.Entry
	end   dwarf.Offset // the next unit's offset, or 0 for the last
}

// typesNamed is LoadNamed's fast path; ok is false when it cannot answer.
func (f *File) typesNamed(names []string) (spec *types.Spec, ok bool, err error) {
	units, err := f.unitEntries()
	if err != nil || len(units) == 0 {
		return nil, false, err
	}
	found := f.scanUnits(units, names)
	for _, u := range found {
		if u < 0 {
			return nil, false, nil
		}
	}
	return f.namedSpec(units, found, names)
}

// namedSpec indexes the units found define the names (found[i], the index
// in units of the first unit defining names[i]) and converts the types of
// those names; ok is false when a unit is C++.
func (f *File) namedSpec(units []unitSpan, found []int, names []string) (spec *types.Spec, ok bool, err error) {
	ix := &index{}
	for _, u := range units {
		lang := langOf(u.entry, str(u.entry, dwarf.AttrProducer))
		ix.units = append(ix.units, unit{name: str(u.entry, dwarf.AttrName), producer: str(u.entry, dwarf.AttrProducer), lang: lang, entry: u.entry})
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
	s := &types.Spec{Path: f.Path, Format: "dwarf", Arch: f.ELF.Arch(), PointerSize: c.ptr}
	s.Lang, s.Producer = mainLang(ix.units)
	added := map[types.Type]bool{}
	for _, n := range ix.named {
		switch n.tag {
		case dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagClassType, dwarf.TagEnumerationType, dwarf.TagTypedef:
		default:
			continue
		}
		e, err := n.entry()
		if err != nil {
			return nil, false, err
		}
		if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); decl {
			continue
		}
		if q := n.scope + str(e, dwarf.AttrName); !contains(names, q) {
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
	r := f.Data.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, f.infoError(0, err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagPartialUnit {
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

// scanUnits returns, for each name, the index of the first unit whose top
// level (namespaces included) defines a type of exactly that qualified
// name, or -1 (a short or generic name may match in several units: the
// slow path decides). The units
// are shared out among the cores.
func (f *File) scanUnits(units []unitSpan, names []string) []int {
	found := make([]int, len(names))
	for i := range found {
		found[i] = -1
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var pp par.Panic
	next := 0
	claim := func() int {
		mu.Lock()
		defer mu.Unlock()
		done := true // every name found in a unit before any left to scan
		for _, u := range found {
			done = done && u >= 0 && u < next
		}
		if done || next >= len(units) {
			return -1
		}
		next++
		return next - 1
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer pp.Catch()
			r := f.Data.Reader()
			for u := claim(); u >= 0; u = claim() {
				hits := scanUnit(r, units[u], names)
				mu.Lock()
				for i, hit := range hits {
					if hit && (found[i] < 0 || u < found[i]) {
						found[i] = u
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	pp.Raise()
	return found
}

// scanUnit reports which names a unit's top level defines.
func scanUnit(r *dwarf.Reader, u unitSpan, names []string) []bool {
	hits := make([]bool, len(names))
	r.Seek(u.entry.Offset)
	if _, err := r.Next(); err != nil || !u.entry.Children {
		return hits
	}
	var scopes []string
	scope := ""
	for {
		e, err := r.Next()
		if err != nil || e == nil || (u.end != 0 && e.Offset >= u.end && e.Tag != 0) {
			return hits
		}
		if e.Tag == 0 {
			if len(scopes) == 0 {
				return hits
			}
			scope, scopes = scopes[len(scopes)-1], scopes[:len(scopes)-1]
			continue
		}
		if e.Tag == dwarf.TagNamespace || e.Tag == dwarf.TagModule {
			if e.Children {
				scopes = append(scopes, scope)
				name := str(e, dwarf.AttrName)
				if name == "" {
					name = "(anonymous namespace)"
				}
				scope += name + "::"
			}
			continue
		}
		if isTypeTag(e.Tag) {
			if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); !decl {
				if name := str(e, dwarf.AttrName); name != "" {
					q := scope + name
					for i, want := range names {
						hits[i] = hits[i] || q == want
					}
				}
			}
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

// indexUnit indexes unit u's type entries into ix.
func (f *File) indexUnit(ix *index, u int, span unitSpan) error {
	r := f.Data.Reader()
	r.Seek(span.entry.Offset)
	er := &entryReader{f: f, r: r, budget: f.infoBytes() + 1}
	b := &indexer{f: f, ix: ix, unit: int32(u)}
	for {
		e, err := er.next()
		if err != nil {
			return err
		}
		if e == nil || (span.end != 0 && e.Offset >= span.end && e.Tag != 0) {
			return nil
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			if e.Offset != span.entry.Offset {
				return nil
			}
			// indexer.add appends units; this one is listed already.
			b.stack = b.stack[:0]
			b.cur = frame{lang: ix.units[u].lang}
			if e.Children {
				b.stack = append(b.stack, frame{})
			}
			continue
		}
		skip, err := b.add(e, false)
		if err != nil {
			return err
		}
		if skip && e.Children {
			r.SkipChildren()
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
