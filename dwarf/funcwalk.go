package dwarf

import (
	"debug/elf"
	"errors"
	"slices"
	"unsafe"

	"github.com/binscope/binscope/types"
)

// funcWalker is one walk of Functions over a span of .debug_info: the
// subprograms and inline sites it found, and the context of the unit it
// is in.
type funcWalker struct {
	f      *File
	o      FuncOptions
	r      *dieEntries
	read   fnReader // r, or the tests' oracle
	out    walked
	params paramSlab
	subs   subSlab
	sites  siteSlab
	ranges rangeSlab
	rbuf   [][2]uint64 // attrRanges' buffer
	scopes map[scopeKey]string
	// prune's buffers.
	pruneOffs []Offset
	pruneUsed []bool
	unit      *unitCtx // with FuncOptions.Params
	rel       bool     // a relocatable file: code may start at 0
	files     []string
	lang      types.Lang
}

// fnReader reads what a functions walk keeps of the subprogram, inline
// site or formal parameter e: a walk reads the scan's bytes (dieEntries);
// the tests' oracle reads debug/dwarf's entries.
type fnReader interface {
	attrs(e *Entry) (fnAttrs, error)
	attrRanges(e *Entry, a fnAttrs, buf [][2]uint64) ([][2]uint64, error)
	param(e *Entry) (param, error)
}

// funcFrame is what a walk knows of the entries at one depth.
type funcFrame struct {
	sub    Offset // enclosing out-of-line subprogram, or 0
	scope  string
	direct *subprogram       // the subprogram whose direct children these are
	inst   *types.Instance   // the concrete copy holding these entries
	site   *types.InlineSite // the innermost expansion holding them
	parent Offset            // the DIE these entries are children of
	// ns: these entries are children of the unit DIE or of a namespace
	// (a walk that loses one goes on at its sibling, see lost.go).
	ns bool
}

// walkSpan walks the DIEs of one span of .debug_info (all of it for the
// zero span) for Functions. A span of a unit whose DIEs the scan cannot
// read (see lost.go) is left out, what the walk found of it dropped.
func (f *File) walkSpan(o FuncOptions, units map[Offset]bool, sp span) (walked, error) {
	r := f.dieEntries(funcWalk)
	r.typed = true
	jump := 0
	if sp != (span{}) {
		r.sc.pos, r.sc.limit = sp.unit, sp.limit
		if sp.start > sp.unit {
			jump = sp.start
		}
	}
	fw := &funcWalker{f: f, o: o, r: r, read: r, rel: f.ELF.Type == elf.ET_REL}
	var stack []funcFrame
	var cur funcFrame
	var m walkMark
	// whole says the unit the walk is in started in this span (a span
	// may start inside a unit): at its end, the declarations nothing in
	// it refers to are dropped (see prune). The last unit of a span may
	// go on in the next one: its are kept.
	whole, prune := false, !o.Params && !o.keepDecls
	passed := sp.unit // where the bytes not yet evicted start
	for {
		e, err := r.next(o.Params && cur.direct != nil)
		if err == nil && e != nil {
			if e.Tag == TagCompileUnit || e.Tag == TagPartialUnit {
				if whole && prune {
					prune = fw.prune(len(m.unit.order), len(m.unit.sites))
					fw.closeUnit(prune, len(m.unit.order), len(m.unit.sites))
				}
				whole = jump == 0 // the unit a span starts inside is not
				m = walkMark{unit: fw.out, child: fw.out}
			} else if cur.ns && e.Tag != 0 {
				m.child, m.top, m.frame, m.depth = fw.out, e.Offset, cur, len(stack)
			}
			err = fw.step(e, units, &stack, &cur)
		}
		if errors.Is(err, errScan) {
			var ok bool
			if stack, cur, ok = fw.lose(&m, stack); !ok {
				break
			}
			continue
		}
		if err != nil {
			return fw.out, err
		}
		if e == nil {
			break
		}
		if jump > 0 {
			// This span starts at a child of its unit: the unit's
			// context is read, on to the span.
			r.sc.pos, jump = jump, 0
		}
		if r.sc != nil && r.sc.pos-passed >= evictBytes {
			f.evict(r.sc.info[passed:r.sc.pos]) // read: out of memory, if mapped
			passed = r.sc.pos
		}
	}
	return fw.out, nil
}

