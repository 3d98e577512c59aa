package code

import (
	"sync"

	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/types"
)

// marks is a Go binary's inline tree, read the first time a mark is asked.
type marks struct {
	once sync.Once
	tree pcln.Tree
}

// InlineMark is the address of the inline mark of site, an expansion in a
// Go binary read from DWARF: the instruction cmd/compile keeps at each
// inlined call, with the call site's position, which runs once each time
// the call is made (see pcln.InlinedCall.PC). DWARF's ranges of Go
// expansions are where the body's instructions came from, and an
// instruction the compiler shared between two calls belongs to one of them
// only: the mark says where each call is made. ok is false for a binary
// without the table (not Go), or when no inlined call of the table, or
// more than one, matches site by host, callee, call line and ranges. For a model read from .gopclntab, site.EntryPC already
// is the mark.
func (m *Model) InlineMark(site *types.InlineSite) (uint64, bool) {
	if m.DWARF == nil || site == nil || site.Callee == nil || len(site.Ranges) == 0 {
		return 0, false
	}
	m.marks.once.Do(func() {
		if pcln.Has(m.ELF) {
			m.marks.tree, _ = pcln.Inlines(m.ELF)
		}
	})
	if len(m.marks.tree) == 0 {
		return 0, false
	}
	h, ok := m.hostAt(site.Ranges[0][0])
	if !ok || h.fn == nil {
		return 0, false
	}
	var pc uint64
	n := 0
	for _, c := range m.marks.tree[h.fn.LowPC] {
		if c.Callee != site.Callee.Name || c.Line != site.CallLine || !sameRanges(c.Ranges, site.Ranges) {
			continue
		}
		pc = c.PC
		n++
	}
	return pc, n == 1
}

func sameRanges(a, b [][2]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
