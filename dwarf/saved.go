package dwarf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"
	"sync"

	"github.com/binscope/binscope/internal/cache"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// A C++ lookup by name (gopahole -C) outlines the whole file once, cold
// (see outline: no node kept); the index cache then keeps, keyed by the file's identity (build-id, size
// and mtime of the binary and of its debug file), where each named type
// lives and where each class is first defined (a "types" entry), and the
// file's compressed DWARF sections inflated (a "sections" entry, mapped,
// not read, by the next run; keyed by the file alone, so that every build
// of binscope shares it). A warm lookup indexes only the units that
// define the names asked for, and the units that hold the first
// definitions of the classes their types declare, as it meets them: it
// decodes a few units of a file of thousands, and inflates nothing.

// savedVersion is the format version of the "types" and "sections"
// entries: bump it when what they hold changes.
const savedVersion = 2 // 2: each name's unit list prefixed by its length

// savedIndex is a "types" entry: the whole file's index as a lookup needs
// it.
type savedIndex struct {
	sections []savedSection
	// nunits is how many units the file has.
	nunits int
	// units are the units (their indexes) each name has a listed type
	// (listedTag) in, in the order of the file, for the names asked.
	units map[string][]int
	// defs are the whole index's defs, with the tag and size of each.
	defs map[classKey]savedDef
	// f reads the units a definition is in, as it is needed; done are
	// the units indexed.
	f    *File
	done map[int]bool
	err  error // the first error indexing a unit for a definition
	// stream, when not nil, is the stream this index serves (see
	// Stream): it takes each unit's named nodes and hears which units
	// are used.
	stream *stream
}

// savedDef is the first definition of a class: its offset, tag and
// DW_AT_byte_size (nil when it has none).
type savedDef struct {
	off  Offset
	tag  Tag
	size any
}

// savedSection is where a section is in the "sections" entry.
type savedSection struct {
	name     string
	off, len uint64
}

// saver collects a "types" entry while a cold lookup passes over the
// named types, and writes the "sections" entry meanwhile.
type saver struct {
	c     *cache.Cache
	key   string
	ix    *index
	units map[string][]int32
	secs  []savedSection
	wg    sync.WaitGroup
	// saving, when set, is the file's count of entries being written,
	// the "sections" entry among them.
	saving *sync.WaitGroup
}

// savable reports whether the options leave the index as the saved one
// (every unit, classes inside others not listed).
func (o *Options) savable() bool {
	return len(o.Langs) == 0 && o.ExcludeUnits == "" && !o.FirstUnit && !o.Private
}

// savedKey is the cache and the key of f's entries; nil when the cache is
// off or the options change the index.
func (f *File) savedKey() (*cache.Cache, string) {
	if !f.opts.savable() || f.alt != nil || f.altMissing != "" {
		return nil, ""
	}
	c := cache.Open(nil)
	if c == nil {
		return nil, ""
	}
	id, err := cache.FileKey(f.ELF, f.Debug)
	if err != nil {
		return nil, ""
	}
	return c, cache.Key("dwarf types", cache.Self(), id)
}

// sectionsKey is the key of the "sections" entry holding secs of f: the
// file's identity and the sections' names and sizes, not the program's
// (every build of binscope shares the copy, hundreds of megabytes).
func (f *File) sectionsKey(secs []savedSection) (string, bool) {
	id, err := cache.FileKey(f.ELF, f.Debug)
	if err != nil {
		return "", false
	}
	parts := []string{"dwarf sections", id}
	for _, s := range secs {
		parts = append(parts, fmt.Sprintf("%s %d %d", s.name, s.off, s.len))
	}
	return cache.Key(parts...), true
}

// newSave starts saving ix (the whole file's) and the inflated sections;
// a nil *saver (the cache off) saves nothing.
func (f *File) newSave(ix *index) *saver {
	if ix.saved != nil {
		return nil // a warm lookup: the entries are there
	}
	s := f.startSave()
	if s != nil {
		s.ix = ix
	}
	return s
}