// walkMark is where a walk goes back to when it loses a span of a unit
// (see lost.go).
type walkMark struct {
	unit  walked    // what the walk found before the unit it is in
	child walked    // what it found before the child of the unit DIE or of a namespace it is in
	top   Offset    // that child (0 before the first)
	frame funcFrame // the frame of the child's siblings
	depth int       // how many frames the stack held under frame
}

// lose drops what the walk found in the span its scan lost step in, and
// moves the scan past the span, warning once; it returns the walk's
// frames to go on with, false when the units after cannot be found.
func (fw *funcWalker) lose(m *walkMark, stack []funcFrame) ([]funcFrame, funcFrame, bool) {
	f, sc := fw.f, fw.r.sc
	sp, lost, ok := f.lose(sc, m.top)
	if !ok {
		f.warn(lost.Error())
		fw.out = m.unit
		return stack[:0], funcFrame{}, false
	}
	f.warnLost(sp.bad, lost)
	f.damaged(sp.bad, lost)
	if sp.from == m.top {
		fw.out = m.child
	}
	if sp.from == m.top && sp.to < Offset(sc.u.end) {
		return stack[:m.depth], m.frame, true // on at the child's sibling
	}
	return stack[:0], funcFrame{}, true
}

// evictBytes is how far a walk reads .debug_info between evictions of
// what it passed (File.evict).
const evictBytes = 16 << 20

// step reads e, the next entry of the walk, in the frame cur below the
// frames of stack.
func (fw *funcWalker) step(e *Entry, units map[Offset]bool, stack *[]funcFrame, cur *funcFrame) error {
	if e.Tag == 0 {
		if len(*stack) > 0 {
			*cur, *stack = (*stack)[len(*stack)-1], (*stack)[:len(*stack)-1]
		}
		return nil
	}
	if len(*stack) > maxNesting {
		return fw.f.decodeError(e.Offset, "%v", errTooDeep)
	}
	if !e.Children && fw.passes(e.Tag) {
		return nil // most DIEs: parameters, members, types
	}
	next := *cur
	next.direct = nil
	next.parent = e.Offset
	next.ns = e.Tag == TagNamespace || e.Tag == TagModule
	if e.Tag == TagCompileUnit || e.Tag == TagPartialUnit {
		*stack = (*stack)[:0]
		*cur, next = funcFrame{}, funcFrame{ns: true}
		if units != nil && !units[e.Offset] {
			if e.Children {
				fw.r.skipUnit()
			}
			return nil
		}
		fw.enterUnit(e)
	} else if err := fw.visit(e, *cur, &next); err != nil {
		return err
	}
	if e.Children {
		*stack = append(*stack, *cur)
		*cur = next
	}
	return nil
}

// passes reports whether the walk does nothing with a DIE of tag that
// has no children.
func (fw *funcWalker) passes(tag Tag) bool {
	switch tag {
	case TagCompileUnit, TagPartialUnit, TagSubprogram, TagInlinedSubroutine,
		TagUnspecifiedParameters, tagLLVMAnnotation:
		return false
	case TagFormalParameter:
		return !fw.o.Params
	}
	return true
}

// enterUnit reads the context of the unit e heads.
func (fw *funcWalker) enterUnit(e *Entry) {
	fw.lang = langOf(e, str(e, AttrProducer))
	fw.files = fw.f.unitFiles(e)
	if fw.o.Params {
		fw.unit = fw.f.newUnitCtx(e)
	}
}

