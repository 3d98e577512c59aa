package dwarf

import (
	"io"
	"slices"
	"sync"
	"unsafe"

	"github.com/binscope/binscope/internal/cache"
)

// A file opened with Options.SavedSections reads its compressed DWARF
// sections from the index cache's "sections" entry (the one a cold
// gopahole -C writes, see saved.go), mapped, when the entry holds every
// one of them; else it inflates them, and writes the entry for the next
// run while the caller works (Close waits for it). The entry's key is
// the file's identity and the sections' names and inflated sizes, which
// the compression headers give without inflating anything. Kept for
// speed: `bash bench/before.sh main REV 9 C-timex-warm` with LoadNamed
// not asking for them in REV: 1.54 times the CPU time (9 of 9 pairs).

// layoutSections places sections of the given sizes one after another,
// by name: the "sections" entry's layout.
func layoutSections(sizes map[string]uint64) []savedSection {
	var secs []savedSection
	var off uint64
	for _, name := range slices.Sorted(mapKeys(sizes)) {
		secs = append(secs, savedSection{name: name, off: off, len: sizes[name]})
		off += sizes[name]
	}
	return secs
}

func inflatedSizes(inflated map[string][]byte) map[string]uint64 {
	sizes := map[string]uint64{}
	for name, b := range inflated {
		sizes[name] = uint64(len(b))
	}
	return sizes
}

// putSections writes the "sections" entry of secs, laid out by
// layoutSections from inflated, on another goroutine counted in wg; false
// when f has no key for it. Nothing to write is true.
func (f *File) putSections(c *cache.Cache, secs []savedSection, inflated map[string][]byte, wg *sync.WaitGroup) bool {
	if len(secs) == 0 {
		return true
	}
	skey, ok := f.sectionsKey(secs)
	if !ok {
		return false
	}
	parts := make([][]byte, len(secs))
	for i, sec := range secs {
		parts[i] = inflated[sec.name]
	}
	wg.Go(func() { c.PutParts("sections", savedVersion, skey, parts) })
	return true
}

// useSavedSections gives df every compressed DWARF section inflated from
// the "sections" entry, mapped for the rest of the run, and returns nil;
// or, when the cache has no such entry, what commits it once the DWARF is
// open: the sections are inflated into the entry, written a piece at a
// time and read through its mapping (elfx.File.InflateInto), where
// the cache can make it so (cache.Create), else on the heap and written
// after. It returns nil when the cache is off, or the entry is there but
// does not fit the file: the sections are inflated, and nothing is
// written. With Options.MapSections a missing entry is written first,
// each section inflated into it as read (none held), and then mapped.
func (f *File) useSavedSections() (save func()) {
	c := cache.Open(nil)
	secs := layoutSections(f.Debug.CompressedDWARF())
	if c == nil || len(secs) == 0 {
		return nil
	}
	skey, ok := f.sectionsKey(secs)
	if !ok {
		return nil
	}
	if f.mapSections(c, secs, skey) {
		return nil
	}
	if !f.opts.MapSections {
		return f.inflateIntoEntry(c, skey, secs)
	}
	c.PutStream("sections", savedVersion, skey, func(w io.Writer) error {
		for _, s := range secs {
			if err := f.Debug.InflateTo(s.name, w); err != nil {
				return err
			}
		}
		return nil
	})
	f.mapSections(c, secs, skey) // else (an unwritable cache) inflated in memory
	return nil
}

// mapSections gives df the sections secs from the "sections" entry of
// key skey, mapped, and reports whether the entry was there and fits.
// The pages the entry's check read are dropped from the process's memory:
// they stay in the page cache, for the readers to map again.
func (f *File) mapSections(c *cache.Cache, secs []savedSection, skey string) bool {
	blob, _, ok := c.Map("sections", savedVersion, skey)
	if !ok {
		return false
	}
	last := secs[len(secs)-1]
	if uint64(len(blob)) < last.off+last.len {
		return false
	}
	cache.Evict(blob)
	for _, s := range secs {
		f.Debug.UseInflated(s.name, blob[s.off:s.off+s.len:s.off+s.len])
	}
	f.mapped = blob
	f.sectionsSaved = true
	return true
}

