package dwarf

import "errors"

// A cold lookup by name (gopahole -C) whose sections are inflated into a
// new "sections" entry outlines the file as .debug_info inflates: one
// goroutine inflates it (elfx.File.InflateAhead) while the outline reads
// the units inflated so far, a part at a time, on another core; the
// outline of the whole file is then ready when the inflation ends,
// instead of starting then. Each part is outlined as indexAll outlines
// the halves it splits a file in, over the sections' prefixes that end
// with the part (PrefixSections), and the parts are joined in order.

// aheadParts is how many parts the outline of a file read ahead takes:
// the last one is outlined after the inflation ends.
var aheadParts = uint64(8)

// outlineAhead outlines .debug_info as it inflates ahead (see above and
// File.inflateAhead), before f's DWARF data is made; nil when the file cannot be read so (an object file, type
// units, a dwz alternate file, a section inflated on the heap), or a part
// fails: the outline of the whole file then runs as before, and reports
// what failed.
func (f *File) outlineAhead() (ix *index) {
	df := f.Debug
	if !df.PrefixReadable() || df.Section(".gnu_debugaltlink") != nil {
		return nil
	}
	info, err := df.LazySection(".debug_info")
	if err != nil || !df.InflateAhead(".debug_info") {
		return nil // inflated on the heap, as read: no other core at work
	}
	part := max(info.Size()/aheadParts, 1)
	for start := uint64(0); start < info.Size(); {
		end := start
		for end < info.Size() && end-start < part {
			next, ok := unitEnd(df, info, end)
			if !ok {
				return nil
			}
			end = next
		}
		px, err := f.outlinePart(start, end)
		if err != nil {
			return nil
		}
		if ix == nil {
			ix = px
		} else {
			ix = joinIndex(ix, px)
		}
		start = end
	}
	return ix
}

// outlinePart outlines the units of .debug_info from start to end, once
// inflated that far; an error when that fails.
func (f *File) outlinePart(start, end uint64) (ix *index, err error) {
	// The scan reads the bytes alone, no line program.
	if ok, err := f.Debug.PrefixSections(end, 0); err != nil || !ok {
		return nil, errNoAhead
	}
	r := f.dieEntries(typeWalk)
	r.sc.pos = int(start)
	if ix, err = f.buildIndex(r, true, true); err != nil || ix.out.bad || ix.lost.n > 0 {
		return nil, errNoAhead
	}
	return ix, nil
}

// errNoAhead: a part of the outline failed; the whole file's outline
// says why.
var errNoAhead = errors.New("outline ahead failed")
