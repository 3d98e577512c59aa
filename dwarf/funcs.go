package dwarf

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/binscope/binscope/internal/elfx"
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
	lang     types.Lang
	scope    string
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
}

// FuncOptions tune Functions. A nil *FuncOptions means the defaults.
type FuncOptions struct {
	// Params reads each function's parameters, their types (which needs
	// the type index) and their locations at the function's entry.
	Params bool
	// DeferParams, with Params, records the parameter entries during the
	// walk but fills a function's Params and Return only when FillParams
	// asks: a probe needs a few functions' parameter types, not all.
	DeferParams bool
	// At, when not zero, is the entry address of the one function the
	// caller needs. The walk then reads only the compile unit holding At
	// and the units whose line tables name the source file of At's line:
	// the units that can hold the function's abstract instance and its
	// inline expansions (inlined code keeps the callee's file in its
	// rows). Functions of other units are missing from the result.
	At uint64
}

// inlined is one DW_TAG_inlined_subroutine.
type inlined struct {
	origin dwarf.Offset
	caller dwarf.Offset // the enclosing out-of-line subprogram
	site   types.InlineSite
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
	defer func() {
		if p := recover(); p != nil {
			fns, err = nil, fmt.Errorf("%s: section .debug_info: corrupt DWARF: %v", f.Path, p)
		}
	}()
	var units map[dwarf.Offset]bool
	if o.At != 0 {
		if units, err = f.unitsFor(o.At); err != nil {
			return nil, err
		}
	}
	subs := map[dwarf.Offset]*subprogram{}
	var order []*subprogram
	var sites []inlined
	r := f.entries()
	type frame struct {
		sub    dwarf.Offset // enclosing out-of-line subprogram, or 0
		scope  string
		direct *subprogram // the subprogram whose direct children these are
	}
	var unit *unitCtx
	rel := f.ELF.Type == elf.ET_REL
	var stack []frame
	var cur frame
	var files []*dwarf.LineFile
	var lang types.Lang
	for {
		e, err := r.next()
		if err != nil {
			return nil, err
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
			return nil, f.decodeError(e.Offset, "%v", errTooDeep)
		}
		next := cur
		next.direct = nil
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			stack = stack[:0]
			cur, next = frame{}, frame{}
			if units != nil && !units[e.Offset] {
				if e.Children {
					r.r.SkipChildren()
				}
				continue
			}
			lang = langOf(e, str(e, dwarf.AttrProducer))
			files = f.unitFiles(e)
			if o.Params {
				unit = f.newUnitCtx(e)
			}
		case dwarf.TagNamespace, dwarf.TagModule, dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType:
			if name := str(e, dwarf.AttrName); name != "" {
				next.scope += name + "::"
			}
		case dwarf.TagSubprogram:
			s := &subprogram{off: e.Offset, name: str(e, dwarf.AttrName), lang: lang, scope: cur.scope}
			s.linkage = str(e, dwarf.AttrLinkageName)
			if s.linkage == "" {
				s.linkage = str(e, attrMIPSLinkageName)
			}
			s.external, _ = e.Val(dwarf.AttrExternal).(bool)
			if v, ok := e.Val(dwarf.AttrInline).(int64); ok {
				s.inline = v == dwInlDeclaredNotInlined || v == dwInlDeclaredInlined
			}
			if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
				s.origin = o
			} else if o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
				s.origin = o
			}
			s.decl = types.Decl{File: fileName(files, e.Val(dwarf.AttrDeclFile)), Line: intVal(e.Val(dwarf.AttrDeclLine))}
			if rs, err := f.Data.Ranges(e); err == nil && len(rs) > 0 && (rel || lowest(rs) != 0) {
				s.ranges = rs
			}
			if o.Params {
				s.unit = unit
				s.typ, _ = e.Val(dwarf.AttrType).(dwarf.Offset)
				if fb, ok := readLocAttr(e, dwarf.AttrFrameBase); ok && !fb.list {
					s.frameBase = fb.expr
				}
				next.direct = s
			}
			subs[e.Offset] = s
			order = append(order, s)
			if len(s.ranges) > 0 && cur.sub == 0 {
				next.sub = e.Offset
			}
		case dwarf.TagFormalParameter:
			if s := cur.direct; s != nil {
				p := param{off: e.Offset, name: str(e, dwarf.AttrName)}
				p.typ, _ = e.Val(dwarf.AttrType).(dwarf.Offset)
				p.origin, _ = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
				p.result, _ = e.Val(dwarf.AttrVarParam).(bool)
				p.loc, p.hasLoc = readLocAttr(e, dwarf.AttrLocation)
				s.params = append(s.params, p)
			}
		case dwarf.TagInlinedSubroutine:
			o, _ := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			site := types.InlineSite{
				CallFile:   fileName(files, e.Val(dwarf.AttrCallFile)),
				CallLine:   intVal(e.Val(dwarf.AttrCallLine)),
				CallColumn: intVal(e.Val(dwarf.AttrCallColumn)),
			}
			if rs, err := f.Data.Ranges(e); err == nil {
				site.Ranges = rs
			}
			site.EntryPC = f.entryPCOf(e)
			if site.EntryPC == 0 && len(site.Ranges) > 0 {
				site.EntryPC = site.Ranges[0][0]
			}
			// Code the linker discarded keeps DWARF with addresses from 0
			// (a tombstone); in a linked file no code lives there.
			if o != 0 && (site.EntryPC != 0 || rel) {
				sites = append(sites, inlined{origin: o, caller: cur.sub, site: site})
			}
		}
		if e.Children {
			stack = append(stack, cur)
			cur = next
		}
	}
	fns, parts, err := f.join(subs, order, sites)
	if err != nil || !o.Params {
		return fns, err
	}
	if o.DeferParams {
		f.deferred = newParamFiller(f, parts, order)
		return fns, nil
	}
	return fns, f.addParams(fns, parts, order)
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
)

