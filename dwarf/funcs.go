package dwarf

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"

	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/internal/par"
	"github.com/binscope/binscope/types"
)

// subprogram is what one DW_TAG_subprogram says; several (a declaration,
// an abstract instance, concrete copies) describe one function.
type subprogram struct {
	off      dwarf.Offset
	origin   dwarf.Offset // abstract_origin or specification, or 0
	name     string
	linkage  string
	external bool
	inline   bool // DW_AT_inline says declared inline
	decl     types.Decl
	ranges   [][2]uint64
	inst     *types.Instance // the concrete copy, for an entry with code
	declOnly bool            // DW_AT_declaration
	variadic bool            // has DW_TAG_unspecified_parameters
	lang     types.Lang
	scope    string
	root     *subprogram // the end of its origin chain, found by join
	keep     bool        // for a root: its chain has code or is expanded inline
	fn       *types.Func // for a root: the function join made of it
	nameSrc  *subprogram // for a root: the first entry of its chain with a name
	// Filled when FuncOptions.Params is set.
	typ       dwarf.Offset // DW_AT_type: the result type
	frameBase []byte
	params    []param
	unit      *unitCtx
}

// param is one DW_TAG_formal_parameter child of a subprogram.
type param struct {
	off    dwarf.Offset
	name   string
	typ    dwarf.Offset
	origin dwarf.Offset
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
}

// inlined is one DW_TAG_inlined_subroutine.
type inlined struct {
	origin dwarf.Offset
	caller dwarf.Offset // the enclosing out-of-line subprogram
	site   *types.InlineSite
}

// Functions reads every function of the file: DWARF subprograms (out of
// line, abstract, or only inlined) with their inline expansions, joined
// with the ELF symbol table for compiler clones. Functions come in address
// order, then functions that exist only inlined, by name.
func (f *File) Functions(opts *FuncOptions) (fns []*types.Func, err error) {
	defer f.guard(&err)
	var o FuncOptions
	if opts != nil {
		o = *opts
	}
	fns, err = f.functions(o, true)
	if errors.Is(err, errScan) {
		fns, err = f.functions(o, false)
	}
	return fns, err
}

// functions is Functions, walking the DIEs with a scan when fast (see
// dieEntries): errScan when the scan falls out of step. A fast walk of the
// whole file runs on every core, over spans of .debug_info (funcSpans).
func (f *File) functions(o FuncOptions, fast bool) (fns []*types.Func, err error) {
	var units map[dwarf.Offset]bool
	if o.At != 0 {
		if units, err = f.unitsFor(o.At); err != nil {
			return nil, err
		}
	}
	spans := []span{{}}
	if fast && units == nil {
		// Spans of equal size are not of equal work: four per core,
		// each core taking the next, end together.
		spans = f.funcSpans(4 * runtime.GOMAXPROCS(0))
	}
	ws, err := f.walkSpans(o, units, fast, spans)
	if err != nil {
		return nil, err
	}
	order, sites := ws[0].order, ws[0].sites
	for _, w := range ws[1:] {
		order = append(order, w.order...)
		sites = append(sites, w.sites...)
	}
	if !sort.SliceIsSorted(order, func(i, j int) bool { return order[i].off < order[j].off }) {
		sort.SliceStable(order, func(i, j int) bool { return order[i].off < order[j].off })
	}
	var pf *paramFiller
	var fill func(out []*types.Func, parts map[*types.Func][]*subprogram) error
	var help func()
	if o.Params {
		// The core that names the functions helps fill them once done.
		work := make(chan *fillWork, 1)
		fill = func(out []*types.Func, parts map[*types.Func][]*subprogram) (err error) {
			defer close(work)
			pf = newParamFiller(f, parts, order)
			pf.opaque = o.SpelledParams
			if o.DeferParams {
				return nil
			}
			return pf.fillAll(out, work)
		}
		help = func() {
			if fw, ok := <-work; ok {
				fw.help()
			}
		}
	}
	fns, err = f.join(order, sites, fill, help)
	if err != nil || !o.Params {
		return fns, err
	}
	f.paramsMu.Lock()
	f.fillers = append(f.fillers, pf)
	f.paramsMu.Unlock()
	return fns, nil
}