// startSave starts writing the "sections" entry, and returns the
// saver that writes the "types" entry once it is written; nil when the
// cache is off.
func (f *File) startSave() *saver {
	c, key := f.savedKey()
	if c == nil {
		return nil
	}
	s := &saver{c: c, key: key, units: map[string][]int32{}}
	if f.sectionsSaved {
		// The entry was read, or is being written (Close waits).
		s.secs = layoutSections(f.Debug.CompressedDWARF())
		s.saving = &f.saving
		return s
	}
	inflated := f.Debug.InflatedSections()
	s.secs = layoutSections(inflatedSizes(inflated))
	if !f.putSections(c, s.secs, inflated, &s.wg) {
		return nil
	}
	return s
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// add records that the listed type n is called q.
func (s *saver) add(q string, n *node) {
	if s == nil {
		return
	}
	us := s.units[q]
	if len(us) == 0 || us[len(us)-1] != n.unit {
		s.units[q] = append(us, n.unit)
	}
}

// write writes the "types" entry, once the sections are written; c
// reads the definitions' tags and sizes.
func (s *saver) write(c *converter) {
	if s == nil {
		return
	}
	defs := make(map[classKey]savedDef, len(s.ix.defs))
	for k, off := range s.ix.defs {
		var a keyAttrs
		if n := s.ix.nodes.get(off); n == nil || c.keyAttrs(n, &a) != nil {
			s.wg.Wait()
			return // an entry without it would be wrong: none
		}
		defs[k] = savedDef{off: off, tag: a.tag, size: a.size}
	}
	s.put(len(s.ix.units), func(yield func(nameKey, []int32) bool) {
		for q, us := range s.units {
			if !yield(nameKey{name: q}, us) {
				return
			}
		}
	}, len(s.units), defs)
}

// writeOutline writes the "types" entry of the outline ix, whose
// definitions si holds.
func (s *saver) writeOutline(si *savedIndex, ix *index) {
	if s == nil {
		return
	}
	s.put(len(ix.units), func(yield func(nameKey, []int32) bool) {
		for k, us := range ix.out.names {
			if !yield(k, us) {
				return
			}
		}
	}, len(ix.out.names), si.defs)
}

// put writes the "types" entry: the number of units, the units of each
// name (given as scope and name) and the first definition of each class,
// streamed to the cache as made, and put into place once the sections
// are written (a lookup that finds it finds them).
func (s *saver) put(nunits int, names iter.Seq2[nameKey, []int32], nnames int, defs map[classKey]savedDef) {
	s.c.PutStream("types", savedVersion, s.key, func(w io.Writer) error {
		var b []byte
		// flush writes b once it holds min bytes.
		flush := func(min int) error {
			if len(b) < min {
				return nil
			}
			_, err := w.Write(b)
			b = b[:0]
			return err
		}
		b = binary.AppendUvarint(b, uint64(len(s.secs)))
		for _, sec := range s.secs {
			b = appendStr(b, sec.name)
			b = binary.AppendUvarint(b, sec.off)
			b = binary.AppendUvarint(b, sec.len)
		}
		b = binary.AppendUvarint(b, uint64(nunits))
		b = binary.AppendUvarint(b, uint64(nnames))
		var list []byte
		for k, us := range names {
			b = binary.AppendUvarint(b, uint64(len(k.scope)+len(k.name)))
			b = append(append(b, k.scope...), k.name...)
			// The units, increasing, as differences: a list a lookup
			// that does not want it skips whole.
			list = list[:0]
			last := int32(0)
			for _, u := range us {
				list = binary.AppendUvarint(list, uint64(u-last))
				last = u
			}
			b = binary.AppendUvarint(b, uint64(len(list)))
			b = append(b, list...)
			if err := flush(64 << 10); err != nil {
				return err
			}
		}
		b = binary.AppendUvarint(b, uint64(len(defs)))
		for k, d := range defs {
			u := byte(0)
			if k.union {
				u = 1
			}
			size, ok := d.size.(int64)
			if !ok || size < 0 {
				size = -1
			}
			b = append(b, u)
			b = appendStr(b, k.scope)
			b = appendStr(b, k.name)
			b = binary.AppendUvarint(b, uint64(d.off))
			b = binary.AppendUvarint(b, uint64(d.tag))
			b = binary.AppendVarint(b, size)
			if err := flush(64 << 10); err != nil {
				return err
			}
		}
		if err := flush(0); err != nil {
			return err
		}
		s.wg.Wait()
		if s.saving != nil {
			s.saving.Wait()
		}
		return nil
	})
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errSaved = errors.New("corrupt types entry")

// savedReader reads a "types" entry.
type savedReader struct {
	b   []byte
	err error
}

func (r *savedReader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = errSaved, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// int reads what binary.AppendVarint wrote (zig-zag encoded).
func (r *savedReader) int() int64 {
	u := r.uint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *savedReader) bytes() []byte {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.err, r.b = errSaved, nil
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *savedReader) str() string { return string(r.bytes()) }

// decodeSaved reads a "types" entry, keeping the units of the names
// asked only.
func decodeSaved(b []byte, names []string) (*savedIndex, error) {
	r := &savedReader{b: b}
	si := &savedIndex{units: map[string][]int{}, defs: map[classKey]savedDef{}}
	for i, n := 0, r.uint(); uint64(i) < n && r.err == nil; i++ {
		si.sections = append(si.sections, savedSection{name: r.str(), off: r.uint(), len: r.uint()})
	}
	si.nunits = int(r.uint())
	for i, n := 0, r.uint(); uint64(i) < n && r.err == nil; i++ {
		q := r.bytes()
		want := ""
		for _, name := range names {
			if string(q) == name {
				want = name
			}
		}
		list := &savedReader{b: r.bytes()}
		for u := 0; want != "" && len(list.b) > 0 && list.err == nil; {
			u += int(list.uint())
			si.units[want] = append(si.units[want], u)
		}
		if list.err != nil {
			return nil, errSaved
		}
	}
	for i, n := 0, r.uint(); uint64(i) < n && r.err == nil; i++ {
		var k classKey
		if len(r.b) == 0 {
			return nil, errSaved
		}
		k.union, r.b = r.b[0] == 1, r.b[1:]
		k.scope, k.name = r.str(), r.str()
		d := savedDef{off: Offset(r.uint()), tag: Tag(r.uint())}
		if size := r.int(); size >= 0 {
			d.size = size
		}
		si.defs[k] = d
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errSaved
	}
	return si, nil
}

// savedNamed is LoadNamed from the index cache: nil, false when it holds
// no entry for the file, or not every name.
func savedNamed(ef, df *elfx.File, names []string, opts *Options) (*types.Spec, bool) {
	probe := &File{ELF: ef, Debug: df, Path: ef.Path}
	if opts != nil {
		probe.opts = *opts
	}
	c, key := probe.savedKey()
	if c == nil {
		return nil, false
	}
	data, _, ok := c.Map("types", savedVersion, key) // mapped as long as the sections
	if !ok {
		return nil, false
	}
	si, err := decodeSaved(data, names)
	if err != nil {
		return nil, false
	}
	for _, n := range names {
		if len(si.units[n]) == 0 {
			return nil, false // a short name: the whole file decides
		}
	}
	if len(si.sections) > 0 {
		// Mapped for the rest of the run: the names of the types made
		// from them point into them.
		skey, ok := probe.sectionsKey(si.sections)
		if !ok {
			return nil, false
		}
		blob, _, ok := c.Map("sections", savedVersion, skey)
		if !ok {
			return nil, false
		}
		for _, s := range si.sections {
			if s.off+s.len > uint64(len(blob)) || !df.UseInflated(s.name, blob[s.off:s.off+s.len:s.off+s.len]) {
				return nil, false
			}
		}
	}
	f, err := newFileFrom(ef, df, opts)
	if err != nil {
		return nil, false
	}
	spec, ok, err := f.savedSpec(si, names)
	if err != nil || !ok {
		return nil, false
	}
	return spec, true
}

// savedSpec converts the names' types from the units si says they are
// in, as typesExact would from the whole index.
func (f *File) savedSpec(si *savedIndex, names []string) (*types.Spec, bool, error) {
	units, err := f.unitEntries()
	if err != nil || len(units) == 0 {
		return nil, false, err
	}
	ix := &index{saved: si}
	for _, u := range units {
		lang := langOf(u.entry, str(u.entry, AttrProducer))
		ix.units = append(ix.units, unit{name: u.entry.Name(), producer: str(u.entry, AttrProducer), lang: lang, entry: u.entry})
	}
	si.f, si.done = f, map[int]bool{}
	// Only where LoadNamed would index the whole file: a name whose
	// first unit is C++ (C names are found by a top-level scan, which
	// takes the first unit's definitions alone).
	if si.nunits != len(units) {
		return nil, false, nil
	}
	for _, n := range names {
		if ix.units[si.units[n][0]].lang != types.LangCPlusPlus {
			return nil, false, nil
		}
	}
	// The names' units first, in the order of the file, as the whole
	// index lists their types.
	var want []int
	for _, n := range names {
		for _, u := range si.units[n] {
			if u >= len(units) {
				return nil, false, nil
			}
			want = append(want, u)
		}
	}
	slices.Sort(want)
	for _, u := range slices.Compact(want) {
		if err := si.index(ix, u, units[u]); err != nil {
			return nil, false, err
		}
	}
	c := newConverter(f, ix, 1024)
	only := map[string]bool{}
	for _, n := range names {
		only[n] = true
	}
	spec, err := c.spec(func(n *node, name []byte) bool { return only[n.scope+string(name)] })
	if si.err != nil {
		return nil, false, si.err
	}
	if err != nil {
		return nil, false, err
	}
	for _, n := range names {
		if _, err := spec.Find(n); err != nil {
			return nil, false, nil
		}
	}
	return spec, true, nil
}

// index indexes unit u, once.
func (si *savedIndex) index(ix *index, u int, span unitSpan) error {
	if si.done[u] {
		return nil
	}
	si.done[u] = true
	lo := len(ix.named)
	err := si.f.indexUnit(ix, u, span)
	si.stream.indexed(ix, u, lo)
	return err
}

// node is the node at off, its unit indexed first (for a DIE another unit
// refers to, DW_FORM_ref_addr); nil when no unit holds off or it is no
// node (a type local to a function: File.local indexes it).
func (si *savedIndex) node(ix *index, off Offset) *node {
	if si.err != nil {
		return nil
	}
	if u := si.unitAt(ix, off); u >= 0 && !si.indexAt(ix, u) {
		return nil
	}
	if n := ix.lookup(off); n != nil || !ix.lateKids {
		return n
	}
	if p := ix.nodes.lateAt(off); p != nil { // a part of a type indexed late
		if err := si.f.expand(ix, p); err != nil {
			si.err = err
			return nil
		}
	}
	return ix.lookup(off)
}

// unitAt is the unit that holds off, marked used by the stream; -1 for
// none.
func (si *savedIndex) unitAt(ix *index, off Offset) int {
	u := sort.Search(len(ix.units), func(i int) bool { return ix.units[i].entry.Offset > off }) - 1
	if u >= 0 {
		si.stream.use(u)
	}
	return u
}

// indexAt indexes unit u, unless it is; false when it cannot be read
// (si.err says why).
func (si *savedIndex) indexAt(ix *index, u int) bool {
	if si.done[u] {
		return true
	}
	end := Offset(0)
	if u+1 < len(ix.units) {
		end = ix.units[u+1].entry.Offset
	}
	ix.localMu.Lock()
	err := si.index(ix, u, unitSpan{entry: ix.units[u].entry, end: end})
	ix.localMu.Unlock()
	if err != nil {
		si.err = err
		return false
	}
	return true
}

// definition is the first definition of the class k in the whole file,
// its unit indexed; 0 when the file defines none (or its unit cannot be
// read: the lookup then fails and the whole file is read).
func (si *savedIndex) definition(ix *index, k classKey) Offset {
	d, ok := si.defs[k]
	off := d.off
	if !ok || si.err != nil {
		return 0
	}
	if u := si.unitAt(ix, off); u < 0 || !si.indexAt(ix, u) {
		return 0
	}
	return off
}
