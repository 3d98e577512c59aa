package dwarf

import (
	"fmt"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/types"
)

// VarsAt returns the parameters and variables in scope at pc, with where
// each lives there: those of the out-of-line function containing pc, of
// the lexical blocks containing pc, and of every function inlined at pc
// (innermost last). A variable whose location list does not cover pc has
// an empty Loc (optimised out there). A DIE of the unit that does not
// read loses its span of the unit as the other walks do (lost.go): the
// variables of a child of the unit DIE (or of a namespace) the span
// holds are left out, the others kept, and Damage says what was lost.
func (f *File) VarsAt(pc uint64) (vars []types.Var, err error) {
	r := f.dieReader()
	cu, err := r.SeekPC(pc)
	if err != nil {
		return nil, fmt.Errorf("%s: section .debug_info: no compile unit covers %#x", f.Path, pc)
	}
	c, err := f.typeConverter()
	if err != nil {
		return nil, err
	}
	vw := &varsWalker{f: f, c: c, u: f.newUnitCtx(cu), pc: pc, lang: langOf(cu, str(cu, AttrProducer))}
	var w varsWalk
	var lost error // the first DIE of the unit the walk could not read
	for n := 0; ; n++ {
		e, err := f.unitNext(r, n, len(w.frames))
		if err != nil && r.err != nil {
			var on bool
			if on, lost = w.lose(vw, r); on {
				continue
			}
			break
		}
		if err != nil {
			return nil, err
		}
		if e == nil || !w.step(vw, r, e) {
			break
		}
	}
	if lost != nil && !vw.inFunc {
		return nil, lost // the function holding pc was in what was lost
	}
	if vw.entry {
		a, _ := arch.ForMachine(f.ELF.Machine)
		for i := range vw.vars {
			vw.vars[i].Loc = atEntry(vw.vars[i].Loc, a)
		}
	}
	return vw.vars, nil
}

// varsWalk is where VarsAt's walk is in its unit: the DIEs it entered, the
// inline expansion it is in, and the last child of the unit DIE or of a
// namespace it read (top), with how many frames and variables it had
// then.
type varsWalk struct {
	frames []varsFrame
	inline string
	top    Offset
	depth  int // len(frames) at top
	vars   int // len(vw.vars) at top
	// funcTop is top when the walk entered the subprogram holding pc.
	funcTop Offset
}

// varsFrame is a DIE the walk entered: the inline expansion the walk was
// in before, and whether the DIE is a namespace.
type varsFrame struct {
	outer     string
	namespace bool
}

// step reads e, the next DIE of the unit; false at the unit's end.
func (w *varsWalk) step(vw *varsWalker, r *dieReader, e *Entry) bool {
	if e.Tag == 0 {
		if len(w.frames) == 0 {
			return false
		}
		w.inline, w.frames = w.frames[len(w.frames)-1].outer, w.frames[:len(w.frames)-1]
		return true
	}
	if w.inNamespaces() {
		w.top, w.depth, w.vars = e.Offset, len(w.frames), len(vw.vars)
	}
	outer := w.inline
	enter := false
	switch e.Tag {
	case TagSubprogram, TagLexDwarfBlock, TagInlinedSubroutine:
		enter = vw.enter(e, &w.inline)
		if enter && e.Tag == TagSubprogram {
			w.funcTop = w.top
		}
	case TagNamespace, TagModule:
		enter = true
	case TagFormalParameter, TagVariable:
		if len(w.frames) > 0 { // not a global at unit level
			vw.vars = append(vw.vars, vw.variable(e, w.inline))
		}
	}
	switch {
	case e.Children && enter:
		w.frames = append(w.frames, varsFrame{outer: outer, namespace: e.Tag == TagNamespace || e.Tag == TagModule})
	case e.Children:
		r.SkipChildren()
		w.inline = outer
	default:
		w.inline = outer
	}
	return true
}

// inNamespaces reports whether every DIE the walk entered is a namespace:
// the next DIE is a child of the unit DIE or of a namespace.
func (w *varsWalk) inNamespaces() bool {
	for _, fr := range w.frames {
		if !fr.namespace {
			return false
		}
	}
	return true
}

// lose moves r past the span of its unit that holds the DIE it could not
// read, recording the damage, and returns the error naming it; the
// variables read since top are dropped when the span starts there. on is
// false when the walk cannot go on in the unit.
func (w *varsWalk) lose(vw *varsWalker, r *dieReader) (on bool, lost error) {
	f := vw.f
	sp, lost, ok := f.lose(r.sc, w.top)
	if !ok {
		return false, lost
	}
	f.damaged(sp.bad, lost)
	if sp.from != w.top {
		return false, lost // lost to the unit's end
	}
	vw.vars = vw.vars[:w.vars]
	if w.funcTop == w.top {
		vw.inFunc = false // the function holding pc is in the span
	}
	if sp.to >= Offset(r.sc.u.end) {
		return false, lost
	}
	w.frames, w.inline = w.frames[:w.depth], "" // top is in no expansion
	r.Seek(sp.to)                               // on at top's sibling
	return r.err == nil, lost
}

