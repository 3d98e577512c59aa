package dwarf

import (
	"debug/dwarf"

	"github.com/binscope/binscope/types"
)

// Globals returns the variables every compile unit defines at a static
// address (a location of one DW_OP_addr), at unit level or in a namespace
// (Rust's and C++'s, whose names are then qualified with "::"), in the
// order of the debug info. Corrupt DWARF gives an error naming the file,
// the section and the offset.
func (f *File) Globals() (gs []types.Global, err error) {
	defer f.guard(&err)
	c, err := f.typeConverter()
	if err != nil {
		return nil, err
	}
	r := f.Data.Reader()
	for {
		cu, err := r.Next()
		if err != nil {
			return nil, f.infoError(noOffset, err)
		}
		if cu == nil {
			return gs, nil
		}
		if cu.Tag != dwarf.TagCompileUnit || !cu.Children {
			r.SkipChildren()
			continue
		}
		vw := &varsWalker{f: f, c: c, u: f.newUnitCtx(cu), lang: langOf(cu, str(cu, dwarf.AttrProducer))}
		if gs, err = vw.globals(r, "", gs); err != nil {
			return nil, f.infoError(noOffset, err)
		}
	}
}

// globals appends to gs the variables with a static address among the
// children of the entry r has just returned; r ends past them.
func (vw *varsWalker) globals(r *dwarf.Reader, prefix string, gs []types.Global) ([]types.Global, error) {
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			return gs, err
		}
		switch {
		case e.Tag == dwarf.TagVariable && e.Val(dwarf.AttrLocation) != nil:
			v := vw.variable(e, "")
			if ps := v.Loc.Pieces; v.Name != "" && len(ps) == 1 && ps[0].Kind == types.LocAddr && ps[0].Size == 0 {
				ext, _ := e.Val(dwarf.AttrExternal).(bool)
				gs = append(gs, types.Global{Name: prefix + v.Name, Type: v.Type, Addr: uint64(ps[0].Offset), External: ext})
			}
		case e.Tag == dwarf.TagNamespace && e.Children:
			if gs, err = vw.globals(r, prefix+str(e, dwarf.AttrName)+"::", gs); err != nil {
				return nil, err
			}
			continue
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}
