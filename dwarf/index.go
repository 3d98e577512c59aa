package dwarf

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/binscope/binscope/types"
)

// node is an indexed DIE: a type or a part of one (member, enumerator,
// subrange, parameter, variant part, variant), with its children.
type node struct {
	off Offset
	tag Tag
	// ent is the DIE, decoded by the pass that built the index or, in an
	// index built over a scan, on first use (see entry).
	ent   *Entry
	lazy  *lazyEntries
	kids  []*node
	scope string // qualifier of the enclosing namespaces and types: "layouts::inner::"
	lang  types.Lang
	top   bool // declared at namespace level, not nested in a type
	unit  int32
	// end, when not 0, is where the DIE's children end, which a stream's
	// index has not indexed yet (see index.expand).
	end Offset
	// same is the type converted from an identical definition in an
	// earlier unit (see converter.spec), which n converts to.
	same types.Type
}

// unit is what the index keeps of a compile unit.
type unit struct {
	name     string
	producer string
	lang     types.Lang
	entry    *Entry
	// hdr is the unit's header as a scan read it (hdr.table nil when
	// the index was not built over a scan): dedup keys read DIEs' bytes
	// through it.
	hdr scanHeader
}

// index is the result of one pass over .debug_info.
type index struct {
	// localMu is held while a local type is indexed (see File.local),
	// read-held while a converter looks a node up: converters run on
	// every core while parameters are filled.
	localMu   sync.RWMutex
	localSlab []node // nodes for local types (see File.local), under localMu
	nodes     nodeTable
	named     []*node // named types at namespace level, in DIE order
	// defs maps a C++ class's qualified name (defKeyOf) to its first
	// definition, for the declarations of units that do not define it
	// (see converter.definition).
	defs  map[classKey]Offset
	units []unit
	lazy  []*lazyEntries // the decoders of its nodes (one per pass that built it)
	// saved, for an index of some units only, is the whole file's index
	// the cache kept: it gives the definitions (see savedIndex).
	saved *savedIndex
	// lost counts the spans of units left out, their DIEs unreadable;
	// spans are those spans, in section order (see lost.go).
	lost  leftOut
	spans []lostSpan
	// out, in an outline (see File.outline), keeps what a saved index
	// needs in place of the nodes.
	out *outline
	// lateKids: the children of a type at namespace level are indexed
	// when first needed (see index.expand), not with their unit.
	lateKids bool
	lateSlab []node // nodes for the children indexed late, under localMu
}

// nodeTable finds indexed DIEs by offset: a pass over .debug_info adds
// them in increasing order, kept in slices searched by bisection (a map of
// every type DIE of a large file costs more to fill than all lookups
// save); DIEs indexed later, out of order (local types), go to a map. An
// index of some units, each indexed whole when needed in any order (see
// savedIndex), keeps each unit's nodes in a run of their own (begin).
type nodeTable struct {
	offs  []Offset
	list  []*node
	extra map[Offset]*node
	// runs are the units' runs, by offset; cur is the one begun last.
	// A run's end is its unit's.
	runs []*nodeTable
	cur  *nodeTable
	end  Offset
}

// begin starts the run of the unit from off to end, where put appends
// the nodes of the unit that follow in increasing order.
func (t *nodeTable) begin(off, end Offset) {
	r := &nodeTable{offs: []Offset{off}, list: []*node{nil}, end: end} // off is the unit's: no node
	i := sort.Search(len(t.runs), func(i int) bool { return t.runs[i].offs[0] > off })
	t.runs = slices.Insert(t.runs, i, r)
	t.cur = r
}

// drop drops the run begun at off; false when there is none.
func (t *nodeTable) drop(off Offset) bool {
	i := sort.Search(len(t.runs), func(i int) bool { return t.runs[i].offs[0] >= off })
	if i == len(t.runs) || t.runs[i].offs[0] != off {
		return false
	}
	if t.cur == t.runs[i] {
		t.cur = nil
	}
	t.runs = slices.Delete(t.runs, i, i+1)
	return true
}

func (t *nodeTable) put(off Offset, n *node) {
	if r := t.cur; r != nil && off > r.offs[len(r.offs)-1] && off < r.end {
		r.offs = append(r.offs, off)
		r.list = append(r.list, n)
		return
	}
	if r := t.runAt(off); r != nil { // indexed late (index.expand): dropped with its run
		r.put(off, n)
		return
	}
	if k := len(t.offs); t.cur == nil && (k == 0 || off > t.offs[k-1]) {
		t.offs = append(t.offs, off)
		t.list = append(t.list, n)
		return
	}
	i := sort.Search(len(t.offs), func(i int) bool { return t.offs[i] >= off })
	if i < len(t.offs) && t.offs[i] == off {
		t.list[i] = n
		return
	}
	if t.extra == nil {
		t.extra = map[Offset]*node{}
	}
	t.extra[off] = n
}