// varsWalker is one walk of VarsAt over the DIEs of the unit holding pc.
type varsWalker struct {
	f         *File
	c         *converter
	u         *unitCtx
	pc        uint64
	lang      types.Lang
	frameBase []byte
	entry     bool // pc is the function's first instruction
	inFunc    bool // the walk entered the subprogram that holds pc
	vars      []types.Var
	// declTags are the decl tags of the static variable staticVars
	// passes its fn.
	declTags []string
}

// enter reports whether pc lies in e, a subprogram, a lexical block or an
// inline expansion, whose children are then in scope; for an expansion it
// sets inline to the name of its function.
func (vw *varsWalker) enter(e *Entry, inline *string) bool {
	f := vw.f
	enter := vw.covers(e)
	if !enter && e.Tag == TagInlinedSubroutine {
		// An expansion's entry may lie outside its ranges (GCC
		// gives some an empty first range).
		enter = f.entryPCOf(e) == vw.pc
	}
	if enter && e.Tag == TagSubprogram {
		vw.inFunc = true
		if fb, ok := readLocAttr(e, AttrFrameBase); ok && !fb.list {
			vw.frameBase = fb.expr
		}
		if rs, err := f.ranges(e); err == nil && len(rs) > 0 {
			vw.entry = lowest(rs) == vw.pc
		}
	}
	if enter && e.Tag == TagInlinedSubroutine {
		*inline = vw.inlinedName(e)
	}
	return enter
}

// variable is the parameter or variable e, with its location at pc.
func (vw *varsWalker) variable(e *Entry, inline string) types.Var {
	f := vw.f
	name, t := vw.nameType(e)
	v := types.Var{Name: name, Type: t, Param: e.Tag == TagFormalParameter, Inline: inline, DeclLine: vw.declLine(e)}
	if la, ok := readLocAttr(e, AttrLocation); ok {
		if expr, ok := f.locAt(vw.u, la, vw.pc); ok {
			v.Loc = f.decodeLoc(vw.u, expr, vw.frameBase)
			v.Loc.Whole = !la.list
			v.Loc.From, v.Loc.To = f.locSpan(vw.u, la, vw.pc)
		}
	} else if cv := e.Val(AttrConstValue); cv != nil {
		if x, ok := cv.(int64); ok {
			v.Loc = types.Loc{Pieces: []types.Piece{{Kind: types.LocConst, Offset: x}}, Whole: true}
		}
	}
	return v
}

// covers reports whether one of e's ranges holds pc.
func (vw *varsWalker) covers(e *Entry) bool {
	rs, err := vw.f.ranges(e)
	if err != nil {
		return false
	}
	for _, rg := range rs {
		if vw.pc >= rg[0] && vw.pc < rg[1] {
			return true
		}
	}
	return false
}

// entryAt is the DIE at off, nil when it cannot be read.
func (vw *varsWalker) entryAt(off Offset) *Entry {
	rr := vw.f.dieReader()
	rr.Seek(off)
	e, err := rr.Next()
	if err != nil {
		return nil
	}
	return e
}

// nameType follows abstract_origin for a name and a type.
func (vw *varsWalker) nameType(e *Entry) (string, types.Type) {
	name := e.Name()
	toff, _ := e.Type()
	for i := 0; i < 4 && (name == "" || toff == 0); i++ {
		o, ok := e.Ref(AttrAbstractOrigin)
		if !ok {
			break
		}
		if e = vw.entryAt(o); e == nil {
			break
		}
		if name == "" {
			name = e.Name()
		}
		if toff == 0 {
			toff, _ = e.Type()
		}
	}
	var t types.Type = &types.Base{Name: "?"}
	if toff != 0 {
		if tt, err := vw.c.root(toff); err == nil {
			t = tt
		}
	}
	return name, t
}

// declLine is e's DW_AT_decl_line, or its abstract origin's.
func (vw *varsWalker) declLine(e *Entry) int {
	for i := 0; i < 4 && e != nil; i++ {
		if l, ok := e.DeclLine(); ok {
			return int(l)
		}
		o, ok := e.Ref(AttrAbstractOrigin)
		if !ok {
			break
		}
		e = vw.entryAt(o)
	}
	return 0
}

// inlinedName names an expansion's function as Functions does
// (demangled, qualified), following abstract_origin to its linkage
// name.
func (vw *varsWalker) inlinedName(e *Entry) string {
	fn := &types.Func{Lang: vw.lang}
	for i := 0; i < 4 && e != nil; i++ {
		if fn.Name == "" {
			fn.Name = e.Name()
		}
		if fn.Linkage == "" {
			fn.Linkage = str(e, AttrLinkageName)
		}
		o, ok := e.Ref(AttrAbstractOrigin)
		if !ok {
			o, ok = e.Ref(AttrSpecification)
		}
		if !ok {
			break
		}
		e = vw.entryAt(o)
	}
	return displayName(fn)
}

// entryPC is an inlined_subroutine's DW_AT_entry_pc (an address, or a
// DWARF 5 offset from its lowest address), or 0.
func (f *File) entryPCOf(e *Entry) uint64 {
	switch v := e.Val(AttrEntrypc).(type) {
	case uint64:
		return v
	case int64:
		if rs, err := f.ranges(e); err == nil && len(rs) > 0 {
			return rs[0][0] + uint64(v)
		}
	}
	return 0
}
