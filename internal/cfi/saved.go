package cfi

import (
	"sort"

	"github.com/binscope/binscope/internal/elfx"
)

// Frames is a file's call frame information kept whole, to ask where the
// caller's value of any register is at an address (Table keeps only the
// columns an unwinder needs).
type Frames struct {
	pieces []piece
}

// ReadFrames reads f's .eh_frame and .debug_frame as Table does.
func ReadFrames(f *elfx.File) (*Frames, error) {
	b, err := load(f)
	if err != nil {
		return nil, err
	}
	if len(b.fdes) == 0 {
		return &Frames{}, nil
	}
	return &Frames{pieces: b.pieces()}, nil
}

// Saved is where the caller's value of DWARF register reg is at pc (a
// virtual address of the file): saved in memory at CFA+Offset (Offset),
// in the register itself (SameValue: what an FDE does not mention, as for
// the callee-saved registers a function leaves alone), and so on. ok is
// false outside every FDE, or for an FDE whose instructions are corrupt.
//
// Worked example: after push %rbx at the entry of an x86-64 function, the
// rule of rbx (DWARF 3) is Offset -16: the caller's rbx is the 8 bytes at
// CFA-16, whatever the function then puts in rbx.
func (fr *Frames) Saved(pc uint64, reg int) (Rule, bool) {
	i := sort.Search(len(fr.pieces), func(i int) bool { return fr.pieces[i].hi > pc })
	if i == len(fr.pieces) || fr.pieces[i].lo > pc || reg < 0 {
		return Rule{}, false
	}
	f := fr.pieces[i].f
	var m interp
	// The CIE's initial instructions, following reg: a column they do
	// not mention keeps its value.
	m = interp{s: f.s, c: f.c, cur: regs{ra: Rule{Kind: SameValue}, fp: Rule{Kind: SameValue}, x: Rule{Kind: SameValue}},
		xreg: uint64(reg), xon: true}
	if _, err := m.exec(f.c.prog, f.c.pend); err != nil {
		return Rule{}, false
	}
	init := m.cur
	var rows []Row
	m = interp{s: f.s, c: f.c, cur: init, loc: f.lo, lo: f.lo, from: pc, to: pc + 1, out: &rows,
		xreg: uint64(reg), xon: true, xinit: init.x}
	done, err := m.exec(f.prog, f.end)
	if err != nil {
		return Rule{}, false
	}
	if !done {
		m.emit()
	}
	return m.xAt, m.xSeen
}
