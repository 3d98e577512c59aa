package dwarf

import (
	"fmt"
	"runtime"
	"slices"
	"sort"

	"github.com/binscope/binscope/types"
)

// subprogram is what one DW_TAG_subprogram says; several (a declaration,
// an abstract instance, concrete copies) describe one function. A walk of
// a C++ program finds millions (most of them declarations of members
// inside their classes) and keeps a third of them until the join: the
// record is kept small, 128 bytes, what only parameters need behind a
// pointer (nil without FuncOptions.Params).
type subprogram struct {
	off      Offset
	origin   Offset // abstract_origin or specification, or 0
	name     lazyStr
	linkage  lazyStr
	scope    string
	declFile string
	declLine int64
	lang     types.Lang
	external bool
	inline   bool            // DW_AT_inline says declared inline
	variadic bool            // has DW_TAG_unspecified_parameters
	keep     bool            // for a root: its chain has code or is expanded inline
	inst     *types.Instance // the concrete copy, for an entry with code
	root     *subprogram     // the end of its origin chain, found by join
	fn       *types.Func     // for a root: the function join made of it
	*subParams
}

// subParams is what a subprogram says of its parameters, read when
// FuncOptions.Params is set.
type subParams struct {
	typ       Offset // DW_AT_type: the result type
	frameBase []byte
	params    []param
	unit      *unitCtx
}

// decl is where s is declared.
func (s *subprogram) decl() types.Decl { return types.Decl{File: s.declFile, Line: int(s.declLine)} }

// param is one DW_TAG_formal_parameter child of a subprogram.
type param struct {
	off    Offset
	name   string
	typ    Offset
	origin Offset
	result bool
	loc    locAttr
	hasLoc bool
	// konst is DW_AT_const_value: a parameter the compiler made a
	// constant in this copy (clang's constant-propagated function).
	konst *int64
}

// FuncOptions tune Functions. A nil *FuncOptions means the defaults.
type FuncOptions struct {
	// Params reads each function's parameters, their types (which needs
	// the type index) and their locations at the function's entry.
	Params bool
	// DeferParams, with Params, records the parameter entries during the
	// walk but fills a function's Params and Return only when File.FillParams
	// asks, at any time later: a probe needs a few functions' parameter
	// types, not all.
	DeferParams bool
	// At, when not zero, is the entry address of the one function the
	// caller needs. The walk then reads only the compile unit holding At
	// and the units whose line tables name the source file of At's line:
	// the units that can hold the function's abstract instance and its
	// inline expansions (inlined code keeps the callee's file in its
	// rows). Functions of other units are missing from the result.
	At uint64
	// SpelledParams, with Params (not DeferParams), says the caller only
	// spells the types of parameters and results: C and C++ structs,
	// classes and unions among them (which C spells by name) are read
	// for their name and size only, without their members, variants and
	// template parameters (a class passed by reference would bring its
	// members' types). Such types serve to spell prototypes, and nothing
	// else: they carry no mark of it.
	SpelledParams bool
	// keepDecls keeps every subprogram a walk finds (see
	// funcWalker.prune): a walk again after one was dropped that
	// another unit refers to.
	keepDecls bool
}

// inlined is one DW_TAG_inlined_subroutine.
type inlined struct {
	origin Offset
	caller Offset // the enclosing out-of-line subprogram
	site   *types.InlineSite
}

// Functions reads every function of the file: DWARF subprograms (out of
// line, abstract, or only inlined) with their inline expansions, joined
// with the ELF symbol table for compiler clones. Functions come in address
// order, then functions that exist only inlined, by name.
func (f *File) Functions(opts *FuncOptions) (fns []*types.Func, err error) {
	var o FuncOptions
	if opts != nil {
		o = *opts
	}
	return f.functions(o)
}

// functions is Functions. A walk of the whole file runs on every core,
// over spans of .debug_info (funcSpans).
func (f *File) functions(o FuncOptions) (fns []*types.Func, err error) {
	var units map[Offset]bool
	if o.At != 0 {
		if units, err = f.unitsFor(o.At); err != nil {
			return nil, err
		}
	}
	spans := []span{{}}
	if units == nil {
		// Spans of equal size are not of equal work: four per core,
		// each core taking the next, end together.
		spans = f.funcSpans(4 * runtime.GOMAXPROCS(0))
	}
	ws, err := f.walkSpans(o, units, spans)
	if err != nil {
		return nil, err
	}
	if prunedUsed(ws) {
		o.keepDecls = true
		if ws, err = f.walkSpans(o, units, spans); err != nil {
			return nil, err
		}
	}
	f.evict(f.mapped) // what the walks read of mapped sections
	return f.joinWalks(o, ws)
}

