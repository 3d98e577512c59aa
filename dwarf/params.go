package dwarf

import (
	"errors"
	"fmt"
	"slices"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/types"
)

// paramFiller fills Params and Return of functions from the parameter
// entries a walk recorded: names and types from whichever entry of a
// function's chain has them (a concrete out-of-line copy points at its
// abstract instance's parameters), locations from the out-of-line copy at
// its entry address.
type paramFiller struct {
	f     *File
	parts map[*types.Func][]*subprogram
	byOff []offParam // every parameter entry of the walk, by offset
	done  map[*types.Func]bool
	// opaque has fillAll convert C and C++ composites without their
	// members (FuncOptions.SpelledParams).
	opaque bool
	// tags are the walk's decl tags (walked.tags).
	tags map[Offset][]string
}

func newParamFiller(f *File, parts map[*types.Func][]*subprogram, order []*subprogram) *paramFiller {
	n := 0
	for _, s := range order {
		n += len(s.params)
	}
	// order is in DIE order, and so are the parameters of each entry: the
	// array is sorted as made (a map took most of the filler's making).
	byOff := make([]offParam, 0, n)
	for _, s := range order {
		for i := range s.params {
			byOff = append(byOff, offParam{s.params[i].off, &s.params[i]})
		}
	}
	cmp := func(a, b offParam) int { return int(a.off) - int(b.off) }
	if !slices.IsSortedFunc(byOff, cmp) {
		slices.SortFunc(byOff, cmp)
	}
	return &paramFiller{f: f, parts: parts, byOff: byOff, done: map[*types.Func]bool{}}
}

// offParam is a parameter entry and its offset.
type offParam struct {
	off Offset
	p   *param
}

// param is the parameter entry at off, or nil.
func (pf *paramFiller) param(off Offset) *param {
	i, ok := slices.BinarySearchFunc(pf.byOff, off, func(a offParam, off Offset) int { return int(a.off) - int(off) })
	if !ok {
		return nil
	}
	return pf.byOff[i].p
}

// fillAll fills the parameters of every function of the walk not filled
// yet, and keeps only what FillParams needs to know it did.
func (pf *paramFiller) fillAll(fns []*types.Func) error {
	c, err := pf.f.typeConverter()
	if err != nil {
		return err
	}
	if pf.opaque { // not the file's converter, whose types are whole
		c = c.another(len(fns))
		c.opaque = true
	}
	for _, fn := range fns {
		if pf.done[fn] {
			continue
		}
		pf.done[fn] = true
		if err := pf.fillWith(c, fn); err != nil {
			return err
		}
	}
	pf.parts, pf.byOff = nil, nil
	return nil
}

// FillParams fills fn's Params and Return from the entries recorded by the
// walk that returned fn (Functions with FuncOptions.Params and
// DeferParams), whichever walk of the file that was and whenever it ran;
// once per function. It does nothing for a function whose parameters its
// walk filled already, or for code only a symbol names (SymbolOnly). A
// function no walk with FuncOptions.Params returned is an error: its
// parameters were never read.
func (f *File) FillParams(fn *types.Func) (err error) {
	if fn.SymbolOnly {
		return nil
	}
	f.paramsMu.Lock()
	defer f.paramsMu.Unlock()
	for _, pf := range f.fillers {
		if pf.done[fn] {
			return nil
		}
		if _, ok := pf.parts[fn]; ok {
			return pf.fill(fn)
		}
	}
	return fmt.Errorf("%s: parameters of %s: %w: not a function of a walk that read parameters (FuncOptions.Params)", f.Path, fn.Name, types.ErrNotFound)
}

// FillAllParams is FillParams for many functions of one walk: the model of code fills them once it knows which concrete copy of
// each is the entry (a walk takes the first one, which may be a clone such
// as __malloc_info.part.0, with fewer parameters, in another order, at
// another address). A function of a walk whose parameters were filled, or
// of none, is left as it is.
func (f *File) FillAllParams(fns []*types.Func) (err error) {
	f.paramsMu.Lock()
	defer f.paramsMu.Unlock()
	group := map[*paramFiller][]*types.Func{}
	for _, fn := range fns {
		for _, pf := range f.fillers {
			if _, ok := pf.parts[fn]; ok && !pf.done[fn] {
				group[pf] = append(group[pf], fn)
				break
			}
		}
	}
	var errs []error
	for pf, g := range group {
		errs = append(errs, pf.fillAll(g))
	}
	return errors.Join(errs...)
}

func (pf *paramFiller) fill(fn *types.Func) error {
	if pf.done[fn] {
		return nil
	}
	pf.done[fn] = true
	c, err := pf.f.typeConverter()
	if err != nil {
		return err
	}
	return pf.fillWith(c, fn)
}

