package dwarf

import (
	"github.com/binscope/binscope/types"
)

// Globals returns the variables every compile unit defines at a static
// address (a location of one DW_OP_addr), at unit level or in a namespace
// (Rust's and C++'s, whose names are then qualified with "::"), in the
// order of the debug info. Corrupt DWARF gives an error naming the file,
// the section and the offset.
func (f *File) Globals() (gs []types.Global, err error) {
	err = f.unitVars(nil, 0, true, func(vw *varsWalker, e *Entry, prefix string) bool {
		v := vw.variable(e, "")
		if ps := v.Loc.Pieces; v.Name != "" && len(ps) == 1 && ps[0].Kind == types.LocAddr && ps[0].Size == 0 {
			ext, _ := e.Flag(AttrExternal)
			gs = append(gs, types.Global{Name: prefix + v.Name, Type: v.Type, Addr: uint64(ps[0].Offset), External: ext, Tags: vw.declTags, Lang: vw.lang})
		}
		return false
	})
	if err != nil {
		return nil, f.infoError(noOffset, err)
	}
	return gs, nil
}

// Global returns the variable named name that a probe at pc can read
// beside VarsAt's: a unit-level variable with a location (C's globals and
// file statics), of the compile unit holding pc first, else of any unit
// (a global defined in another file). Its location is as the file has it
// (DW_OP_addr: a virtual address of the file, relocated by the reader);
// ok is false when no unit defines one.
func (f *File) Global(pc uint64, name string) (v types.Var, ok bool, err error) {
	find := func(vw *varsWalker, e *Entry, _ string) bool {
		if e.Name() == name {
			v = vw.variable(e, "")
			ok = len(v.Loc.Pieces) > 0
		}
		return ok
	}
	r := f.dieReader()
	if cu, err := r.SeekPC(pc); err == nil {
		if err := f.unitVars(r, pc, false, find, cu); ok || err != nil {
			return v, ok, err
		}
	}
	if err = f.unitVars(nil, pc, false, find); !ok {
		v = types.Var{}
	}
	return v, ok, err
}

// unitVars calls fn with each variable with a location that a compile
// unit defines at unit level (and, with deep, in its namespaces, prefix
// then their qualified name), in the order of the debug info, until fn
// returns true: of the units given, which r has just returned (r then
// ends past them), or of every unit with r nil. vw reads the variable in
// its unit, for a probe at pc.
func (f *File) unitVars(r *dieReader, pc uint64, deep bool, fn func(vw *varsWalker, e *Entry, prefix string) bool, units ...*Entry) error {
	c, err := f.typeConverter()
	if err != nil {
		return err
	}
	all := r == nil
	if all {
		r = f.dieReader()
	}
	for i := 0; all || i < len(units); i++ {
		cu := (*Entry)(nil)
		if all {
			if cu, err = r.Next(); err != nil || cu == nil {
				return err
			}
		} else {
			cu = units[i]
		}
		if all && (cu.Tag != TagCompileUnit || !cu.Children) {
			r.SkipChildren()
			continue
		}
		vw := &varsWalker{f: f, c: c, u: f.newUnitCtx(cu), pc: pc, lang: langOf(cu, str(cu, AttrProducer))}
		if stop, err := vw.staticVars(r, "", deep, fn); stop || err != nil {
			return err
		}
	}
	return nil
}

// staticVars calls fn with the variables with a location among the children of
// the entry r has just returned (see unitVars); r ends past them unless
// fn stops the walk.
func (vw *varsWalker) staticVars(r *dieReader, prefix string, deep bool, fn func(vw *varsWalker, e *Entry, prefix string) bool) (stop bool, err error) {
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			return false, err
		}
		switch {
		case e.Tag == TagVariable && e.Has(AttrLocation):
			vw.declTags = nil
			if e.Children {
				if vw.declTags, err = childDeclTags(r); err != nil {
					return false, err
				}
			}
			if fn(vw, e, prefix) {
				return true, nil
			}
			continue
		case deep && e.Tag == TagNamespace && e.Children:
			if stop, err := vw.staticVars(r, prefix+e.Name()+"::", deep, fn); stop || err != nil {
				return stop, err
			}
			continue
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

// childDeclTags are the decl tags among the children of the entry r has
// just returned; r ends past them.
func childDeclTags(r *dieReader) (tags []string, err error) {
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			return tags, err
		}
		if kind, text, ok := annotation(e); ok && kind == annotDeclTag {
			tags = append(tags, text)
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}