// prunedUsed reports whether a subprogram or a site of the walks ws
// refers to a subprogram one of them dropped (a reference across units).
// Those of the units a walk found closed are not looked at.
func prunedUsed(ws []walked) bool {
	n := 0
	for _, w := range ws {
		n += len(w.pruned)
	}
	if n == 0 {
		return false
	}
	pruned := make([]Offset, 0, n)
	for _, w := range ws {
		pruned = append(pruned, w.pruned...)
	}
	if !slices.IsSorted(pruned) { // the walks' spans come in order
		slices.Sort(pruned)
	}
	in := func(off Offset) bool { _, ok := slices.BinarySearch(pruned, off); return ok }
	for _, w := range ws {
		c := w.closed
		for _, part := range [...][]*subprogram{w.order[:c[0]], w.order[c[1]:]} {
			for _, s := range part {
				if s.origin != 0 && in(s.origin) {
					return true
				}
			}
		}
		for _, part := range [...][]inlined{w.sites[:c[2]], w.sites[c[3]:]} {
			for _, st := range part {
				if in(st.origin) {
					return true
				}
			}
		}
	}
	return false
}

// joinWalks joins what the walks of the spans found into functions.
func (f *File) joinWalks(o FuncOptions, ws []walked) (fns []*types.Func, err error) {
	order, sites, tags := ws[0].order, ws[0].sites, ws[0].tags
	if len(ws) > 1 {
		nOrder, nSites := 0, 0
		for _, w := range ws {
			nOrder, nSites = nOrder+len(w.order), nSites+len(w.sites)
		}
		order = append(make([]*subprogram, 0, nOrder), order...)
		sites = append(make([]inlined, 0, nSites), sites...)
	}
	for _, w := range ws[1:] {
		order = append(order, w.order...)
		sites = append(sites, w.sites...)
		if tags == nil {
			tags = w.tags
		}
		for off, t := range w.tags {
			tags[off] = t
		}
	}
	if !sort.SliceIsSorted(order, func(i, j int) bool { return order[i].off < order[j].off }) {
		sort.SliceStable(order, func(i, j int) bool { return order[i].off < order[j].off })
	}
	var pf *paramFiller
	var fill func(out []*types.Func, parts map[*types.Func][]*subprogram) error
	if o.Params {
		fill = func(out []*types.Func, parts map[*types.Func][]*subprogram) (err error) {
			pf = newParamFiller(f, parts, order)
			pf.tags = tags
			pf.opaque = o.SpelledParams
			if o.DeferParams {
				return nil
			}
			return pf.fillAll(out)
		}
	}
	fns, err = f.join(order, sites, fill)
	if err != nil || !o.Params {
		return fns, err
	}
	f.paramsMu.Lock()
	f.fillers = append(f.fillers, pf)
	f.paramsMu.Unlock()
	return fns, nil
}

// unitsFor is the set of compile units a walk for the function at addr
// reads (see FuncOptions.At).
func (f *File) unitsFor(addr uint64) (map[Offset]bool, error) {
	cu, err := f.dieReader().SeekPC(addr)
	if err != nil {
		return nil, fmt.Errorf("%s: section .debug_info: no compile unit covers %#x", f.Path, addr)
	}
	rows, err := f.unitRows(cu)
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Addr > addr }) - 1
	if i < 0 || rows[i].Addr != addr {
		return nil, fmt.Errorf("%s: section .debug_line: no row at %#x", f.Path, addr)
	}
	file := rows[i].File
	units := map[Offset]bool{cu.Offset: true}
	err = f.eachUnit(func(e *Entry) {
		for _, lf := range f.unitFiles(e) {
			if lf == file {
				units[e.Offset] = true
				return
			}
		}
	})
	return units, err
}

// DW_AT_inline values and the pre-standard linkage name attribute.
const (
	dwInlDeclaredNotInlined = 2
	dwInlDeclaredInlined    = 3
	attrMIPSLinkageName     = Attr(0x2007)
	// DW_TAG_GNU_formal_parameter_pack holds the parameters of a C++
	// parameter pack.
	tagGNUFormalParameterPack = Tag(0x4108)
)
