package dwarf

import (
	"hash/maphash"
	"maps"
	"slices"
	"sort"

	"github.com/binscope/binscope/types"
)

// A full listing of a large C++ file's types (gopahole without -C) held
// every type's node and every conversion at once: 7 GB for ceph-osd. A
// stream converts the units one after another instead, from an outline
// (the first definition of each class, for the declarations a unit
// resolves elsewhere), indexing a unit when it comes or when a
// conversion needs a class it defines, and drops what it indexed and
// converted once that passes streamNodes nodes: what it holds is bounded
// by a few units, not the file. A unit's pass indexes the types at
// namespace level without their children (members, methods, nested
// types: index.lateKids), which are indexed when a conversion or a dedup
// key first needs them: a unit indexed for the few classes another
// declares costs their nodes, not all of its own (the passes of
// ceph-osd's stream made 51 million nodes, 18 million of them
// different; now 10 million, 3 million different).

// streamNodes is how many nodes a stream's index holds (some 100 bytes
// each, with the conversions they lead to) before the units least
// recently used are dropped, down to half as many. ceph-osd's dump holds
// 500 MB at most, where 4 million nodes held 1 GB and took no less time.
var streamNodes = 1 << 20 // a variable for the tests

// A stream reads the sections it maps from the index cache all over as
// it converts (the units a conversion needs, their strings), and the
// pages it read stay resident while mapped: 290 MB of ceph-osd's between
// two drops, some 100 KB for each type listed. Every streamCheck named
// types it evicts them once more than streamResident bytes of file pages
// are resident; each eviction costs the faults that map back the pages
// still read (ceph-osd: 96 MB cost 0.8 s more system time, 128 MB none
// outside noise).
const (
	streamCheck    = 256
	streamResident = 128 << 20
)

// Stream hands each named type of the file to each, as Types lists them
// (the same order, identical definitions merged), converting a few units
// at a time (see above); it holds no Spec of them. ok is false, and
// nothing is handed, when the file cannot be streamed (a dwz alternate
// file, options that change the index, bytes the scan cannot read): the
// caller converts with Types. The Spec it returns holds no type. A
// PartialError says what was left out.
func (f *File) Stream(each func(types.Type)) (spec *types.Spec, ok bool, err error) {
	spec, _, ok, err = f.stream(each)
	return spec, ok, err
}

// stream is Stream, also returning the stream's state (for the tests).
func (f *File) stream(each func(types.Type)) (spec *types.Spec, st *stream, ok bool, err error) {
	if f.alt != nil || f.altMissing != "" || !f.opts.savable() || f.newScan() == nil {
		return nil, nil, false, nil
	}
	si, ox, ok, err := f.outline(false)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	f.evict(f.mapped) // the outline read every unit: the stream reads a few at a time
	spec = newConverter(f, ox, 0).newSpec()
	st = &stream{named: map[int][]*node{}, used: map[int]int{}}
	si.f, si.done, si.stream = f, map[int]bool{}, st
	ix := &index{saved: si, units: ox.units, lateKids: true}
	c := newConverter(f, ix, 1<<16)
	l := newLister()
	for u := range ix.units {
		st.now = u
		if err := si.index(ix, u, unitSpan{entry: ix.units[u].entry}); err != nil {
			return spec, st, true, err
		}
		named := st.named[u]
		delete(st.named, u)
		for i, n := range named {
			if i%streamCheck == 0 {
				f.evictOver(streamResident)
			}
			t, err := l.list(c, n)
			if si.err != nil {
				return spec, st, true, si.err
			}
			if err != nil {
				return spec, st, true, err
			}
			if t != nil {
				each(t)
			}
		}
		if ix.nodes.size() > streamNodes {
			st.drop(c, l)
		}
	}
	return spec, st, true, l.left.err()
}

// stream is what Stream keeps of the units its index holds: the named
// nodes of each unit not listed yet, and when each was last used (the
// unit being listed then).
type stream struct {
	named map[int][]*node
	used  map[int]int
	now   int
	drops int // how many times units were dropped
}