// inflateIntoEntry has the sections secs inflated into a new "sections"
// entry of key skey, and returns what commits it once they are read
// whole (or else drops it); without the entry, what writes it from the
// heap (saveSections).
func (f *File) inflateIntoEntry(c *cache.Cache, skey string, secs []savedSection) (save func()) {
	last := secs[len(secs)-1]
	e, ok := c.Create("sections", savedVersion, skey, int(last.off+last.len))
	if !ok {
		return func() { f.saveSections(secs, c) }
	}
	for _, s := range secs {
		write := func(b []byte, off int64) error { return e.WriteAt(b, int64(s.off)+off) }
		if !f.Debug.InflateInto(s.name, e.Data[s.off:s.off+s.len:s.off+s.len], write) {
			e.Abort() // the sections given it stay mapped
			return nil
		}
	}
	f.mapped, f.sectionsSaved = e.Data, true
	if f.opts.sectionsAhead {
		f.aheadSecs = secs
		for _, s := range secs {
			if s.name == ".debug_info" && s.len >= aheadAtOnce {
				f.startAhead()
			}
		}
	}
	f.saving.Add(1)
	return func() {
		inflated := f.Debug.InflatedSections()
		go func() {
			if wholeSections(secs, inflated) {
				e.Commit()
			} else {
				e.Abort() // not read whole: nothing kept
			}
			// Not deferred: a panic above must end the program before
			// Close's Wait returns.
			f.saving.Done()
		}()
	}
}

// wholeSections reports whether every section of secs was inflated whole.
func wholeSections(secs []savedSection, inflated map[string][]byte) bool {
	for _, s := range secs {
		if uint64(len(inflated[s.name])) != s.len {
			return false
		}
	}
	return true
}

// A lookup by name reads the start of .debug_info first (namedPrefix),
// which often finds the name in the first units (glibc's link_map in
// its first 10 KB): inflating the sections ahead would then only cost,
// the entry being dropped before it is whole, on every run. So the
// sections inflate ahead at once only when .debug_info is large
// (aheadAtOnce), as before; else once the prefix read passes aheadAfter
// bytes of it with a name still missing (prefixAhead), or gives up
// (finishOpen). Started by the prefix read, the inflation is finished
// and the entry kept when the prefix then answers (dropStart): the next
// lookup reads the sections mapped.
var (
	aheadAtOnce = uint64(64 << 20)
	aheadAfter  = uint64(1 << 20)
)

// startAhead has the sections of the entry begun for a lookup by name
// (aheadSecs) inflated ahead, once.
func (f *File) startAhead() {
	if f.aheadSecs != nil {
		f.inflateAhead(f.aheadSecs)
		f.aheadSecs = nil
	}
}

// prefixAhead is startAhead for the prefix read (namedPrefix), which
// dropStart then waits for.
func (f *File) prefixAhead() {
	if f.aheadSecs != nil {
		f.aheadKept = f.aheadSecs
		f.startAhead()
	}
}

// finishAhead reads whole the sections prefixAhead inflates ahead, for
// the entry; false when it did not start them.
func (f *File) finishAhead() bool {
	for _, s := range f.aheadKept {
		if l, err := f.Debug.LazySection(s.name); err == nil {
			l.All() // an error drops the entry
		}
	}
	return f.aheadKept != nil
}

// inflateAhead has the sections secs inflated ahead into the entry:
// .debug_info on a goroutine of its own, the others one after another
// on another, those a scan reads first (abbreviations, strings) first.
func (f *File) inflateAhead(secs []savedSection) {
	rank := func(name string) int {
		if i := slices.Index([]string{".debug_abbrev", ".debug_str", ".debug_line_str"}, name); i >= 0 {
			return i
		}
		return 3
	}
	var rest []string
	for _, s := range secs {
		if s.name != ".debug_info" {
			rest = append(rest, s.name)
		}
	}
	slices.SortStableFunc(rest, func(a, b string) int { return rank(a) - rank(b) })
	f.Debug.InflateAhead(".debug_info")
	f.Debug.InflateAhead(rest...)
}

// evict drops the pages of b from the process's memory when b lies in
// the mapped "sections" entry (see mapSections); else it does nothing.
func (f *File) evict(b []byte) {
	if len(b) == 0 || len(f.mapped) == 0 {
		return
	}
	lo, hi := uintptr(unsafe.Pointer(&f.mapped[0])), uintptr(unsafe.Pointer(&f.mapped[len(f.mapped)-1]))
	if p := uintptr(unsafe.Pointer(&b[0])); p >= lo && p+uintptr(len(b))-1 <= hi {
		cache.Evict(b)
	}
}

// evictOver drops the pages of the mapped "sections" entry from the
// process's memory when more than limit bytes of file pages are
// resident; else, or without the entry, it does nothing.
func (f *File) evictOver(limit int) {
	if len(f.mapped) > 0 && cache.FileResident() > limit {
		cache.Evict(f.mapped)
	}
}

// saveSections writes the "sections" entry of secs once the DWARF is
// open (every section of secs inflated); Close waits for the write.
func (f *File) saveSections(secs []savedSection, c *cache.Cache) {
	inflated := f.Debug.InflatedSections()
	for _, s := range secs {
		if uint64(len(inflated[s.name])) != s.len {
			return // not read whole: nothing kept
		}
	}
	f.putSections(c, secs, inflated, &f.saving)
}