// walkSpan walks the DIEs of one span of .debug_info (all of it for the
// zero span) for Functions.
func (f *File) walkSpan(o FuncOptions, units map[dwarf.Offset]bool, fast bool, sp span) (walked, error) {
	w := readerWalk
	if fast {
		w = funcWalk
	}
	r := f.dieEntries(w)
	r.typed = fast
	jump := 0
	if sp != (span{}) {
		r.sc.pos, r.sc.limit = sp.unit, sp.limit
		if sp.start > sp.unit {
			jump = sp.start
		}
	}
	var out walked
	var params paramSlab
	type frame struct {
		sub    dwarf.Offset // enclosing out-of-line subprogram, or 0
		scope  string
		direct *subprogram       // the subprogram whose direct children these are
		inst   *types.Instance   // the concrete copy holding these entries
		site   *types.InlineSite // the innermost expansion holding them
	}
	var unit *unitCtx
	rel := f.ELF.Type == elf.ET_REL
	var stack []frame
	var cur frame
	var files []*dwarf.LineFile
	var lang types.Lang
	for {
		e, err := r.next(o.Params && cur.direct != nil)
		if err != nil {
			return out, err
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			if len(stack) > 0 {
				cur, stack = stack[len(stack)-1], stack[:len(stack)-1]
			}
			continue
		}
		if len(stack) > maxNesting {
			return out, f.decodeError(e.Offset, "%v", errTooDeep)
		}
		next := cur
		next.direct = nil
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			stack = stack[:0]
			cur, next = frame{}, frame{}
			if units != nil && !units[e.Offset] {
				if e.Children {
					r.skipUnit()
				}
				continue
			}
			lang = langOf(e, str(e, dwarf.AttrProducer))
			files = f.unitFiles(e)
			if o.Params {
				unit = f.newUnitCtx(e)
			}
		case dwarf.TagNamespace, dwarf.TagModule, dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType:
			name := str(e, dwarf.AttrName)
			if name == "" && e.Tag == dwarf.TagNamespace {
				name = "(anonymous namespace)" // as the demangler spells it
			}
			if name != "" {
				next.scope += name + "::"
			}
		case dwarf.TagSubprogram:
			a, e, err := r.attrs(e)
			if err != nil {
				return out, err
			}
			s := &subprogram{off: e.Offset, name: a.name, lang: lang, scope: cur.scope}
			s.linkage = a.linkageName()
			s.external = a.external
			s.inline = a.inline == dwInlDeclaredNotInlined || a.inline == dwInlDeclaredInlined
			s.origin = a.origin
			if s.origin == 0 {
				s.origin = a.spec
			}
			s.decl = types.Decl{File: fileAt(files, a.declFile), Line: int(a.declLine)}
			s.declOnly = a.declaration
			if rs, err := r.attrRanges(e, &a); err == nil && len(rs) > 0 && (rel || lowest(rs) != 0) {
				s.ranges = rs
				// Where calls enter: DW_AT_entry_pc, else DW_AT_low_pc,
				// else the first range listed (GCC lists a split
				// function's hot part first, though its cold part may
				// lie lower). The model of code checks it against the
				// symbol table.
				entry := a.entryPC(rs)
				if entry == 0 {
					entry = a.low
				}
				if entry == 0 {
					entry = rs[0][0]
				}
				s.inst = &types.Instance{Entry: entry, Ranges: rs}
			}
			if o.Params {
				s.unit = unit
				s.typ = a.typ
				if a.hasFrameBase && !a.frameBase.list {
					s.frameBase = a.frameBase.expr
				}
			}
			next.direct = s
			out.order = append(out.order, s)
			if s.inst != nil && cur.sub == 0 {
				next.sub = e.Offset
				next.inst, next.site = s.inst, nil
			}
		case dwarf.TagUnspecifiedParameters:
			if s := cur.direct; s != nil {
				s.variadic = true
			}
		case tagGNUFormalParameterPack:
			// A C++ parameter pack: its formal parameters are the
			// function's.
			next.direct = cur.direct
		case dwarf.TagFormalParameter:
			if s := cur.direct; s != nil && o.Params {
				p, err := r.param(e)
				if err != nil {
					return out, err
				}
				params.add(s, p)
			}
		case dwarf.TagInlinedSubroutine:
			a, e, err := r.attrs(e)
			if err != nil {
				return out, err
			}
			o := a.origin
			site := &types.InlineSite{
				CallFile:   fileAt(files, a.callFile),
				CallLine:   int(a.callLine),
				CallColumn: int(a.callColumn),
			}
			if rs, err := r.attrRanges(e, &a); err == nil {
				site.Ranges = rs
			}
			site.EntryPC = a.entryPC(site.Ranges)
			if site.EntryPC == 0 && len(site.Ranges) > 0 {
				site.EntryPC = site.Ranges[0][0]
			}
			// Code the linker discarded keeps DWARF with addresses from 0
			// (a tombstone); in a linked file no code lives there.
			if o != 0 && (site.EntryPC != 0 || rel) {
				site.Parent = cur.site
				out.sites = append(out.sites, inlined{origin: o, caller: cur.sub, site: site})
				if cur.inst != nil {
					cur.inst.Sites = append(cur.inst.Sites, site)
				}
				next.site = site
			}
		}
		if e.Children {
			stack = append(stack, cur)
			cur = next
		}
		if jump > 0 {
			// This span starts at a child of its unit: the unit's
			// context is read, on to the span.
			r.sc.pos, jump = jump, 0
		}
	}
	return out, nil
}

