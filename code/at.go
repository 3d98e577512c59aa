package code

import (
	"sort"

	"github.com/binscope/binscope/types"
)

// hostAt is the code range holding addr: the innermost (the latest
// starting) of the ranges that hold it.
func (m *Model) hostAt(addr uint64) (host, bool) {
	i := sort.Search(len(m.hosts), func(i int) bool { return m.hosts[i].lo > addr }) - 1
	for k := i; k >= 0 && k > i-64; k-- {
		if h := m.hosts[k]; addr >= h.lo && addr < h.hi {
			return h, true
		}
	}
	return host{}, false
}

// Func is the function whose code holds addr (its out-of-line copy, a
// clone or piece of it, or a symbol's code), or nil.
func (m *Model) Func(addr uint64) *types.Func {
	h, ok := m.hostAt(addr)
	if !ok {
		return nil
	}
	return h.fn
}

// Expansions are the inline expansions holding addr, innermost first, as
// the DIEs nest: each one's Parent is the next.
func (m *Model) Expansions(addr uint64) []*types.InlineSite {
	h, ok := m.hostAt(addr)
	if !ok || h.inst == nil {
		return nil
	}
	var inner *types.InlineSite
	best := -1
	for _, s := range h.inst.Sites {
		if !holds(s.Ranges, addr) {
			continue
		}
		if d := m.siteDepth(s); d > best {
			inner, best = s, d
		}
	}
	var out []*types.InlineSite
	for s := inner; s != nil; s = s.Parent {
		out = append(out, s)
	}
	return out
}

// siteDepth is how many expansions hold s (a walk up its parents: no
// state, so a model may be asked from several goroutines).
func (m *Model) siteDepth(s *types.InlineSite) int {
	d := 0
	for p := s.Parent; p != nil && d < 1<<16; p = p.Parent {
		d++
	}
	return d
}

func holds(rs [][2]uint64, a uint64) bool {
	for _, r := range rs {
		if a >= r[0] && a < r[1] {
			return true
		}
	}
	return false
}

// At is the inline chain at addr, innermost frame first, as
// `addr2line -f -i` prints it: the innermost frame's line is the line
// table's at addr (DWARF's, or for a Go binary without it .gopclntab's), each outer frame's the call site of the expansion it
// holds. nil when no function holds addr.
func (m *Model) At(addr uint64) []Frame {
	h, ok := m.hostAt(addr)
	if !ok {
		return nil
	}
	exp := m.Expansions(addr)
	var row types.Line
	if m.DWARF != nil {
		row, _ = m.DWARF.LineAt(addr)
	} else if m.pcln != nil {
		// The runtime's own line at addr: the innermost inlined call's.
		row.File, row.Line, _ = m.pcln.Lines.PCToLine(addr)
	}
	frames := make([]Frame, 0, len(exp)+1)
	file, line, col := row.File, row.Line, row.Column
	for _, s := range exp {
		frames = append(frames, Frame{Func: s.Callee, Name: s.Callee.Name, File: file, Line: line, Column: col, Inline: true})
		file, line, col = s.CallFile, s.CallLine, s.CallColumn
	}
	frames = append(frames, Frame{Func: h.fn, Name: h.fn.Name, File: file, Line: line, Column: col})
	return frames
}

// Entering are the expansions whose entry (DW_AT_entry_pc) is addr but
// whose ranges do not hold it: GCC marks where an expansion begins with a
// location view, at an address where none of its code is yet.
func (m *Model) Entering(addr uint64) []*types.InlineSite {
	h, ok := m.hostAt(addr)
	if !ok || h.inst == nil {
		return nil
	}
	var out []*types.InlineSite
	for _, s := range h.inst.Sites {
		if s.EntryPC == addr && !holds(s.Ranges, addr) {
			out = append(out, s)
		}
	}
	return out
}