// visit reads e, an entry inside a unit, whose parent's frame is cur;
// next is the frame of e's children.
func (fw *funcWalker) visit(e *Entry, cur funcFrame, next *funcFrame) error {
	switch e.Tag {
	case TagNamespace, TagModule, TagStructType, TagClassType, TagUnionType:
		name := e.Name()
		if name == "" && e.Tag == TagNamespace {
			name = "(anonymous namespace)" // as the demangler spells it
		}
		if name != "" {
			next.scope = fw.scope(cur.scope, name)
		}
	case TagSubprogram:
		return fw.subprogram(e, cur, next)
	case TagUnspecifiedParameters:
		if s := cur.direct; s != nil {
			s.variadic = true
		}
	case tagGNUFormalParameterPack:
		// A C++ parameter pack: its formal parameters are the
		// function's.
		next.direct = cur.direct
	case TagFormalParameter:
		if s := cur.direct; s != nil && fw.o.Params {
			p, err := fw.read.param(e)
			if err != nil {
				return err
			}
			fw.params.add(s, p)
		}
	case TagInlinedSubroutine:
		return fw.inlined(e, cur, next)
	case tagLLVMAnnotation:
		// A decl tag of a subprogram or of one of its parameters.
		if kind, text, ok := annotation(e); ok && kind == annotDeclTag && fw.o.Params {
			if fw.out.tags == nil {
				fw.out.tags = map[Offset][]string{}
			}
			fw.out.tags[cur.parent] = append(fw.out.tags[cur.parent], text)
		}
	}
	return nil
}

// scope is the scope of the children of name, a namespace, class, struct
// or union in scope outer: the same string for every DIE of one name in
// a walk (C++ units each declare the classes of the headers they
// include, and most scopes hold no subprogram the walk keeps). outer is
// one of these strings, or "": the key holds where its bytes are, not
// them (a long qualified name is not hashed again for each DIE).
func (fw *funcWalker) scope(outer, name string) string {
	k := scopeKey{outer: unsafe.StringData(outer), n: len(outer), name: name}
	s, ok := fw.scopes[k]
	if !ok {
		if fw.scopes == nil {
			fw.scopes = map[scopeKey]string{}
		}
		s = outer + name + "::"
		fw.scopes[k] = s
	}
	return s
}

// scopeKey is a scope's key in funcWalker.scopes.
type scopeKey struct {
	outer *byte
	n     int
	name  string
}