// indexed takes the named nodes unit u added to ix (from lo on) out of
// ix.named: ix.named holds none but while a unit is indexed.
func (st *stream) indexed(ix *index, u, lo int) {
	if st == nil {
		return
	}
	st.named[u] = slices.Clone(ix.named[lo:])
	ix.named = ix.named[:lo]
	st.used[u] = st.now
}

// use records that unit u is used by the unit being listed.
func (st *stream) use(u int) {
	if st != nil {
		st.used[u] = st.now
	}
}

// drop drops the units least recently used from c's index, down to half
// of streamNodes nodes, with every conversion made so far (the units
// kept convert again as they are needed), the lister's and the kept
// nodes' hold on the types listed (it keeps their keys and offsets) and
// the entries the kept nodes decoded; the pages read of sections mapped
// from the index cache leave the process's memory.
func (st *stream) drop(c *converter, l *lister) {
	st.drops++
	ix, si := c.ix, c.ix.saved
	byUse := slices.SortedFunc(maps.Keys(si.done), func(a, b int) int { return st.used[a] - st.used[b] })
	for _, u := range byUse {
		if ix.nodes.size() <= streamNodes/2 {
			break
		}
		if ix.nodes.drop(Offset(ix.units[u].hdr.start)) {
			delete(si.done, u)
			delete(st.named, u)
		}
	}
	c.f.evict(c.f.mapped)
	c.memo, c.pointees = make(map[Offset]types.Type, 1<<16), nil
	c.check = types.Checker{}
	l.added = map[types.Type]bool{}
	for k := range l.seen {
		l.seen[k] = nil
	}
	ix.nodes.each(func(_ Offset, n *node) {
		n.same = nil
		if n.lazy != nil {
			n.ent = nil // decoded again when needed
		}
	})
}

// lister lists the named types of an index in order, as converter.spec
// does: identical definitions merged by their dedup keys, a declaration
// resolved to a definition listed already left out.
type lister struct {
	// seen are the types listed by their dedup keys' hashes (see
	// keyHash), nil after a stream's drop.
	seen map[keyHash]types.Type
	seed [2]maphash.Seed
	// added are the types listed, and the offsets of the DIEs they were
	// converted from (a declaration's, its definition's): a stream's
	// converters give the same class as other values.
	added    map[types.Type]bool
	addedOff map[Offset]bool
	key      []byte
	left     leftOut
}

func newLister() *lister {
	return &lister{seen: map[keyHash]types.Type{}, seed: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		added: map[types.Type]bool{}, addedOff: map[Offset]bool{}}
}

// keyHash is 128 bits of hashes of a dedup key: a listing keeps the
// keys of every type it listed (ceph-osd's took 62 MB as strings), and
// two different keys have the same keyHash with a chance of 2^-128.
type keyHash [2]uint64

func (l *lister) hash(key []byte) keyHash {
	return keyHash{maphash.Bytes(l.seed[0], key), maphash.Bytes(l.seed[1], key)}
}

// list converts the named node n and returns the type to list, or nil
// when it is not listed (a tag not listed, a duplicate, a part of a type
// that failed); an error fails the whole listing.
func (l *lister) list(c *converter, n *node) (types.Type, error) {
	if !listedTag(n.tag) {
		return nil, nil
	}
	var err error
	if l.key, err = c.dedupKey(l.key[:0], n); err != nil {
		return nil, l.left.add(err)
	}
	h := l.hash(l.key)
	if t, ok := l.seen[h]; ok {
		n.same = t // as memo would, without a map entry for each (nil after Stream's drop)
		return nil, nil
	}
	t, err := c.root(n.off)
	if err != nil {
		return nil, l.left.add(err)
	}
	l.seen[h] = t
	from := n.off
	if e, err := n.entry(); err == nil {
		if def := c.definition(n, e); def != 0 {
			from = def
		}
	}
	if l.added[t] || l.addedOff[from] { // a declaration resolved to a definition already added
		return nil, nil
	}
	l.added[t], l.addedOff[from] = true, true
	if td, ok := t.(*types.Typedef); ok && td.Target != nil && td.Target.TypeName() == td.Name {
		// Go names each type twice (a typedef beside the struct or
		// interface of the same name): keep one.
		return nil, nil
	}
	return t, nil
}

