package dwarf

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

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
	cores int // the cores fillAll used
	// opaque has fillAll convert C and C++ composites without their
	// members (FuncOptions.SpelledParams).
	opaque bool
	// tags are the walk's decl tags (walked.tags).
	tags map[dwarf.Offset][]string
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
	off dwarf.Offset
	p   *param
}

// param is the parameter entry at off, or nil.
func (pf *paramFiller) param(off dwarf.Offset) *param {
	i, ok := slices.BinarySearchFunc(pf.byOff, off, func(a offParam, off dwarf.Offset) int { return int(a.off) - int(off) })
	if !ok {
		return nil
	}
	return pf.byOff[i].p
}

// fillAll fills the parameters of every function of the walk, and keeps
// only what FillParams needs to know it did. Functions are filled on
// every core, up to one core per compile unit they come from, each core a
// contiguous share of fns (in address order, so mostly whole units, whose
// types are the unit's own) with a converter of its own: a type two
// shares use is converted in both. When that leaves a core free, the
// shares are offered on work (see fillWork.help): a core done with other
// work takes functions from the back of the largest.
func (pf *paramFiller) fillAll(fns []*types.Func, work chan<- *fillWork) error {
	c, err := pf.f.typeConverter()
	if err != nil {
		return err
	}
	if pf.opaque { // not the file's converter, whose types are whole
		c = c.another(len(fns))
		c.opaque = true
	}
	var todo []*types.Func
	for _, fn := range fns {
		if !pf.done[fn] {
			pf.done[fn] = true
			todo = append(todo, fn)
		}
	}
	workers := max(1, min(fillCores(), len(todo)/minParallelFill, pf.units(todo)))
	pf.cores = workers
	fw := &fillWork{pf: pf, conv: c, shares: make([]fillShare, workers)}
	for w := range fw.shares {
		sh := todo[len(todo)*w/workers : len(todo)*(w+1)/workers]
		fw.shares[w] = fillShare{fns: sh, hi: len(sh)}
	}
	if work != nil && workers < fillCores() && len(todo) >= 2*minParallelFill {
		work <- fw
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wc := c
		if w > 0 {
			wc = c.another(len(fw.shares[w].fns))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = fw.fill(wc, w, false)
		}()
	}
	wg.Wait()
	fw.helpers.Wait() // a helper reads parts and byOff
	pf.parts, pf.byOff = nil, nil
	return errors.Join(append(errs, fw.err)...)
}

// fillWork is what fillAll's cores have left to fill: each core's share
// of the functions, which it takes from the front and a helper from the
// back, fillChunk at a time.
type fillWork struct {
	pf      *paramFiller
	conv    *converter // the first share's, what the others are alike to
	mu      sync.Mutex
	shares  []fillShare
	helpers sync.WaitGroup
	helped  int   // functions helpers filled
	err     error // a helper's
}

// fillShare is one core's share: fns[lo:hi] are left.
type fillShare struct {
	fns    []*types.Func
	lo, hi int
}

// fillChunk is how many functions one take hands out: tens of
// microseconds of work, enough that taking them costs nothing.
const fillChunk = 16

// take hands out the next functions of share w (from its back for a
// helper); none once it is empty.
func (fw *fillWork) take(w int, back bool) []*types.Func {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	sh := &fw.shares[w]
	n := min(fillChunk, sh.hi-sh.lo)
	if back {
		sh.hi -= n
		fw.helped += n
		return sh.fns[sh.hi : sh.hi+n]
	}
	sh.lo += n
	return sh.fns[sh.lo-n : sh.lo]
}

// fill fills what is left of share w with c, from its front, or from its
// back for a helper.
func (fw *fillWork) fill(c *converter, w int, back bool) (err error) {
	for {
		fns := fw.take(w, back)
		if len(fns) == 0 {
			return nil
		}
		for _, fn := range fns {
			if err := fw.pf.fillWith(c, fn); err != nil {
				return err
			}
		}
	}
}

// help fills functions from the back of the share with the most left, on
// a core that has finished its other work, with a converter of its own
// (a share's types its owner has converted are converted again): only
// when enough is left to repay that.
func (fw *fillWork) help() {
	fw.mu.Lock()
	w, most := -1, 4*fillChunk
	for i := range fw.shares {
		if n := fw.shares[i].hi - fw.shares[i].lo; n > most {
			w, most = i, n
		}
	}
	if w >= 0 {
		fw.helpers.Add(1)
	}
	fw.mu.Unlock()
	if w < 0 {
		return
	}
	defer fw.helpers.Done()
	if err := fw.fill(fw.conv.another(most/2), w, true); err != nil {
		fw.mu.Lock()
		fw.err = err
		fw.mu.Unlock()
	}
}

// units is how many compile units fns come from: the types of one unit
// are its own, and cores that share a unit convert its types each (a C++
// program of one unit is filled faster on one core).
func (pf *paramFiller) units(fns []*types.Func) int {
	seen := map[dwarf.Offset]bool{}
	for _, fn := range fns {
		if ps := pf.parts[fn]; len(ps) > 0 && ps[0].unit != nil {
			seen[ps[0].unit.off] = true // a walk's spans each read their unit's DIE
		}
	}
	return len(seen)
}

// minParallelFill is the fewest functions per core worth a converter of
// their own.
const minParallelFill = 256

// fillCores is how many cores fillAll uses at most.
var fillCores = func() int { return runtime.GOMAXPROCS(0) }

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

// FillAllParams is FillParams for many functions of one walk, on every
// core: the model of code fills them once it knows which concrete copy of
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
		errs = append(errs, pf.fillAll(g, nil))
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
	typeOf := func(off dwarf.Offset) types.Type {
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
func (pf *paramFiller) paramList(src *subprogram, fn *types.Func, located bool, entry uint64, typeOf func(dwarf.Offset) types.Type, a *arch.Arch) []types.Param {
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