// subprogram reads a DW_TAG_subprogram.
func (fw *funcWalker) subprogram(e *Entry, cur funcFrame, next *funcFrame) error {
	a, err := fw.read.attrs(e)
	if err != nil {
		return err
	}
	s := fw.subs.alloc()
	s.off, s.name, s.lang, s.scope = e.Offset, a.name, fw.lang, cur.scope
	s.linkage = a.linkageName()
	s.external = a.external
	s.inline = a.inline == dwInlDeclaredNotInlined || a.inline == dwInlDeclaredInlined
	s.origin = a.origin
	if s.origin == 0 {
		s.origin = a.spec
	}
	s.declFile, s.declLine = fileAt(fw.files, a.declFile), a.declLine
	rs, err := fw.read.attrRanges(e, a, fw.rbuf)
	fw.reuse(rs)
	if err == nil && len(rs) > 0 && (fw.rel || lowest(rs) != 0) {
		rs = fw.ranges.keep(rs)
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
	if fw.o.Params {
		s.subParams = &subParams{unit: fw.unit, typ: a.typ}
		if a.hasFrameBase && !a.frameBase.list {
			s.frameBase = a.frameBase.expr
		}
	}
	next.direct = s
	fw.out.order = append(fw.out.order, s)
	if s.inst != nil && cur.sub == 0 {
		next.sub = e.Offset
		next.inst, next.site = s.inst, nil
	}
	return nil
}

// reuse makes rs, which attrRanges returned, its next buffer when larger.
func (fw *funcWalker) reuse(rs [][2]uint64) {
	if cap(rs) > cap(fw.rbuf) {
		fw.rbuf = rs[:0]
	}
}

// inlined reads a DW_TAG_inlined_subroutine.
func (fw *funcWalker) inlined(e *Entry, cur funcFrame, next *funcFrame) error {
	a, err := fw.read.attrs(e)
	if err != nil {
		return err
	}
	site := types.InlineSite{
		CallFile:   fileAt(fw.files, a.callFile),
		CallLine:   int(a.callLine),
		CallColumn: int(a.callColumn),
	}
	if rs, err := fw.read.attrRanges(e, a, fw.rbuf); err == nil {
		site.Ranges = rs
		fw.reuse(rs)
	}
	site.EntryPC = a.entryPC(site.Ranges)
	if site.EntryPC == 0 && len(site.Ranges) > 0 {
		site.EntryPC = site.Ranges[0][0]
	}
	// Code the linker discarded keeps DWARF with addresses from 0
	// (a tombstone); in a linked file no code lives there.
	if a.origin != 0 && (site.EntryPC != 0 || fw.rel) {
		site.Parent = cur.site
		site.Ranges = fw.ranges.keep(site.Ranges)
		p := fw.sites.add(site)
		fw.out.sites = append(fw.out.sites, inlined{origin: a.origin, caller: cur.sub, site: p})
		if cur.inst != nil {
			cur.inst.Sites = append(cur.inst.Sites, p)
		}
		next.site = p
	}
	return nil
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

// closeUnit records that the unit just walked, whose subprograms and
// sites start at order[from] and sites[siteFrom], refers to no other
// when closed (prune's result): the units prune found so are
// consecutive, from the second of the span, as it prunes none once one
// refers to another.
func (fw *funcWalker) closeUnit(closed bool, from, siteFrom int) {
	c := &fw.out.closed
	if !closed {
		return
	}
	if c[1] == 0 && c[3] == 0 {
		c[0], c[2] = from, siteFrom
	}
	c[1], c[3] = len(fw.out.order), len(fw.out.sites)
}

// prune drops the subprograms of the unit just walked (from order[from:],
// its sites from sites[siteFrom:]) that no join can keep: a root of no
// chain (no origin) without code that nothing in the unit refers to, as
// most declarations of C++ member functions inside their classes. Their
// offsets go to pruned, so that a reference from another unit to one is
// found (see File.functions). A unit that refers to subprograms of others
// (DW_FORM_ref_addr: Rust, LTO) drops none, and prune returns false: the
// walk drops no more, since later units may refer to earlier ones.
func (fw *funcWalker) prune(from, siteFrom int) bool {
	subs := fw.out.order[from:]
	// The offsets side by side: a search reads no subprogram.
	offs := fw.pruneOffs[:0]
	for _, s := range subs {
		offs = append(offs, s.off)
	}
	fw.pruneOffs = offs
	used := slices.Grow(fw.pruneUsed[:0], len(subs))[:len(subs)]
	clear(used)
	fw.pruneUsed = used
	mark := func(off Offset) bool {
		i, ok := slices.BinarySearch(offs, off)
		if ok {
			used[i] = true
		}
		return ok
	}
	for _, s := range subs {
		if s.origin != 0 && !mark(s.origin) {
			return false
		}
	}
	for _, in := range fw.out.sites[siteFrom:] {
		if !mark(in.origin) {
			return false
		}
	}
	keep := func(i int) bool {
		s := subs[i]
		if s.origin == 0 && s.inst == nil && !used[i] {
			fw.out.pruned = append(fw.out.pruned, s.off)
			return false
		}
		return true
	}
	n := fw.subs.compact(subs, keep)
	if n < 0 { // not the last allocated: dropped from the order only
		n = 0
		for i, s := range subs {
			if keep(i) {
				subs[n] = s
				n++
			}
		}
	}
	clear(subs[n:])
	fw.out.order = fw.out.order[:from+n]
	return true
}