// LoadEach is Load handing each type to each as Stream does, when the
// file streams (streamed true: the Spec holds no types); else the Spec
// of Load.
func LoadEach(path string, opts *Options, each func(types.Type)) (spec *types.Spec, streamed bool, err error) {
	f, err := Open(path, opts)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if spec, streamed, err = f.Stream(each); streamed {
		return spec, true, err
	}
	if err != nil {
		return nil, false, err
	}
	spec, err = f.Types()
	return spec, false, err
}

// runAt is the run that holds off (see begin); nil for none.
func (t *nodeTable) runAt(off Offset) *nodeTable {
	i := sort.Search(len(t.runs), func(i int) bool { return t.runs[i].offs[0] > off }) - 1
	if i < 0 || off >= t.runs[i].end {
		return nil
	}
	return t.runs[i]
}

// lateAt is the type at namespace level whose children, not indexed yet,
// hold off (see index.lateKids); nil for none.
func (t *nodeTable) lateAt(off Offset) *node {
	r := t.runAt(off)
	if r == nil {
		return nil
	}
	i := sort.Search(len(r.offs), func(i int) bool { return r.offs[i] > off }) - 1
	if i < 1 { // offs[0] is the unit's
		return nil
	}
	if n := r.list[i]; n.end != 0 && off < n.end {
		return n
	}
	return nil
}

// expand indexes the children of n, a type at namespace level a
// stream's index left for later (index.lateKids), as its unit's pass
// would have: their nodes join the unit's run.
func (f *File) expand(ix *index, n *node) error {
	ix.localMu.Lock()
	defer ix.localMu.Unlock()
	if n.end == 0 {
		return nil
	}
	lz := n.lazy
	if lz == nil {
		lz = &lazyEntries{f: f, ix: ix}
		ix.lazy = append(ix.lazy, lz)
	}
	r, ok := f.unitEntriesAt(ix, int(n.unit), n.off)
	if !ok {
		return f.decodeError(n.off, "no unit header before the %v entry", n.tag)
	}
	e, err := r.next(false)
	if err != nil {
		return f.infoError(n.off, err)
	}
	if e == nil || e.Offset != n.off || !e.Children {
		return f.decodeError(n.off, "not the %v entry the index saw there", n.tag)
	}
	scope := n.scope
	if name := e.Name(); name != "" {
		scope += name + "::"
	}
	b := &indexer{f: f, ix: ix, unit: n.unit, lazy: lz, r: r, stack: []frame{{}},
		cur: frame{n: n, scope: scope, lang: n.lang}, slab: ix.lateSlab}
	defer func() { ix.lateSlab = b.slab }()
	end := n.end
	n.end = 0
	for len(b.stack) > 0 {
		e, err := r.next(false)
		if err == nil && e == nil {
			err = f.decodeError(n.off, "the unit ends inside the %v entry's children", n.tag)
		} else if err != nil {
			err = f.infoError(Offset(r.sc.at), err)
		} else {
			err = b.addScanned(e)
		}
		if err != nil {
			n.kids, n.end = nil, end // no half-indexed type: each conversion of it fails alike
			return err
		}
	}
	return nil
}

// addScanned adds e, the DIE b.r returned last, skipping its children
// when add asks.
func (b *indexer) addScanned(e *Entry) error {
	skip, err := b.add(e, b.r.scratch(e))
	if err != nil {
		return err
	}
	if skip && e.Children {
		if err := b.r.skipChildren(); err != nil {
			return b.f.infoError(Offset(b.r.sc.at), err)
		}
	}
	return nil
}
