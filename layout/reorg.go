package layout

import (
	"sort"

	"github.com/binscope/binscope/types"
)

// Reorganized is a suggested member order for a type, with its layout.
type Reorganized struct {
	// From is the layout analysed; Layout is that of the suggested order,
	// From itself when no order is better or the compiler chooses the
	// order (CompilerReorders).
	From   *Layout
	Layout *Layout
	// Moved reports whether Layout differs from From.
	Moved bool
	// CompilerReorders is set when the compiler lays the type out itself
	// (Rust repr(Rust), Zig auto layout, Rust enums): the order shown is
	// the memory order, not a suggestion.
	CompilerReorders bool
	// Note says, in one sentence, what was done or why nothing was.
	Note string
}

// Saved returns the bytes the suggested order saves.
func (r *Reorganized) Saved() int64 { return r.From.Size - r.Layout.Size }

// SavedCachelines returns the cachelines the suggested order saves.
func (r *Reorganized) SavedCachelines() int64 { return r.From.Cachelines - r.Layout.Cachelines }

// SavedPointerBytes returns how much shorter the prefix the Go garbage
// collector scans (types.PointerBytes) is in the suggested order.
func (r *Reorganized) SavedPointerBytes() int64 { return r.From.PointerBytes - r.Layout.PointerBytes }

// Packable reports whether pahole's --packable lists the type: it has
// holes or bit holes and the suggested order is smaller.
func (r *Reorganized) Packable() bool {
	return (len(r.From.Holes) > 0 || len(r.From.BitHoles) > 0) && r.Saved() > 0
}

// Reorganize suggests a member order for l's type that minimises its size
// and, for Go, then the pointer bytes the garbage collector scans. It never
// returns nil.
//
// C, C++, Go and repr(C) Rust or extern Zig structs are reordered: members
// sorted by alignment, then size, descending (a bitfield moves with the
// other bitfields of its storage units; C++ base classes and vtable
// pointers stay first, a flexible array last), then members moved into
// the holes that remain; Go follows go vet's fieldalignment (zero-size
// fields first, then alignment, pointer-holding fields first, those with
// the fewest trailing pointer-free bytes first, then size). The new offsets
// follow the C rules (and Go's extra byte after a trailing zero-size
// field). A suggestion that saves nothing (nor, for Go, pointer bytes) is
// not made.
//
// Rust and Zig compilers reorder fields of repr(Rust) and auto-layout
// types themselves, and the debug info does not record the repr. The rule:
// a Rust or Zig struct whose memory order differs from its declaration
// order was reordered by the compiler (CompilerReorders); one in
// declaration order that a reordering would shrink is taken for repr(C)
// or extern and reorganized as C; one in declaration order that no order
// shrinks is shown as it is, with a note that the compiler may already
// reorder it. Unions, Rust enums and packed types are never reordered.
func Reorganize(l *Layout, opts *Options) *Reorganized {
	r := &Reorganized{From: l, Layout: l}
	switch {
	case l.Kind == types.KindUnion:
		r.Note = "the members of a union overlap: no order to improve"
		return r
	case l.IsEnum():
		r.CompilerReorders = true
		r.Note = "the compiler lays out enum variants: memory order shown"
		return r
	case l.Packed:
		r.Note = "packed: no holes to remove"
		return r
	}
	auto := l.Lang == types.LangRust || l.Lang == types.LangZig
	if auto && !declarationOrder(l) {
		r.CompilerReorders = true
		if l.Lang == types.LangRust {
			r.Note = "repr(Rust): the compiler already reorders fields; memory order shown"
		} else {
			r.Note = "auto layout: the compiler already reorders fields; memory order shown"
		}
		return r
	}
	nl := reorder(l, opts)
	better := nl != nil && (nl.Size < l.Size ||
		(l.Lang == types.LangGo && nl.Size == l.Size && nl.PointerBytes < l.PointerBytes))
	switch {
	case better && auto:
		r.Layout, r.Moved = nl, true
		if l.Lang == types.LangRust {
			r.Note = "fields in declaration order with avoidable holes: repr(C) assumed"
		} else {
			r.Note = "fields in declaration order with avoidable holes: extern layout assumed"
		}
	case better:
		r.Layout, r.Moved = nl, true
	case auto:
		r.CompilerReorders = true
		if l.Lang == types.LangRust {
			r.Note = "no smaller order; the compiler may already reorder fields (repr(Rust))"
		} else {
			r.Note = "no smaller order; the compiler may already reorder fields (auto layout)"
		}
	default:
		r.Note = "no smaller order"
	}
	return r
}

// declarationOrder reports whether l's members lie in memory in the order
// they were declared.
func declarationOrder(l *Layout) bool {
	index := make(map[*types.Member]int, len(l.Type.Members))
	for i := range l.Type.Members {
		index[&l.Type.Members[i]] = i
	}
	prev := -1
	for i := range l.Members {
		j := index[l.Members[i].Member]
		if j < prev {
			return false
		}
		prev = j
	}
	return true
}

// cluster is a run of members that move together: one member, or
// bitfields with the members that share their storage units.
type cluster struct {
	slots      []*Slot
	start, end int64 // bytes occupied in the original layout
	unitEnd    int64 // end of the last bitfield storage unit
	align      int64
	ptr        int64 // pointer bytes from start, 0 when none
	front      bool  // C++ base or vtable pointer: stays first
	back       bool  // flexible or zero-length array: stays last
}

func (c *cluster) size() int64 { return c.end - c.start }