func intVal(v any) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case uint64:
		return int(x)
	}
	return 0
}

// join merges the subprogram entries of each function (following
// abstract_origin and specification to the root), attaches inline sites,
// names functions as their language writes them and adds the clones the
// symbol table holds.
func (f *File) join(subs map[dwarf.Offset]*subprogram, order []*subprogram, sites []inlined) ([]*types.Func, map[*types.Func][]*subprogram, error) {
	root := func(off dwarf.Offset) dwarf.Offset {
		for i := 0; i < 16; i++ {
			s := subs[off]
			if s == nil || s.origin == 0 || subs[s.origin] == nil {
				return off
			}
			off = s.origin
		}
		return off
	}
	byRoot := map[dwarf.Offset]*types.Func{}
	var out []*types.Func
	get := func(off dwarf.Offset) *types.Func {
		r := root(off)
		if fn := byRoot[r]; fn != nil {
			return fn
		}
		fn := &types.Func{}
		byRoot[r] = fn
		out = append(out, fn)
		return fn
	}
	cloneAt := f.cloneAddrs()
	parts := map[*types.Func][]*subprogram{}
	for _, s := range order {
		fn := get(s.off)
		parts[fn] = append(parts[fn], s)
		// Attributes may sit on any entry of the chain: fill the gaps.
		if fn.Linkage == "" {
			fn.Linkage = s.linkage
		}
		if fn.Name == "" && s.name != "" {
			fn.Name = s.scope + s.name
		}
		if fn.Lang == types.LangUnknown {
			fn.Lang = s.lang
		}
		if fn.Decl.File == "" {
			fn.Decl = s.decl
		}
		fn.External = fn.External || s.external
		fn.DeclaredInline = fn.DeclaredInline || s.inline
		// A concrete copy that starts at a clone symbol (.part.0) is the
		// clone's code, not the function's out-of-line copy.
		if len(s.ranges) > 0 && fn.LowPC == 0 && !cloneAt[lowest(s.ranges)] {
			fn.Ranges = s.ranges
			fn.LowPC = s.ranges[0][0]
			for _, r := range s.ranges {
				fn.LowPC = min(fn.LowPC, r[0])
				fn.Size += r[1] - r[0]
			}
		}
	}
	for _, fn := range out {
		fn.Name = displayName(fn)
	}
	for _, in := range sites {
		fn := get(in.origin)
		if fn.Name == "" {
			continue
		}
		in.site.Caller = "?"
		if c := byRoot[root(in.caller)]; c != nil && in.caller != 0 {
			in.site.Caller = c.Name
		}
		fn.Inlined = append(fn.Inlined, in.site)
	}
	var kept []*types.Func
	for _, fn := range out {
		if fn.Name != "" && (fn.LowPC != 0 || len(fn.Inlined) > 0 || fn.Linkage != "") {
			kept = append(kept, fn)
		}
	}
	kept = mergeInlineOnly(kept)
	f.addClones(kept)
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
	return kept, parts, nil
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
	first := map[key]*types.Func{}
	var out []*types.Func
	for _, fn := range fns {
		k := key{fn.Name, fn.Decl.File, fn.Decl.Line}
		into := first[k]
		if into == nil || k.file == "" || (into.LowPC != 0 && fn.LowPC != 0) {
			if into == nil {
				first[k] = fn
			}
			out = append(out, fn)
			continue
		}
		if fn.LowPC != 0 { // keep the out-of-line copy's address and size
			into.Name, into.Linkage, into.LowPC, into.Size, into.Ranges = fn.Name, fn.Linkage, fn.LowPC, fn.Size, fn.Ranges
			into.External = into.External || fn.External
		}
		into.Inlined = append(into.Inlined, fn.Inlined...)
		into.DeclaredInline = into.DeclaredInline || fn.DeclaredInline
	}
	return out
}

