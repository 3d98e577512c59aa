package dwarf

import (
	"errors"

	"github.com/binscope/binscope/internal/elfx"
)

// A cold lookup by name (gopahole -C) whose sections are inflated into a
// new "sections" entry outlines the file as .debug_info inflates: one
// goroutine inflates it (elfx.File.InflateAhead) while the outline reads
// the units inflated so far, a part at a time, on another core; the
// outline of the whole file is then ready when the inflation ends,
// instead of starting then. Each part is outlined as indexAll outlines
// the halves it splits a file in, over the sections' prefixes that end
// with the part (PrefixSections), and the parts are joined in order.
// The outline lags the inflation by a part or more: once .debug_info is
// inflated whole, what is left of it is outlined on two cores, the core
// that inflated it free. Kept for speed (wall time): `bash
// bench/before.sh main REV 9 C-AgentTimeoutCB-cold` (ceph-osd) with
// LoadNamed not asking for it in REV: 1.23 times the wall time (9 of 9
// pairs), CPU 1.06 (7 of 9: noise); noise on glibc's and python3.11d's
// -C rows.

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
		if info.Read() == info.Size() && info.Size()-start >= 2<<20 {
			// Inflated whole: the rest on two cores, as indexAll.
			px, err := f.outlineRest(info, start)
			if err != nil {
				return nil
			}
			if ix == nil {
				return px
			}
			return joinIndex(ix, px)
		}
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
	return f.outlineSpan(start, 0)
}

// outlineSpan outlines the units of the sections' prefixes from start to
// limit (0: their end); an error when that fails.
func (f *File) outlineSpan(start, limit uint64) (*index, error) {
	r := f.dieEntries(typeWalk)
	r.sc.pos, r.sc.limit = int(start), int(limit)
	ix, err := f.buildIndex(r, true, true)
	if err != nil || ix.out.bad || ix.lost.n > 0 {
		return nil, errNoAhead
	}
	return ix, nil
}

// outlineRest outlines the units of .debug_info (info, inflated whole)
// from start on, on two cores: the first half of what is left on this
// one, the second on another, joined in order.
func (f *File) outlineRest(info *elfx.Lazy, start uint64) (*index, error) {
	if ok, err := f.Debug.PrefixSections(info.Size(), 0); err != nil || !ok {
		return nil, errNoAhead
	}
	split, mid := start, start+(info.Size()-start)/2
	for split < mid {
		next, ok := unitEnd(f.Debug, info, split)
		if !ok {
			return nil, errNoAhead
		}
		split = next
	}
	if split >= info.Size() {
		return f.outlineSpan(start, 0)
	}
	var second *index
	var err2 error
	done := make(chan struct{})
	go func() {
		defer close(done)
		second, err2 = f.outlineSpan(split, 0)
	}()
	first, err := f.outlineSpan(start, split)
	<-done
	if err != nil || err2 != nil {
		return nil, errNoAhead
	}
	return joinIndex(first, second), nil
}

// errNoAhead: a part of the outline failed; the whole file's outline
// says why.
var errNoAhead = errors.New("outline ahead failed")
