package dwarf

import (
	"errors"
	"slices"
)

// A walk that meets a DIE it cannot read (errScan) keeps the DIEs before
// it, as readelf and llvm-dwarfdump print them, and loses a span of its
// unit: from the child of the unit DIE or of a namespace that holds the
// DIE (its types or functions would be read in part) to where that
// child's DW_AT_sibling says the next one starts, or to the unit's end
// when nothing says where the walk can go on (a DIE's size is known only
// by reading it). A
// reference into a lost span is refused (see index.lostAt): the type or
// parameter that needs it is left out or unknown, never read from bytes
// the walk could not place.

// lostSpan is a span of a unit a walk lost: the DIEs from the one at from
// to the one at to (excluded), for the DIE at bad it could not read.
type lostSpan struct {
	from, to, bad Offset
}

// lose moves sc past the span it lost step in (errScan), and returns the
// span and the error naming the DIE it could not read. top is the offset
// of the child of the unit DIE or of a namespace the walk last read (0
// for none yet in this unit): the span starts there when that child holds the DIE (or may),
// and the walk drops what it found from there; else at the DIE, the walk
// keeping what it found. ok is false when what is lost is a unit's
// header: the units after it cannot be found.
func (f *File) lose(sc *scan, top Offset) (sp lostSpan, err error, ok bool) {
	if sc.at < sc.u.start || sc.at >= sc.u.end {
		return lostSpan{}, f.decodeError(Offset(sc.at), "unreadable unit header"), false
	}
	bad, end := Offset(sc.at), Offset(sc.u.end)
	if sc.at == sc.u.start {
		sc.pos = sc.u.end
		err = f.decodeError(bad, "unreadable abbreviations (the unit at %#x)", sc.u.start)
		return lostSpan{from: bad, to: end, bad: bad}, err, true
	}
	f.lostIn(Offset(sc.u.first), bad)
	sp = lostSpan{from: bad, to: end, bad: bad}
	if top > Offset(sc.u.first) && top <= bad {
		switch to, ok := sc.after(int(top)); {
		case !ok:
			sp.from = top
		case to > int(bad) && to <= sc.u.end:
			sp.from, sp.to = top, Offset(to)
		case to > int(bad):
			sp.from = top // a sibling outside the unit
		}
	}
	sc.pos = int(sp.to)
	err = f.decodeError(bad, "unreadable DIE: the DIEs from %#x to %#x of the unit at %#x are left out",
		sp.from, sp.to, sc.u.start)
	return sp, err, true
}

// after is where the DIE at top ends: after its last
// byte when it has no children, else at its DW_AT_sibling; false when the
// DIE at top does not read, or has children and no sibling.
func (s *scan) after(top int) (int, bool) {
	pos, limit := s.pos, s.limit
	defer func() { s.pos, s.limit = pos, limit }()
	s.pos, s.limit = top, 0
	d, ok, err := s.next()
	if err != nil || !ok || d.tag == 0 {
		return 0, false
	}
	if d.children {
		return s.sibling(d)
	}
	return s.pos, true
}

// scanLost is the error naming where the scan sc lost step (errScan).
func (f *File) scanLost(sc *scan) error {
	if sc.at < sc.u.start || sc.at >= sc.u.end {
		return f.decodeError(Offset(sc.at), "unreadable unit header")
	}
	if sc.at == sc.u.start {
		return f.decodeError(Offset(sc.at), "unreadable abbreviations (the unit at %#x)", sc.u.start)
	}
	return f.decodeError(Offset(sc.at), "unreadable DIE (the unit at %#x)", sc.u.start)
}

// lostAt is the span the index lost that holds the DIE at off.
func (ix *index) lostAt(off Offset) (lostSpan, bool) {
	i, _ := slices.BinarySearchFunc(ix.spans, off, func(sp lostSpan, off Offset) int {
		switch {
		case sp.to <= off:
			return -1
		case sp.from > off:
			return 1
		}
		return 0
	})
	if i < len(ix.spans) && ix.spans[i].from <= off && off < ix.spans[i].to {
		return ix.spans[i], true
	}
	return lostSpan{}, false
}

// local is the node of the type DIE at off, which the index did not list
// (see File.local); a DIE in a span the index lost is refused, with an
// error naming it.
func (c *converter) local(off Offset) (*node, error) {
	if sp, lost := c.ix.lostAt(off); lost {
		err := c.f.decodeError(off, "%w with the unreadable one at %#x", errLostRef, sp.bad)
		c.f.damaged(off, err)
		return nil, err
	}
	return c.f.local(c.ix, off)
}

// errLostRef is the error of a reference into a span a walk lost.
var errLostRef = errors.New("a reference to a DIE left out")

// damaged records err, a record of the file left out or read in part, for
// Damage; once for each offset.
func (f *File) damaged(off Offset, err error) {
	f.damageMu.Lock()
	defer f.damageMu.Unlock()
	if f.damagedAt[off] {
		return
	}
	if f.damagedAt == nil {
		f.damagedAt = map[Offset]bool{}
	}
	f.damagedAt[off] = true
	_ = f.damage.add(err)
}

// warnLost gives err, naming the DIE at bad that a walk could not read,
// to Options.Warn once however many walks lose step there (a lookup
// walks the units again when the first walk missed the function).
func (f *File) warnLost(bad Offset, err error) {
	f.damageMu.Lock()
	first := !f.warnedAt[bad]
	if first {
		if f.warnedAt == nil {
			f.warnedAt = map[Offset]bool{}
		}
		f.warnedAt[bad] = true
	}
	f.damageMu.Unlock()
	if first {
		f.warn(err.Error())
	}
}

// Damage is nil when the walks over the file's DIEs read every one they
// met, else a *PartialError: the first DIE they could not read (a
// *elfx.DecodeError naming its section and offset) and how many records
// they left out or read in part (a unit's DIEs lost, a reference into
// them refused), for a command that prints what it read, then says what
// it left out.
func (f *File) Damage() error {
	f.damageMu.Lock()
	defer f.damageMu.Unlock()
	return f.damage.err()
}

// lostIn records that a walk lost a span of the unit whose DIE is at
// unit, for the DIE at bad it could not read (the first such DIE).
func (f *File) lostIn(unit, bad Offset) {
	f.damageMu.Lock()
	defer f.damageMu.Unlock()
	if f.lostUnits == nil {
		f.lostUnits = map[Offset]Offset{}
	}
	if _, ok := f.lostUnits[unit]; !ok {
		f.lostUnits[unit] = bad
	}
}

// LostAt is, when the compile unit whose address ranges hold pc lost a
// span of its DIEs to a walk (see Damage), the offset in .debug_info of
// the first DIE it could not read: what the debug info said of the code
// at pc may be among the DIEs left out. False when no walk lost a span
// of that unit, or no unit's ranges hold pc.
func (f *File) LostAt(pc uint64) (Offset, bool) {
	f.damageMu.Lock()
	n := len(f.lostUnits)
	f.damageMu.Unlock()
	if n == 0 {
		return 0, false
	}
	cu, ok := f.rangedUnit(pc)
	if !ok {
		return 0, false
	}
	f.damageMu.Lock()
	defer f.damageMu.Unlock()
	bad, ok := f.lostUnits[cu.Offset]
	return bad, ok
}