func (c *cluster) add(s *Slot) {
	start, unitEnd := s.Offset, s.End()
	if s.IsBitfield() {
		start = s.UnitOffset
		unitEnd = s.UnitOffset + s.Size
	}
	if len(c.slots) == 0 {
		c.start, c.end, c.unitEnd = start, s.End(), unitEnd
	}
	c.slots = append(c.slots, s)
	c.start = min(c.start, start)
	c.end = max(c.end, s.End())
	c.unitEnd = max(c.unitEnd, unitEnd)
	c.align = max(c.align, s.Align, 1)
	m := s.Member
	if a, ok := types.Resolve(m.Type).(*types.Array); ok && a.Count <= 0 && s.Size == 0 {
		c.back = true
	}
}

func (c *cluster) merge(o *cluster) {
	for _, s := range o.slots {
		c.add(s)
	}
	c.back = c.back || o.back
}

// clusters groups l's members into the units a reordering moves.
func clusters(l *Layout) []*cluster {
	var cs []*cluster
	for i := range l.Members {
		s := &l.Members[i]
		start := s.Offset
		if s.IsBitfield() {
			start = s.UnitOffset
		}
		if n := len(cs); n > 0 {
			last := cs[n-1]
			if start < last.end || (s.IsBitfield() && anyBitfield(last) && start < last.unitEnd) {
				last.add(s)
				// A storage unit reaching back into earlier clusters
				// joins them.
				for len(cs) > 1 && cs[len(cs)-1].start < cs[len(cs)-2].end {
					cs[len(cs)-2].merge(cs[len(cs)-1])
					cs = cs[:len(cs)-1]
				}
				continue
			}
		}
		c := &cluster{}
		c.add(s)
		cs = append(cs, c)
	}
	for _, c := range cs {
		for _, s := range c.slots {
			if m := s.Member; m.Artificial || (m.Embedded && l.Lang == types.LangCPlusPlus) {
				c.front = true
			}
			if p := types.PointerBytes(s.Member.Type); p > 0 {
				c.ptr = max(c.ptr, s.Offset-c.start+p)
			}
		}
	}
	return cs
}

func anyBitfield(c *cluster) bool {
	for _, s := range c.slots {
		if s.IsBitfield() {
			return true
		}
	}
	return false
}

// reorder returns the layout of the best order found, or nil.
func reorder(l *Layout, opts *Options) *Layout {
	cs := clusters(l)
	var front, middle, back []*cluster
	for _, c := range cs {
		switch {
		case c.front:
			front = append(front, c)
		case c.back:
			back = append(back, c)
		default:
			middle = append(middle, c)
		}
	}
	if l.Lang == types.LangGo {
		sort.SliceStable(middle, func(i, j int) bool { return goLess(middle[i], middle[j]) })
	} else {
		sort.SliceStable(middle, func(i, j int) bool {
			a, b := middle[i], middle[j]
			if a.align != b.align {
				return a.align > b.align
			}
			return a.size() > b.size()
		})
	}
	order := append(append(append([]*cluster{}, front...), middle...), back...)
	if l.Lang != types.LangGo {
		order = fillHoles(order, len(front), len(order)-len(back))
	}
	return build(l, order, opts)
}

// goLess orders fields as go vet's fieldalignment does.
func goLess(a, b *cluster) bool {
	za, zb := a.size() == 0, b.size() == 0
	if za != zb {
		return za
	}
	if a.align != b.align {
		return a.align > b.align
	}
	pa, pb := a.ptr != 0, b.ptr != 0
	if pa != pb {
		return pa
	}
	if pa {
		ta, tb := a.size()-a.ptr, b.size()-b.ptr
		if ta != tb {
			return ta < tb
		}
	}
	return a.size() > b.size()
}

// place returns the new start of each cluster in order.
func place(order []*cluster) (starts []int64, end int64) {
	starts = make([]int64, len(order))
	for i, c := range order {
		end = roundUp(end, c.align)
		starts[i] = end
		end += c.size()
	}
	return starts, end
}

// fillHoles moves clusters from the end of order[lo:hi] into the holes
// alignment leaves before them. A cluster moves only into a hole it fits
// without pushing what follows the hole, so no move makes the type larger;
// the number of moves is bounded (each costs O(n²)).
func fillHoles(order []*cluster, lo, hi int) []*cluster {
	for iter := 0; iter < 2*len(order)+1; iter++ {
		starts, _ := place(order)
		moved := false
		for i := max(lo, 1); i < hi && !moved; i++ {
			holeAt := starts[i-1] + order[i-1].size()
			if holeAt >= starts[i] {
				continue
			}
			for j := hi - 1; j > i; j-- {
				c := order[j]
				at := roundUp(holeAt, c.align)
				if at+c.size() > starts[i] || c.size() == 0 {
					continue
				}
				next := append([]*cluster{}, order[:i]...)
				next = append(next, c)
				next = append(next, order[i:j]...)
				next = append(next, order[j+1:]...)
				order, moved = next, true
				break
			}
		}
		if !moved {
			break
		}
	}
	return order
}

func roundUp(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// build makes the reordered struct and analyses it.
func build(l *Layout, order []*cluster, opts *Options) *Layout {
	starts, end := place(order)
	if l.Lang == types.LangGo && len(order) > 0 && order[len(order)-1].size() == 0 && end > 0 {
		end++ // Go pads after a trailing zero-size field
	}
	size := roundUp(end, max(l.Align, 1))
	ns := *l.Type
	ns.ByteSize = size
	ns.Members = make([]types.Member, 0, len(l.Members))
	for i, c := range order {
		shift := types.Bits((starts[i] - c.start) * 8)
		for _, s := range c.slots {
			m := *s.Member
			m.Offset = s.BitOffset + shift
			ns.Members = append(ns.Members, m)
		}
	}
	nl, err := Analyze(&ns, opts)
	if err != nil {
		return nil
	}
	nl.Name = l.Name
	return nl
}