func (t *nodeTable) get(off Offset) *node {
	if len(t.runs) > 0 {
		if i := sort.Search(len(t.runs), func(i int) bool { return t.runs[i].offs[0] > off }) - 1; i >= 0 {
			if n := t.runs[i].get(off); n != nil {
				return n
			}
		}
	}
	i := sort.Search(len(t.offs), func(i int) bool { return t.offs[i] >= off })
	if i < len(t.offs) && t.offs[i] == off {
		return t.list[i]
	}
	return t.extra[off]
}

// lookup is the node at off, read while File.local may be adding one.
func (ix *index) lookup(off Offset) *node {
	ix.localMu.RLock()
	defer ix.localMu.RUnlock()
	return ix.nodes.get(off)
}

// size is the number of nodes.
func (t *nodeTable) size() int {
	n := len(t.list) + len(t.extra)
	for _, r := range t.runs {
		n += len(r.list) - 1 + len(r.extra)
	}
	return n
}

// each calls fn with every node and its offset.
func (t *nodeTable) each(fn func(off Offset, n *node)) {
	for i, n := range t.list {
		fn(t.offs[i], n)
	}
	for _, r := range t.runs {
		for i, n := range r.list[1:] {
			fn(r.offs[i+1], n)
		}
		for off, n := range r.extra {
			fn(off, n)
		}
	}
	for off, n := range t.extra {
		fn(off, n)
	}
}

// maxNesting bounds the depth of DIE trees the index follows.
const maxNesting = 256

func isTypeTag(t Tag) bool {
	switch t {
	case TagBaseType, TagPointerType, TagReferenceType, TagRvalueReferenceType,
		TagTypedef, TagConstType, TagVolatileType, TagRestrictType, TagAtomicType,
		TagArrayType, TagEnumerationType, TagStructType, TagUnionType, TagClassType,
		TagSubroutineType, TagUnspecifiedType, TagPtrToMemberType, tagImmutableType:
		return true
	}
	return false
}

// tagImmutableType is DW_TAG_immutable_type (DWARF 5, D's immutable).
const tagImmutableType Tag = 0x4b

// isPartTag reports the tags that belong to the type that encloses them.
func isPartTag(t Tag) bool {
	switch t {
	case TagMember, TagEnumerator, TagSubrangeType, TagFormalParameter,
		TagUnspecifiedParameters, TagInheritance, TagVariantPart, TagVariant,
		TagTemplateTypeParameter, TagTemplateValueParameter, tagLLVMAnnotation:
		return true
	}
	return false
}

type frame struct {
	n     *node // the type the children belong to, or nil
	scope string
	lang  types.Lang
	skip  bool // a unit filtered out by language
}

// indexWith indexes the types of the DIEs r scans, in one pass, each
// type's DIE decoded when a conversion first needs it. A span of a unit
// whose DIEs the scan cannot read (see lost.go) is left out, with what
// the pass indexed of it, and counted in the index's lost.
func (f *File) indexWith(r *dieEntries) (*index, error) { return f.buildIndex(r, false, false) }