// rustHash is the hash suffix of legacy Rust symbol names.
var rustHash = regexp.MustCompile(`::h[0-9a-f]{16}$`)

// displayName is a function's name as users write it: Go's DW_AT_name is
// already pkg.(*T).M, Zig's linkage name is the qualified name; C++ and Rust linkage names are demangled (without
// parameters for C++, without the hash for legacy Rust).
func displayName(fn *types.Func) string {
	if fn.Lang == types.LangGo || fn.Linkage == "" {
		return fn.Name
	}
	if fn.Lang == types.LangZig { // inl.work: Zig's names are already qualified
		return fn.Linkage
	}
	if d, ok := demangled(fn.Linkage); ok {
		return d
	}
	return fn.Name
}

// Demangle is a C++ or Rust symbol as users write the function: without
// parameters, without the hash of legacy Rust; other names unchanged.
func Demangle(sym string) string {
	if d, ok := demangled(sym); ok {
		return d
	}
	return sym
}

func demangled(sym string) (string, bool) {
	d, err := demangle.ToString(sym, demangle.NoParams, demangle.NoTemplateParams)
	if err != nil {
		return "", false
	}
	return rustHash.ReplaceAllString(d, ""), true
}

// cloneSuffix matches GCC's clone and partial-inlining suffixes.
var cloneSuffix = regexp.MustCompile(`^(.+?)\.(part|cold|isra|constprop|lto_priv|clone|specialized)((?:\.[0-9]+|\.(?:part|cold|isra|constprop|lto_priv|clone|specialized))*)$`)

func lowest(rs [][2]uint64) uint64 {
	lo := rs[0][0]
	for _, r := range rs {
		lo = min(lo, r[0])
	}
	return lo
}

// cloneAddrs is the set of addresses of clone symbols (name.part.0...).
func (f *File) cloneAddrs() map[uint64]bool {
	syms := f.Symbols()
	at := map[uint64]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && cloneSuffix.MatchString(s.Name) {
			at[s.Value] = true
		}
	}
	return at
}

// addClones ties symbols such as maybe_alloc.part.0 and foo.cold to the
// function they were cut from.
func (f *File) addClones(fns []*types.Func) {
	syms := f.Symbols()
	byName := map[string]*types.Func{}
	for _, fn := range fns {
		if fn.Linkage != "" {
			byName[fn.Linkage] = fn
		}
		if _, ok := byName[fn.Name]; !ok {
			byName[fn.Name] = fn
		}
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 {
			continue
		}
		m := cloneSuffix.FindStringSubmatch(s.Name)
		if m == nil {
			continue
		}
		fn := byName[m[1]]
		if fn == nil {
			continue
		}
		fn.Clones = append(fn.Clones, types.Clone{Symbol: s.Name, Address: s.Value, Size: s.Size, Kind: m[2]})
	}
	for _, fn := range fns {
		sort.Slice(fn.Clones, func(i, j int) bool { return fn.Clones[i].Address < fn.Clones[j].Address })
	}
}

// Symbols is the named file's ELF symbol table, read once: .symtab, or
// .dynsym for a shared library without one; empty when it has neither.
func (f *File) Symbols() []elf.Symbol {
	if f.syms == nil {
		f.syms, _ = f.ELF.Symbols()
		if len(f.syms) == 0 {
			f.syms, _ = f.ELF.DynamicSymbols()
		}
		if f.syms == nil {
			f.syms = []elf.Symbol{}
		}
	}
	return f.syms
}

// SymbolFuncs are the functions of ef's symbol tables (.symtab, then
// .dynsym), named without their symbol version (malloc@@GLIBC_2.2.5):
// what a binary or library without debug info tells of its code.
func SymbolFuncs(ef *elfx.File) []*types.Func {
	syms, _ := ef.Symbols()
	dyn, _ := ef.DynamicSymbols()
	seen := map[string]bool{}
	var fns []*types.Func
	for _, sy := range append(syms, dyn...) {
		name, _, _ := strings.Cut(sy.Name, "@")
		if elf.ST_TYPE(sy.Info) != elf.STT_FUNC || sy.Value == 0 || sy.Size == 0 || seen[name] {
			continue
		}
		seen[name] = true
		fns = append(fns, &types.Func{Name: name, Linkage: sy.Name, LowPC: sy.Value, Size: sy.Size,
			Ranges: [][2]uint64{{sy.Value, sy.Value + sy.Size}}, External: elf.ST_BIND(sy.Info) != elf.STB_LOCAL})
	}
	return fns
}
