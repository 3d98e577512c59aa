package dwarf

import (
	"cmp"
	"slices"
	"strings"

	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/internal/par"
	"github.com/binscope/binscope/types"
)

// joiner finds the subprograms of a walk by offset and follows their
// origin chains.
type joiner struct {
	order []*subprogram // in DIE order
	offs  []Offset
}

func newJoiner(order []*subprogram) *joiner {
	offs := make([]Offset, len(order))
	for i, s := range order {
		offs[i] = s.off
	}
	return &joiner{order: order, offs: offs}
}

// find is the subprogram at off, or nil.
func (j *joiner) find(off Offset) *subprogram {
	if i, ok := slices.BinarySearch(j.offs, off); ok {
		return j.order[i]
	}
	return nil
}

// rootOf is the end of s's origin chain.
func (j *joiner) rootOf(s *subprogram) *subprogram {
	if s.root != nil {
		return s.root
	}
	r := s
	for i := 0; i < 16 && r.origin != 0; i++ {
		o := j.find(r.origin)
		if o == nil {
			break
		}
		r = o
	}
	s.root = r
	return r
}

// join merges the subprogram entries of each function (following
// abstract_origin and specification to the root), gives it its concrete
// instances and attaches inline sites, naming functions as their language
// writes them. A function is kept when it has code: an instance or an
// expansion (a declaration alone, such as GCC's __builtin_malloc, is not
// a function of this file). Entries, clones and aliases are the model of
// code's to settle with the symbol table; LowPC, Ranges and Size here are
// the first instance's. fill, when not nil, is given every function with
// its entries (where its parameters are read from) before naming.
func (f *File) join(order []*subprogram, sites []inlined, fill func([]*types.Func, map[*types.Func][]*subprogram) error) ([]*types.Func, error) {
	j := newJoiner(order)
	callees := j.keep(sites)
	out, parts := j.funcs(fill != nil)
	// Parameters are filled before merging, which changes what filling
	// reads (LowPC, Ranges). Every function is filled, also those naming
	// or merging leaves out.
	if fill != nil {
		if err := fill(out, parts); err != nil {
			return nil, err
		}
	}
	nameAll(out)
	// A function demangling names not (C, Go) takes the name of the
	// first entry of its chain that has one.
	for _, s := range order {
		if r := s.root; r.keep && r.fn.Name == "" {
			if name := s.name.String(); name != "" {
				r.fn.Name = s.scope + name
			}
		}
	}
	j.attach(sites, callees)
	var kept []*types.Func
	for _, fn := range out {
		if fn.Name != "" && (len(fn.Instances) > 0 || len(fn.Inlined) > 0) {
			kept = append(kept, fn)
		}
	}
	kept = mergeInlineOnly(kept)
	slices.SortStableFunc(kept, ByAddress)
	return kept, nil
}

// ByAddress orders functions as listings print them: those with code by
// address, then the others; by name at one address.
func ByAddress(a, b *types.Func) int {
	if (a.LowPC == 0) != (b.LowPC == 0) {
		if a.LowPC != 0 {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(a.LowPC, b.LowPC); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// keep marks the roots to make functions of, and returns the root each
// site expands (nil for none).
//
// A function is kept when its chain has code or an inline site expands
// it: only those get a *types.Func and a name (most subprograms of C++
// are declarations of members never defined here, and demangling them
// would cost most of the listing). An origin that is no subprogram names
// nothing, and its sites no callee.
func (j *joiner) keep(sites []inlined) []*subprogram {
	for _, s := range j.order {
		if r := j.rootOf(s); s.inst != nil {
			r.keep = true
		}
	}
	callees := make([]*subprogram, len(sites))
	for i, in := range sites {
		if s := j.find(in.origin); s != nil {
			callees[i] = j.rootOf(s)
			callees[i].keep = true
		}
	}
	return callees
}

// funcs makes a function of each kept root, from the entries of its
// chain, and with withParts says which entries each has.
func (j *joiner) funcs(withParts bool) ([]*types.Func, map[*types.Func][]*subprogram) {
	var out []*types.Func
	var parts map[*types.Func][]*subprogram
	if withParts {
		parts = make(map[*types.Func][]*subprogram, len(j.order))
	}
	for _, s := range j.order {
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
		if fn.Linkage == "" {
			if l := s.linkage.String(); !cloneLinkage(s.lang, l) {
				fn.Linkage = l
			}
		}
		if fn.Lang == types.LangUnknown {
			fn.Lang = s.lang
		}
		if fn.Decl.File == "" {
			fn.Decl = s.decl()
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
	return out, parts
}

// attach gives each named callee its inline sites, and each site its
// caller's name.
func (j *joiner) attach(sites []inlined, callees []*subprogram) {
	for i, in := range sites {
		if callees[i] == nil {
			continue
		}
		fn := callees[i].fn
		if fn.Name == "" {
			continue
		}
		in.site.Caller = "?"
		if s := j.find(in.caller); s != nil && in.caller != 0 {
			in.site.Caller = j.rootOf(s).fn.Name
		}
		in.site.Callee = fn
		fn.Inlined = append(fn.Inlined, in.site)
	}
}

// cloneLinkage reports whether linkage, a linkage name of language
// lang, is a GCC clone's (PyTuple_New.constprop.0, on an LTO-compiled
// clone's entry): the name of that instance, not of the function.
func cloneLinkage(lang types.Lang, linkage string) bool {
	if linkage == "" || (lang != types.LangC && lang != types.LangCPlusPlus) {
		return false
	}
	_, _, ok := naming.Clone(linkage)
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