// buildIndex is indexWith, or with outlined what an outline keeps (see
// File.outline; with names, the units of each name).
func (f *File) buildIndex(r *dieEntries, outlined, names bool) (*index, error) {
	b := &indexer{f: f, ix: &index{}}
	b.lazy = &lazyEntries{f: f, ix: b.ix}
	b.ix.lazy = []*lazyEntries{b.lazy}
	if outlined {
		b.ix.out = &outline{shapes: map[Offset]savedDef{}}
		if names {
			b.ix.out.names = map[nameKey][]int32{}
		}
	} else {
		// Room for the nodes ahead: C units hold a type or a part in
		// every 12 bytes or more (glibc's 12, a debug Python's 27, Go's
		// 150), so the slices are not copied as they grow.
		end := len(r.sc.info)
		if r.sc.limit > 0 {
			end = r.sc.limit
		}
		n := max(end-r.sc.pos, 0) / 12
		b.ix.nodes.offs, b.ix.nodes.list = make([]Offset, 0, n), make([]*node, 0, n)
	}
	b.r = r
	// The index before the unit, and before the child of its unit DIE
	// or of a namespace, being read; that child's frame, and depth.
	var unitKept, kept indexMark
	var top frame
	depth := 0
	for {
		e, err := r.next(false)
		if err == nil && e != nil {
			if e.Tag == TagCompileUnit || e.Tag == TagPartialUnit {
				kept = b.ix.mark(e.Offset)
				unitKept = kept
			} else if len(b.stack) > 0 && b.cur.n == nil && e.Tag != 0 {
				kept, top, depth = b.ix.mark(e.Offset), b.cur, len(b.stack)
			}
			err = b.step(e, r)
		}
		if errors.Is(err, errScan) {
			if outlined {
				b.ix.out.bad = true // what it kept of the unit is not dropped
			}
			stack := b.stack
			b.stack, b.cur, b.late = stack[:0], frame{}, nil
			sp, lost, ok := f.lose(r.sc, kept.unit)
			if err := b.ix.lost.add(lost); err != nil {
				return nil, err
			}
			if !ok {
				b.ix.drop(unitKept)
				break
			}
			if sp.from == kept.unit {
				b.ix.drop(kept)
			}
			f.damaged(sp.bad, lost)
			b.ix.spans = append(b.ix.spans, sp)
			if sp.from == kept.unit && sp.to < Offset(r.sc.u.end) {
				b.stack, b.cur = stack[:depth], top // on at top's sibling
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
	}
	return b.ix, nil
}

// step indexes e, the DIE r returned last.
func (b *indexer) step(e *Entry, r *dieEntries) error {
	skip, err := b.add(e, r.scratch(e))
	if err != nil {
		return err
	}
	if e.Tag == TagCompileUnit || e.Tag == TagPartialUnit {
		b.ix.units[len(b.ix.units)-1].hdr = r.sc.u
	}
	if skip && e.Children {
		return r.skipChildren()
	}
	return nil
}

// indexMark is how much of an index a pass had built when a unit, or a
// child of a unit DIE, started (see drop).
type indexMark struct {
	unit         Offset
	nodes, named int
}

func (ix *index) mark(unit Offset) indexMark {
	return indexMark{unit: unit, nodes: len(ix.nodes.offs), named: len(ix.named)}
}

// drop leaves out what the pass indexed after m: the nodes of a span of
// a unit it could not read whole.
func (ix *index) drop(m indexMark) {
	ix.nodes.offs, ix.nodes.list = ix.nodes.offs[:m.nodes], ix.nodes.list[:m.nodes]
	ix.named = ix.named[:m.named]
	for k, off := range ix.defs {
		if off >= m.unit {
			delete(ix.defs, k)
		}
	}
}

// lazyEntries decodes the DIEs of an index built over a scan, one at a
// time, when a conversion first reads one.
type lazyEntries struct {
	f  *File
	mu sync.Mutex
	r  *dieReader // made when first needed
	ix *index     // the index holding the nodes
	// de decodes a DIE from the scan's bytes (see quickEntry), in the
	// unit at de.sc.u.start.
	de *dieEntries
}

// entry is n's DIE. A DIE the reader cannot decode, or that is not the
// one the scan saw, is a *elfx.DecodeError naming its offset.
func (n *node) entry() (*Entry, error) {
	if n.lazy == nil {
		return n.ent, nil
	}
	l := n.lazy
	l.mu.Lock()
	defer l.mu.Unlock()
	if n.ent == nil {
		if e, ok := l.quickEntry(n); ok {
			n.ent = e
			return e, nil
		}
		if l.r == nil {
			l.r = l.f.dieReader()
		}
		l.r.Seek(n.off)
		e, err := l.r.Next()
		if err != nil || e == nil || e.Offset != n.off || e.Tag != n.tag {
			if err == nil {
				err = fmt.Errorf("not the %v entry the index saw there", n.tag)
			}
			return nil, l.f.decodeError(n.off, "cannot decode the %v entry: %v", n.tag, err)
		}
		n.ent = e
	}
	return n.ent, nil
}

// indexer builds an index from DIEs in .debug_info order.
type indexer struct {
	f     *File
	ix    *index
	lazy  *lazyEntries // set when the entries come from a scan
	slab  []node       // nodes to hand out
	one   node         // the node an outline reuses
	stack []frame
	cur   frame
	unit  int32 // the unit the DIEs belong to
	local bool  // DIEs inside a function: their types are not listed in named
	// late is the type whose children add asked to skip, to be indexed
	// late (index.lateKids): the pass records their end.
	late *node
	// r is the pass's source of DIEs, whose scratch entries' flags it
	// reads (nil for local types).
	r *dieEntries
}

// add records e, and reports whether its children are to be skipped: those
// of subprograms, variables, lexical blocks and call sites, and of units
// filtered out by language. A null entry ends the current parent.
func (b *indexer) add(e *Entry, scratch bool) (skip bool, err error) {
	ix := b.ix
	if e.Tag == 0 {
		if len(b.stack) > 0 {
			b.cur = b.stack[len(b.stack)-1]
			b.stack = b.stack[:len(b.stack)-1]
		}
		return false, nil
	}
	if len(b.stack) > maxNesting {
		return false, b.f.decodeError(e.Offset, "%v", errTooDeep)
	}
	push := func(fr frame) {
		if e.Children {
			b.stack = append(b.stack, b.cur)
			b.cur = fr
		}
	}
	cur := b.cur
	switch {
	case e.Tag == TagCompileUnit || e.Tag == TagPartialUnit:
		b.stack = b.stack[:0]
		u := unit{
			name:     e.Name(),
			producer: str(e, AttrProducer),
			entry:    e,
		}
		u.lang = langOf(e, u.producer)
		ix.units = append(ix.units, u)
		b.unit = int32(len(ix.units) - 1)
		b.cur = frame{lang: u.lang}
		if !b.f.wantLang(u.lang) || (b.f.opts.ExcludeUnits != "" && strings.HasPrefix(u.name, b.f.opts.ExcludeUnits)) ||
			(b.f.opts.FirstUnit && len(ix.units) > 1) {
			return true, nil
		}
		if e.Children {
			b.stack = append(b.stack, frame{})
		}
	case e.Tag == TagNamespace || e.Tag == TagModule:
		name := e.Name()
		if name == "" {
			name = "(anonymous namespace)"
		}
		push(frame{scope: cur.scope + name + "::", lang: cur.lang})
	case isTypeTag(e.Tag):
		n := b.node(e, scratch)
		n.scope, n.lang, n.top, n.unit = cur.scope, cur.lang, cur.n == nil, b.unit
		if ix.lateKids && cur.n == nil && e.Children && !b.local {
			b.late = n // its children are skipped, their end recorded
		}
		if ix.out != nil {
			if cur.n == nil && hasName(e) && !b.local {
				b.outlineName(n, e, scratch)
			}
		} else if ix.nodes.put(e.Offset, n); cur.n != nil {
			cur.n.kids = append(cur.n.kids, n)
			if b.f.opts.Private && hasName(e) && !b.local {
				ix.named = append(ix.named, n) // a class defined inside another
			}
		} else if hasName(e) && !b.local {
			ix.named = append(ix.named, n)
		}
		b.define(e, n, scratch)
		if b.late == n {
			return true, nil
		}
		if e.Children {
			scope := cur.scope
			if name := e.Name(); name != "" {
				scope += name + "::"
			}
			push(frame{n: n, scope: scope, lang: cur.lang})
		}
	case isPartTag(e.Tag) && cur.n != nil:
		n := b.part(e, cur, scratch)
		push(frame{n: n, scope: cur.scope, lang: cur.lang})
	case e.Tag == TagSubprogram && cur.n != nil && b.f.opts.Methods && cur.lang == types.LangCPlusPlus && ix.out == nil:
		// A member function a class declares: a part of the class,
		// with its parameters.
		n := b.part(e, cur, scratch)
		push(frame{n: n, scope: cur.scope, lang: cur.lang})
	default:
		// Subprograms, variables, lexical blocks, call sites: not
		// types. Their children are skipped unread where the producer
		// left sibling links.
		return true, nil
	}
	return false, nil
}

// part is a new node for e, a part of cur.n.
func (b *indexer) part(e *Entry, cur frame, scratch bool) *node {
	n := b.node(e, scratch)
	n.scope, n.lang, n.unit = cur.scope, cur.lang, b.unit
	if b.ix.out == nil {
		b.ix.nodes.put(e.Offset, n)
		cur.n.kids = append(cur.n.kids, n)
	}
	return n
}

// define records e in ix.defs when it defines a C++ struct, class or
// union: the first definition of a name, in DIE order.
func (b *indexer) define(e *Entry, n *node, scratch bool) {
	if b.local || b.ix.saved != nil || n.lang != types.LangCPlusPlus || (e.Tag != TagStructType && e.Tag != TagClassType && e.Tag != TagUnionType) {
		return // (an index of some units takes the definitions from the saved one)
	}
	name, ok := e.Str(AttrName)
	if !ok {
		return
	}
	decl, ok := false, true
	if scratch {
		decl, ok = b.r.declaration()
	} else {
		decl = e.Declaration()
	}
	if !ok || decl {
		return // a declaration, or a flag the scan cannot read: not recorded
	}
	k := defKeyOf(e.Tag, n.scope, name)
	if b.ix.defs == nil {
		b.ix.defs = map[classKey]Offset{}
	}
	if _, dup := b.ix.defs[k]; !dup {
		b.ix.defs[k] = e.Offset
		if b.ix.out != nil {
			b.outlineShape(e, scratch)
		}
	}
}

// node is a new node for e; a scratch entry of a scan is decoded later.
func (b *indexer) node(e *Entry, scratch bool) *node {
	if b.ix.out != nil { // an outline keeps no node: one will do
		b.one = node{off: e.Offset, tag: e.Tag}
		return &b.one
	}
	// Nodes come from slabs: a large file has a million of them.
	if len(b.slab) == 0 {
		b.slab = make([]node, 1024)
	}
	n := &b.slab[0]
	b.slab = b.slab[1:]
	n.off, n.tag = e.Offset, e.Tag
	if scratch {
		n.lazy = b.lazy
	} else {
		n.ent = e
	}
	return n
}

// local indexes the type DIE at off, which the index passed over: a type
// declared inside a function (a C struct local to it, a C++ lambda's
// closure) that a type outside refers to. It returns nil when off is not
// the offset of a type DIE.
func (f *File) local(ix *index, off Offset) (*node, error) {
	ix.localMu.Lock()
	defer ix.localMu.Unlock()
	if n := ix.nodes.get(off); n != nil {
		return n, nil // indexed by another converter meanwhile
	}
	u := sort.Search(len(ix.units), func(i int) bool { return ix.units[i].entry.Offset > off }) - 1
	if u < 0 {
		return nil, nil
	}
	r, ok := f.unitEntriesAt(ix, u, off)
	if !ok {
		return nil, nil
	}
	// Local types take their nodes from one slab per index, not one per
	// type: a C++ program indexes thousands (lambdas' closure types).
	b := &indexer{f: f, ix: ix, unit: int32(u), local: true, cur: frame{lang: ix.units[u].lang}, slab: ix.localSlab, r: r}
	if len(ix.lazy) == 0 {
		ix.lazy = append(ix.lazy, &lazyEntries{f: f, ix: ix})
	}
	b.lazy = ix.lazy[0]
	defer func() { ix.localSlab = b.slab }()
	for first := true; first || len(b.stack) > 0; first = false {
		e, err := r.next(false)
		if err != nil {
			return nil, f.infoError(Offset(r.sc.at), err)
		}
		if e == nil {
			return nil, nil
		}
		if first && (e.Offset != off || !isTypeTag(e.Tag)) {
			return nil, nil
		}
		skip, err := b.add(e, r.scratch(e))
		if err != nil {
			return nil, err
		}
		if skip && e.Children {
			if err := r.skipChildren(); err != nil {
				return nil, f.infoError(Offset(r.sc.at), err)
			}
		}
	}
	return ix.nodes.get(off), nil
}

// unitEntriesAt is a scan of the DIEs of unit u of ix from the one at
// off; false when the unit's header cannot be found.
func (f *File) unitEntriesAt(ix *index, u int, off Offset) (*dieEntries, bool) {
	r := f.dieEntries(typeWalk)
	hdr := ix.units[u].hdr
	if hdr.table == nil { // a unit the index did not read
		if !r.sc.seekUnit(int(ix.units[u].entry.Offset)) || r.sc.unit() != nil {
			return nil, false
		}
		hdr = r.sc.u
	}
	if int(off) < hdr.start || int(off) >= hdr.end {
		return nil, false
	}
	r.sc.u, r.sc.pos, r.unitAt = hdr, int(off), hdr.start
	if base, ok := ix.units[u].entry.Int(AttrStrOffsetsBase); ok {
		r.strs.base = base
	}
	return r, true
}

func hasName(e *Entry) bool {
	_, ok := e.Str(AttrName)
	return ok
}

func str(e *Entry, a Attr) string {
	s, _ := e.Str(a)
	return s
}
