package dwarf

import "github.com/binscope/binscope/types"

// A functions walk of a large C++ program reads millions of subprograms,
// inline sites and address ranges. It allocates them in shared arrays
// (slabs) rather than one at a time: fewer objects for the collector, and
// the subprograms a unit's walk drops (see funcWalker.prune) leave their
// slots to the next unit's instead of garbage. Kept for speed: `bash
// bench/before.sh main REV 15 funct-libstdc++-cold` with one allocation
// per record in REV: 1.04 times the CPU time (11 of 14 pairs).

// slabLen is how many records one array of a slab holds.
const slabLen = 512

// subSlab holds a walk's subprograms in arrays of slabLen: the n-th
// allocated is in chunks[n/slabLen][n%slabLen].
type subSlab struct {
	chunks [][]subprogram
	n      int
}

// alloc is a zeroed subprogram in the next free slot.
func (sl *subSlab) alloc() *subprogram {
	c := sl.n / slabLen
	if c == len(sl.chunks) {
		sl.chunks = append(sl.chunks, make([]subprogram, slabLen))
	}
	s := &sl.chunks[c][sl.n%slabLen]
	sl.n++
	*s = subprogram{} // a slot compact freed may hold a dropped one
	return s
}

func (sl *subSlab) at(i int) *subprogram { return &sl.chunks[i/slabLen][i%slabLen] }

// compact keeps, of subs (the last len(subs) subprograms allocated, in
// allocation order), those keep says, moved to the first slots they
// occupied, and frees the slots after them; subs[:n] are then the kept
// ones at their new places. It returns n, or -1, moving nothing, when
// subs are not the last subprograms allocated.
func (sl *subSlab) compact(subs []*subprogram, keep func(i int) bool) int {
	base := sl.n - len(subs)
	if base < 0 || (len(subs) > 0 && subs[0] != sl.at(base)) {
		return -1
	}
	n := 0
	for i, s := range subs {
		if !keep(i) {
			continue
		}
		dst := sl.at(base + n)
		if dst != s {
			*dst = *s
		}
		subs[n] = dst
		n++
	}
	for i := base + n; i < sl.n; i++ {
		*sl.at(i) = subprogram{} // nothing dropped stays reachable
	}
	sl.n = base + n
	return n
}

// siteSlab holds a walk's inline sites, never freed.
type siteSlab struct{ free []types.InlineSite }

// add is a copy of site in the slab.
func (sl *siteSlab) add(site types.InlineSite) *types.InlineSite {
	if len(sl.free) == 0 {
		sl.free = make([]types.InlineSite, slabLen)
	}
	p := &sl.free[0]
	*p = site
	sl.free = sl.free[1:]
	return p
}

// rangeSlab holds the address ranges of a walk's instances and sites.
type rangeSlab struct{ free [][2]uint64 }

// keep is a copy of rs in the slab (nil for none), of capacity its
// length: an append to it moves it.
func (sl *rangeSlab) keep(rs [][2]uint64) [][2]uint64 {
	if len(rs) == 0 {
		return nil
	}
	if cap(sl.free)-len(sl.free) < len(rs) {
		sl.free = make([][2]uint64, 0, max(4*slabLen, len(rs)))
	}
	n := len(sl.free)
	sl.free = append(sl.free, rs...)
	return sl.free[n:len(sl.free):len(sl.free)]
}

// paramSlab holds the parameters of a walk's subprograms in shared
// arrays, where each subprogram's are contiguous (they are consecutive
// children of its DIE): one allocation for many subprograms instead of a
// growing slice each.
type paramSlab struct {
	// free is the unused rest of the current array, from where the
	// owner's parameters start: they are free[:len(owner.params)].
	free  []param
	owner *subprogram
}

// add adds p to s's parameters (see addParam).
func (sl *paramSlab) add(s *subprogram, p param) {
	if sl.owner != s {
		if o := sl.owner; o != nil {
			sl.free = sl.free[len(o.params):len(o.params)]
			o.params = o.params[:len(o.params):len(o.params)] // an append of o's moves them
		}
		sl.owner = nil
		if len(s.params) == 0 {
			if cap(sl.free) < 8 {
				sl.free = make([]param, 0, 1024)
			}
			s.params, sl.owner = sl.free[:0], s
		}
	}
	s.params = addParam(s.params, p)
	if sl.owner == s && &s.params[0] != &sl.free[:1][0] {
		sl.owner = nil // outgrew the array: the array's rest is the next one's
	}
}