// fillWith fills fn's parameters, converting their types with c.
func (pf *paramFiller) fillWith(c *converter, fn *types.Func) error {
	f := pf.f
	typeOf := func(off Offset) types.Type {
		if off == 0 {
			return nil
		}
		t, err := c.root(off)
		if err != nil {
			return &types.Base{Name: "?"}
		}
		return t
	}
	a, _ := arch.ForMachine(f.ELF.Machine)
	var concrete, declared *subprogram
	for _, s := range pf.parts[fn] {
		if concrete == nil && s.inst != nil && len(s.params) > 0 && s.inst.Entry == fn.LowPC && fn.LowPC != 0 {
			concrete = s
		}
		// Declared parameters from the entry that names them: a
		// declaration (DW_AT_specification's target) often lists
		// only types, the abstract instance names them.
		if len(s.params) > 0 && (declared == nil || !allNamed(declared) && allNamed(s)) {
			declared = s
		}
		if fn.Return == nil && s.typ != 0 {
			fn.Return = typeOf(s.typ)
		}
	}
	src := concrete
	if src == nil {
		src = declared
	}
	if len(pf.tags) > 0 {
		fn.Tags = pf.declTags(fn, src)
	}
	if src == nil {
		return nil
	}
	fn.Params = append(fn.Params, pf.paramList(src, fn, src == concrete && fn.LowPC != 0, fn.LowPC, typeOf, a)...)
	// Another copy with code (a GCC clone: .isra.N, .constprop.N) gets
	// the parameters its own entry lists, located at its entry.
	for _, s := range pf.parts[fn] {
		if s.inst != nil && s != concrete && s.inst.Entry != 0 && s.inst.Entry != fn.LowPC && len(s.params) > 0 {
			s.inst.Params = pf.paramList(s, fn, true, s.inst.Entry, typeOf, a)
		}
	}
	return nil
}

// paramList is the parameters src lists, with names and types from their
// origins and, when located, their locations at entry (src's code starts
// there).
func (pf *paramFiller) paramList(src *subprogram, fn *types.Func, located bool, entry uint64, typeOf func(Offset) types.Type, a *arch.Arch) []types.Param {
	f := pf.f
	var out []types.Param
	results := map[string]bool{}
	for _, p := range src.params {
		// Follow abstract_origin for the name and the type.
		q := p
		for i := 0; i < 4 && (q.name == "" || q.typ == 0) && q.origin != 0; i++ {
			o := pf.param(q.origin)
			if o == nil {
				break
			}
			if q.name == "" {
				q.name = o.name
			}
			if q.typ == 0 {
				q.typ = o.typ
			}
			q.result = q.result || o.result
			q.origin = o.origin
		}
		if q.result && fn.Lang == types.LangGo && q.name != "_" {
			// Go 1.26 writes each result's entry twice (two ~r0 of
			// type error for a func returning error): a Go result
			// name is unique, so a repeated one is the same result.
			if results[q.name] {
				continue
			}
			results[q.name] = true
		}
		tp := types.Param{Name: q.name, Type: typeOf(q.typ), Result: q.result}
		if located && p.konst != nil && !q.result {
			tp.PC = entry
			tp.Loc = types.Loc{Pieces: []types.Piece{{Kind: types.LocConst, Offset: *p.konst}}}
		}
		if located && p.hasLoc && !q.result {
			tp.PC = entry
			if expr, ok := f.locAt(src.unit, p.loc, entry); ok {
				loc := f.decodeLoc(src.unit, expr, src.frameBase)
				if !p.loc.list && inFrame(loc, a) {
					// A frame slot the prologue fills: it holds from
					// the prologue's end on, where the frame is set up.
					if entry == fn.LowPC {
						tp.PC = f.PrologueEnd(fn)
					}
				} else {
					loc = atEntry(loc, a)
				}
				tp.Loc = loc
			}
		}
		out = append(out, tp)
	}
	return out
}

// allNamed reports whether every parameter of s has a name of its own.
func allNamed(s *subprogram) bool {
	for _, p := range s.params {
		if p.name == "" {
			return false
		}
	}
	return true
}

// atEntry rewrites frame-relative pieces as stack-pointer-relative ones,
// which is what the canonical frame address is at a function's first
// instruction (before the prologue moves the stack pointer).
func atEntry(l types.Loc, a *arch.Arch) types.Loc {
	if a == nil {
		return l
	}
	for i, p := range l.Pieces {
		if p.Kind == types.LocCFA {
			l.Pieces[i] = types.Piece{Kind: types.LocMem, Reg: a.SP, Offset: p.Offset + a.EntryCFA, Size: p.Size}
		}
	}
	return l
}

// inFrame reports whether l holds only once the prologue has run: a slot
// below the canonical frame address, or one relative to a register the
// prologue sets or moves (a frame pointer; the stack pointer as LLVM's
// frame base). Unoptimised code describes parameters so, and fills the
// slots in its prologue; incoming stack arguments relative to the CFA
// hold from the entry.
func inFrame(l types.Loc, a *arch.Arch) bool {
	for _, p := range l.Pieces {
		switch {
		case p.Kind == types.LocCFA && p.Offset < 0:
			return true
		case p.Kind == types.LocMem && a != nil:
			// Relative to a frame pointer, or to the stack pointer
			// as a frame base (LLVM without a frame pointer: stack
			// arguments at fbreg +48 after five pushes): either is
			// set up by the prologue.
			return true
		}
	}
	return false
}

// declTags are the decl tags of fn, on any of its entries, and of the
// parameters of src, the entry its Params come from, on the parameter's
// entry or its origins; nil when there are none.
func (pf *paramFiller) declTags(fn *types.Func, src *subprogram) *types.FuncTags {
	var t types.FuncTags
	for _, s := range pf.parts[fn] {
		for _, tag := range pf.tags[s.off] {
			if !slices.Contains(t.Func, tag) {
				t.Func = append(t.Func, tag)
			}
		}
	}
	for i, p := range srcParams(src) {
		var tags []string
		for q, n := &p, 0; q != nil && n < 4; q, n = pf.param(q.origin), n+1 {
			if tags = pf.tags[q.off]; len(tags) > 0 || q.origin == 0 {
				break
			}
		}
		if len(tags) > 0 {
			t.Params = append(t.Params, make([][]string, i+1-len(t.Params))...)
			t.Params[i] = tags
		}
	}
	if t.Func == nil && t.Params == nil {
		return nil
	}
	return &t
}

func srcParams(s *subprogram) []param {
	if s == nil {
		return nil
	}
	return s.params
}
