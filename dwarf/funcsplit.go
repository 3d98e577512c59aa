package dwarf

import (
	"github.com/binscope/binscope/internal/leb128"
	"github.com/binscope/binscope/internal/par"
)

// minSpan is the size of .debug_info a span of the functions walk has at
// least: below it, a span's own start (its unit's context) costs more
// than balancing the cores saves.
const minSpan = 128 << 10

// span is a run of .debug_info that one walk reads: from the unit whose
// header is at unit, the DIEs from start (the unit's DIE, then on at start
// when start is one of its children), up to limit. The zero span is the
// whole section.
type span struct {
	unit, start, limit int
}

// walked is what a walk over a span found, in DIE order.
type walked struct {
	order []*subprogram
	sites []inlined
	// pruned are the offsets of the subprograms the walk dropped as no
	// join keeps them (funcWalker.prune), in DIE order.
	pruned []Offset
	// closed are order[closed[0]:closed[1]] and sites[closed[2]:closed[3]],
	// those of the units prune found refer to no other: none refers to
	// a subprogram dropped from another unit (see prunedUsed).
	closed [4]int
	// tags are the decl tags of subprograms and parameters, by the
	// offset of the DIE they annotate (with FuncOptions.Params).
	tags map[Offset][]string
}

// funcSpans cuts .debug_info into at most n spans of about equal size for
// walks on n cores. A cut falls between units, or inside a unit larger than
// a span between two children of its unit DIE (a C++ program is often one
// unit): no subtree below them is cut, and the context a child of a unit
// needs is the unit's alone. Any doubt about the bytes gives one span, and
// the walk reports what it finds there. Kept for speed: `bash
// bench/before.sh main REV 9 funct-ceph-osd-cold` with one span in REV:
// 1.04 times the CPU time (9 of 9 pairs), wall time 7 of 9 pairs above;
// noise on cmd/go, glibc, python3.11d and libstdc++ (15 pairs each).
func (f *File) funcSpans(n int) []span {
	sc := f.newScan()
	if n < 2 {
		return []span{{}}
	}
	n = min(n, len(sc.info)/minSpan)
	if n < 2 {
		return []span{{}}
	}
	var cuts []span // where each span after the first starts
	for i := 1; i < n; i++ {
		target := i * len(sc.info) / n
		c, ok := sc.cutAt(target)
		if !ok {
			return []span{{}}
		}
		if c.start >= len(sc.info) || (len(cuts) > 0 && c.start <= cuts[len(cuts)-1].start) {
			continue
		}
		cuts = append(cuts, c)
	}
	spans := make([]span, 0, len(cuts)+1)
	prev := span{}
	for _, c := range cuts {
		prev.limit = c.start
		spans = append(spans, prev)
		prev = c
	}
	return append(spans, prev)
}

// cutAt finds the first place at or after target where a span can start:
// a unit's header, or a child of a unit DIE (not the null entry that ends
// its children). It scans on from where it stopped before: inside a unit
// when the last cut was.
func (s *scan) cutAt(target int) (span, bool) {
	for {
		if s.pos >= len(s.info) {
			return span{start: len(s.info)}, true
		}
		if s.pos < s.u.end && s.pos > s.u.start {
			// Among the children of the unit DIE the last cut fell in.
			at, ok, err := s.childAt(target)
			if err != nil {
				return span{}, false
			}
			if ok {
				return span{unit: s.u.start, start: at}, true
			}
			s.pos = s.u.end
			continue
		}
		unit := s.pos
		if _, err := s.header(); err != nil {
			return span{}, false
		}
		end := s.u.end
		if end <= target {
			s.pos = end
			continue
		}
		if unit >= target {
			s.pos, s.u = unit, scanHeader{}
			return span{unit: unit, start: unit}, true
		}
		// The target lies inside this unit: on over its unit DIE's
		// children to the first that starts at or after it.
		if err := s.unitTable(unit); err != nil {
			return span{}, false
		}
		if d, ok, err := s.next(); err != nil || !ok || !d.children {
			s.pos = end
		}
	}
}

// childAt moves over the children of the unit DIE being scanned to the
// first that starts at or after target; false when they end before it.
func (s *scan) childAt(target int) (int, bool, error) {
	for s.pos < target {
		c, ok, err := s.next()
		if err != nil || !ok {
			return 0, false, errScan
		}
		if c.tag == 0 {
			return 0, false, nil // the unit DIE's children ended
		}
		if err := s.skipChildren(c); err != nil {
			return 0, false, err
		}
	}
	if code, n := leb128.Uint(s.info[s.pos:s.u.end]); n <= 0 || code == 0 {
		return 0, false, nil
	}
	return s.pos, true, nil
}

// unitTable reads the header of the unit at off and its abbreviations,
// leaving the scan at the unit's DIE.
func (s *scan) unitTable(off int) error {
	s.pos = off
	return s.unit()
}

// walkSpans walks the spans on every core.
func (f *File) walkSpans(o FuncOptions, units map[Offset]bool, spans []span) ([]walked, error) {
	ws := make([]walked, len(spans))
	errs := make([]error, len(spans))
	par.Each(len(spans), 2, func(i int) {
		ws[i], errs[i] = f.walkSpan(o, units, spans[i])
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return ws, nil
}