// paramSlab holds the parameters of a walk's subprograms in shared
// arrays, where each subprogram's are contiguous (they are consecutive
// children of its DIE): one allocation for many subprograms instead of a
// growing slice each.
type paramSlab struct {
	// free is the unused rest of the current array, from where the
	// owner's parameters start: they are free[:len(owner.params)].
	free  []param
	owner *subprogram
}

// add adds p to s's parameters (see addParam).
func (sl *paramSlab) add(s *subprogram, p param) {
	if sl.owner != s {
		if o := sl.owner; o != nil {
			sl.free = sl.free[len(o.params):len(o.params)]
			o.params = o.params[:len(o.params):len(o.params)] // an append of o's moves them
		}
		sl.owner = nil
		if len(s.params) == 0 {
			if cap(sl.free) < 8 {
				sl.free = make([]param, 0, 1024)
			}
			s.params, sl.owner = sl.free[:0], s
		}
	}
	s.params = addParam(s.params, p)
	if sl.owner == s && &s.params[0] != &sl.free[:1][0] {
		sl.owner = nil // outgrew the array: the array's rest is the next one's
	}
}

// addParam appends p to a subprogram's parameters, except a second entry
// for the same abstract parameter (GCC repeats one, without a location,
// after an LTO-compiled body's other children): one parameter, the entry
// with a location kept.
func addParam(ps []param, p param) []param {
	if p.origin != 0 {
		for i := range ps {
			if ps[i].origin == p.origin {
				if !ps[i].hasLoc && ps[i].konst == nil && (p.hasLoc || p.konst != nil) {
					ps[i] = p
				}
				return ps
			}
		}
	}
	return append(ps, p)
}

// unitsFor is the set of compile units a walk for the function at addr
// reads (see FuncOptions.At).
func (f *File) unitsFor(addr uint64) (map[dwarf.Offset]bool, error) {
	cu, err := f.Data.Reader().SeekPC(addr)
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
	units := map[dwarf.Offset]bool{cu.Offset: true}
	err = f.eachUnit(func(e *dwarf.Entry) {
		for _, lf := range f.unitFiles(e) {
			if lf != nil && lf.Name == file {
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
	attrMIPSLinkageName     = dwarf.Attr(0x2007)
	// DW_TAG_GNU_formal_parameter_pack holds the parameters of a C++
	// parameter pack.
	tagGNUFormalParameterPack = dwarf.Tag(0x4108)
)

// join merges the subprogram entries of each function (following
// abstract_origin and specification to the root), gives it its concrete
// instances and attaches inline sites, naming functions as their language
// writes them. A function is kept when it has code: an instance or an
// expansion (a declaration alone, such as GCC's __builtin_malloc, is not
// a function of this file). Entries, clones and aliases are the model of
// code's to settle with the symbol table; LowPC, Ranges and Size here are
// the first instance's. fill, when not nil, is given every function with
// its entries (where its parameters are read from) before naming, and
// runs while join names them.
func (f *File) join(order []*subprogram, sites []inlined, fill func([]*types.Func, map[*types.Func][]*subprogram) error, help func()) ([]*types.Func, error) {
	withParts := fill != nil
	// order is in DIE order: a subprogram is found by its offset.
	offs := make([]dwarf.Offset, len(order))
	for i, s := range order {
		offs[i] = s.off
	}
	find := func(off dwarf.Offset) *subprogram {
		if i, ok := slices.BinarySearch(offs, off); ok {
			return order[i]
		}
		return nil
	}
	rootOf := func(s *subprogram) *subprogram {
		if s.root != nil {
			return s.root
		}
		r := s
		for i := 0; i < 16 && r.origin != 0; i++ {
			o := find(r.origin)
			if o == nil {
				break
			}
			r = o
		}
		s.root = r
		return r
	}
	// A function is kept when its chain has code or an inline site
	// expands it: only those get a *types.Func and a name (most
	// subprograms of C++ are declarations of members never defined here,
	// and demangling them would cost most of the listing). An origin that
	// is no subprogram names nothing, and its sites no callee.
	for _, s := range order {
		if r := rootOf(s); s.inst != nil {
			r.keep = true
		}
	}
	callees := make([]*subprogram, len(sites))
	for i, in := range sites {
		if s := find(in.origin); s != nil {
			callees[i] = rootOf(s)
			callees[i].keep = true
		}
	}
	var out []*types.Func
	var parts map[*types.Func][]*subprogram
	if withParts {
		parts = make(map[*types.Func][]*subprogram, len(order))
	}
	for _, s := range order {
		r := s.root
		if !r.keep {
			continue
		}
		fn := r.fn
		if fn == nil {
			fn = &types.Func{}
			r.fn = fn
			out = append(out, fn)
		}
		if withParts {
			parts[fn] = append(parts[fn], s)
		}
		// Attributes may sit on any entry of the chain: fill the gaps.
		if fn.Linkage == "" && !cloneLinkage(s) {
			fn.Linkage = s.linkage
		}
		if r.nameSrc == nil && s.name != "" {
			r.nameSrc = s // the name if demangling gives none (see nameAll)
		}
		if fn.Lang == types.LangUnknown {
			fn.Lang = s.lang
		}
		if fn.Decl.File == "" {
			fn.Decl = s.decl
		}
		fn.External = fn.External || s.external
		fn.DeclaredInline = fn.DeclaredInline || s.inline
		fn.Variadic = fn.Variadic || s.variadic
		if s.inst != nil {
			fn.Instances = append(fn.Instances, s.inst)
			if fn.LowPC == 0 {
				SetEntry(fn, s.inst)
			}
		}
	}
	// Parameters are filled on another core while the functions are
	// named (demangling, on every core): filling needs no names. Every
	// function is filled, also those naming or merging leaves out.
	var filled chan error
	var pp par.Panic
	if fill != nil {
		filled = make(chan error, 1)
		go func() {
			var err error
			defer func() { filled <- err }()
			defer pp.Catch()
			err = fill(out, parts)
		}()
	}
	nameAll(out)
	for _, s := range order {
		if r := s.root; r.keep && r.nameSrc == s && r.fn.Name == "" {
			r.fn.Name = s.scope + s.name
		}
	}
	for i, in := range sites {
		if callees[i] == nil {
			continue
		}
		fn := callees[i].fn
		if fn.Name == "" {
			continue
		}
		in.site.Caller = "?"
		if s := find(in.caller); s != nil && in.caller != 0 {
			in.site.Caller = rootOf(s).fn.Name
		}
		in.site.Callee = fn
		fn.Inlined = append(fn.Inlined, in.site)
	}
	var kept []*types.Func
	for _, fn := range out {
		if fn.Name != "" && (len(fn.Instances) > 0 || len(fn.Inlined) > 0) {
			kept = append(kept, fn)
		}
	}
	if filled != nil {
		help()
		// Merging changes what filling reads (LowPC, Ranges).
		err := <-filled
		pp.Raise()
		if err != nil {
			return nil, err
		}
	}
	kept = mergeInlineOnly(kept)
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		if (a.LowPC == 0) != (b.LowPC == 0) {
			return a.LowPC != 0
		}
		if a.LowPC != b.LowPC {
			return a.LowPC < b.LowPC
		}
		return a.Name < b.Name
	})
	return kept, nil
}

// cloneLinkage reports whether s's linkage name is a GCC clone's
// (PyTuple_New.constprop.0, on an LTO-compiled clone's entry): the name
// of that instance, not of the function.
func cloneLinkage(s *subprogram) bool {
	if s.linkage == "" || (s.lang != types.LangC && s.lang != types.LangCPlusPlus) {
		return false
	}
	_, _, ok := naming.Clone(s.linkage)
	return ok
}

// SetEntry makes inst fn's out-of-line copy: LowPC is its entry, Ranges
// its code, Size the bytes the ranges cover.
func SetEntry(fn *types.Func, inst *types.Instance) {
	fn.LowPC, fn.Ranges, fn.Size = inst.Entry, inst.Ranges, 0
	for _, r := range inst.Ranges {
		fn.Size += r[1] - r[0]
	}
}

// mergeInlineOnly makes one function of the abstract instances that
// describe the same source function: a static inline function of a C
// header has one per compile unit, a Zig inline fn one per call, a Rust
// generic one per crate. Instances merge when name and declaration agree
// and at most one has out-of-line code.
func mergeInlineOnly(fns []*types.Func) []*types.Func {
	type key struct {
		name, file string
		line       int
	}
	first := make(map[key]*types.Func, len(fns))
	out := make([]*types.Func, 0, len(fns))
	for _, fn := range fns {
		if fn.Decl.File == "" {
			out = append(out, fn) // no declaration to match
			continue
		}
		k := key{fn.Name, fn.Decl.File, fn.Decl.Line}
		into := first[k]
		if into == nil || (len(into.Instances) > 0 && len(fn.Instances) > 0) {
			if into == nil {
				first[k] = fn
			}
			out = append(out, fn)
			continue
		}
		if len(fn.Instances) > 0 { // keep the out-of-line copy's address and size
			into.Name, into.Linkage, into.LowPC, into.Size, into.Ranges = fn.Name, fn.Linkage, fn.LowPC, fn.Size, fn.Ranges
			into.Instances = fn.Instances
			into.External = into.External || fn.External
			into.Variadic = into.Variadic || fn.Variadic
		}
		for _, in := range fn.Inlined {
			in.Callee = into
		}
		into.Inlined = append(into.Inlined, fn.Inlined...)
		into.DeclaredInline = into.DeclaredInline || fn.DeclaredInline
	}
	return out
}

// nameAll gives fns their display names, demangling each linkage name
// once (a C++ inline function of a header has one root per unit) and on
// every core: demangling is much of a C++ walk's time.
func nameAll(fns []*types.Func) {
	var mangled []string
	at := make([]int32, len(fns)) // fns[i]'s name is names[at[i]], when at[i] >= 0
	seen := make(map[string]int32, len(fns))
	for i, fn := range fns {
		at[i] = -1
		if !needsDemangling(fn) {
			continue
		}
		k, ok := seen[fn.Linkage]
		if !ok {
			k = int32(len(mangled))
			seen[fn.Linkage] = k
			mangled = append(mangled, fn.Linkage)
		}
		at[i] = k
	}
	names := make([]string, len(mangled))
	par.Each(len(mangled), 256, func(i int) { names[i], _ = naming.Demangle(mangled[i]) })
	for i, fn := range fns {
		switch {
		case fn.Lang == types.LangGo || fn.Linkage == "":
		case fn.Lang == types.LangZig: // inl.work: Zig's names are already qualified
			fn.Name = fn.Linkage
		case at[i] >= 0 && names[at[i]] != "":
			fn.Name = names[at[i]]
		}
	}
}

func needsDemangling(fn *types.Func) bool {
	return fn.Linkage != "" && fn.Lang != types.LangGo && fn.Lang != types.LangZig
}

// displayName is a function's name as users write it (the naming
// policy of package naming): Go's DW_AT_name is already pkg.(*T).M, Zig's
// linkage name is the qualified name; C++ and Rust linkage names are
// demangled, template arguments kept, without parameters or legacy Rust's
// hash.
func displayName(fn *types.Func) string {
	if fn.Lang == types.LangGo || fn.Linkage == "" {
		return fn.Name
	}
	if fn.Lang == types.LangZig { // inl.work: Zig's names are already qualified
		return fn.Linkage
	}
	if d, ok := naming.Demangle(fn.Linkage); ok {
		return d
	}
	return fn.Name
}

func lowest(rs [][2]uint64) uint64 {
	lo := rs[0][0]
	for _, r := range rs {
		lo = min(lo, r[0])
	}
	return lo
}
