// Package uprobe decides which addresses may carry a uprobe. A breakpoint
// placed inside an instruction corrupts the probed program (it overwrites
// an immediate or a displacement), and one on an instruction the kernel
// refuses never fires in a process that starts later. So every site is
// proven before anything attaches and before an artifact names it: its
// address starts an instruction, shown by decoding its piece of code (a
// function's range from .gopclntab, the symbol tables, the debug file's,
// or an FDE of .eh_frame)
// from the piece's first byte, and the kernel accepts a uprobe on that
// instruction (x86.Refusal). A site on an instruction the kernel refuses
// moves to the next instruction when every call still passes it exactly
// once and its arguments read the same values there; otherwise it is
// refused, with one line that says why.
package uprobe

import (
	"fmt"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/cfi"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
)

// Refusal is a site that may not carry a uprobe.
type Refusal struct {
	Def  string // the probe's definition
	Site spec.Site
	Why  string
}

func (r Refusal) String() string {
	return fmt.Sprintf("%s: %s site at %#x in %s refused: %s", r.Def, r.Site.Kind, r.Site.Addr, r.Site.Function, r.Why)
}

// Code is one file's code as the proof reads it.
type Code struct {
	ef     *elfx.File
	models []*code.Model // the file's, then its debug file's (symbols of static functions)
	fdes   [][2]uint64   // the ranges of the file's FDEs, in address order
	pieces map[uint64]*piece
	done   func()
}

// piece is one decoded range of code.
type piece struct {
	lo, hi  uint64
	starts  []uint64 // instruction starts, ascending
	insns   []x86asm.Inst
	targets map[uint64]bool // direct branch targets inside the piece
	exits   map[uint64]bool // and outside it
	sweep   string          // why the sweep failed
	err     string          // why the piece cannot be proven: sweep, or its start
	before  bool            // checkBefore ran
}

// Open reads where ef's functions start: .gopclntab and the symbol tables
// of ef and of its separate debug file when one is installed. Close
// releases what Open opened (ef stays open).
func Open(ef *elfx.File) (*Code, error) {
	m, err := code.NewFromELF(ef)
	if err != nil {
		return nil, err
	}
	return OpenModel(m)
}

// OpenModel is Open with the file's model of code already built by
// code.NewFromELF (a resolver of a file without debug info has one): the
// file is m.ELF. A model read from DWARF is not one (its functions'
// ranges are the compiler's): Open then reads the file's own tables.
func OpenModel(m *code.Model) (*Code, error) {
	if m.DWARF != nil {
		return Open(m.ELF)
	}
	ef := m.ELF
	c := &Code{ef: ef, models: []*code.Model{m}, pieces: map[uint64]*piece{}, done: func() {}}
	if dbg, _ := ef.FindDebugFile(); dbg != nil {
		if dm, err := code.NewFromELF(dbg); err == nil {
			c.models = append(c.models, dm)
			c.done = func() { dbg.Close() }
		} else {
			dbg.Close()
		}
	}
	c.fdes, _ = cfi.Ranges(ef) // none for a Go binary; a corrupt section leaves the symbols
	return c, nil
}

// Close releases the debug file Open found.
func (c *Code) Close() { c.done() }

// pieceAt is the decoded piece of code holding addr, or nil: the range of
// a function the models know, else of the innermost FDE holding it.
func (c *Code) pieceAt(addr uint64) *piece {
	for _, m := range c.models {
		if lo, hi, ok := m.Piece(addr); ok {
			p := c.pieceOf(lo, hi)
			c.checkBefore(m, p)
			return p
		}
	}
	i := sort.Search(len(c.fdes), func(i int) bool { return c.fdes[i][0] > addr })
	for k := i - 1; k >= 0 && k >= i-64; k-- {
		if r := c.fdes[k]; addr < r[1] {
			return c.pieceOf(r[0], r[1])
		}
	}
	return nil
}

// checkBefore proves p's start from the other side: when the model's
// piece before p ends exactly where p starts (Go's functions follow each
// other, padded with int3), its sweep must end there too, on an
// instruction that does not run on into p. A start that is not one (a
// table of function starts read from a wrong base) lands inside an
// instruction of the code before it, whose sweep then runs past it, or
// just after an instruction of a function's body.
func (c *Code) checkBefore(m *code.Model, p *piece) {
	if p.before || p.err != "" || p.lo == 0 {
		return
	}
	p.before = true
	lo, hi, ok := m.Piece(p.lo - 1)
	if !ok || hi != p.lo {
		return
	}
	q := c.pieceOf(lo, hi)
	if q.sweep != "" {
		p.err = fmt.Sprintf("the start of its function, %#x, is not proven: the code before it does not decode to end there (%s)", p.lo, q.sweep)
		return
	}
	n := len(q.insns) - 1
	for n > 0 && (q.insns[n].Op == x86asm.NOP || q.insns[n].Op == x86asm.INT) {
		n-- // padding; Go puts a NOP after a last call that does not return
	}
	if n >= 0 && fallsThrough(q.insns[n]) {
		p.err = fmt.Sprintf("the start of its function, %#x, is not proven: the code before it (%s at %#x) runs on into it, as no function's last instruction does", p.lo, q.insns[n], q.starts[n])
	}
}

// fallsThrough reports whether control may go on from in to the
// instruction after it: all but returns, unconditional jumps, traps and
// calls and system calls (a function may end in one that does not
// return: a panic, exit).
func fallsThrough(in x86asm.Inst) bool {
	switch in.Op {
	case x86asm.RET, x86asm.LRET, x86asm.JMP, x86asm.LJMP, x86asm.CALL, x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.INT, x86asm.HLT,
		x86asm.SYSCALL: // exit_group at the end of runtime.exit
		return false
	}
	return true
}

// enteredFromPieces reports whether a direct branch of another piece of
// the function holding addr (its .cold or .part continuation, which jumps
// back into the body) lands at t, or whether such a piece cannot be
// decoded to tell.
func (c *Code) enteredFromPieces(addr, t uint64) bool {
	for _, m := range c.models {
		fn := m.Func(addr)
		if fn == nil {
			continue
		}
		ranges := append([][2]uint64(nil), fn.Ranges...)
		for _, cl := range fn.Clones {
			if cl.Call() {
				continue // a full copy is called, it does not jump back
			}
			ranges = append(ranges, cl.Ranges...)
			if len(cl.Ranges) == 0 && cl.Size > 0 {
				ranges = append(ranges, [2]uint64{cl.Address, cl.Address + cl.Size})
			}
		}
		for _, rg := range ranges {
			if addr >= rg[0] && addr < rg[1] {
				continue
			}
			if q := c.pieceOf(rg[0], rg[1]); q.sweep != "" || q.exits[t] {
				return true
			}
		}
	}
	return false
}

func (c *Code) pieceOf(lo, hi uint64) *piece {
	if p := c.pieces[lo]; p != nil && p.hi == hi {
		return p
	}
	p := c.decode(lo, hi)
	p.sweep = p.err
	c.pieces[lo] = p
	return p
}

// decode sweeps [lo, hi) from its first byte. The sweep fails (err) where
// an instruction cannot be decoded, where the last one runs past hi, and
// where a direct branch of the piece lands inside an instruction of the
// sweep: bytes that are data, or a start that is not one.
func (c *Code) decode(lo, hi uint64) *piece {
	p := &piece{lo: lo, hi: hi, targets: map[uint64]bool{}, exits: map[uint64]bool{}}
	b, err := c.ef.Code(lo, hi-lo)
	if err != nil {
		p.err = err.Error()
		return p
	}
	for off := 0; off < len(b); {
		n, err := x86.Length(b[off:])
		if err != nil {
			p.err = fmt.Sprintf("the code from %#x cannot be decoded at %#x (%v): data in code, or not the start of a function", lo, lo+uint64(off), err)
			return p
		}
		in, _ := x86.Decode(b[off:])
		a := lo + uint64(off)
		p.starts = append(p.starts, a)
		p.insns = append(p.insns, in)
		if t, ok := x86.BranchTarget(a, in); ok && t >= lo && t < hi {
			p.targets[t] = true
		} else if ok {
			p.exits[t] = true
		}
		off += n
	}
	for t := range p.targets {
		if _, ok := p.index(t); !ok {
			p.err = fmt.Sprintf("a branch in the code from %#x lands at %#x, inside an instruction of the sweep: data in code, or not the start of a function", lo, t)
			return p
		}
	}
	return p
}

// index is the position of the instruction starting at a.
func (p *piece) index(a uint64) (int, bool) {
	i := sort.Search(len(p.starts), func(i int) bool { return p.starts[i] >= a })
	return i, i < len(p.starts) && p.starts[i] == a
}

// inside says which instruction holds a, for a refusal.
func (p *piece) inside(a uint64) string {
	i := sort.Search(len(p.starts), func(i int) bool { return p.starts[i] > a }) - 1
	if i < 0 {
		return ""
	}
	return fmt.Sprintf("%#x is inside the %d-byte instruction at %#x (%s)", a, p.insns[i].Len, p.starts[i], p.insns[i])
}

// bytes are the bytes of the instruction at position i.
func (c *Code) bytes(p *piece, i int) []byte {
	b, err := c.ef.Code(p.starts[i], uint64(p.insns[i].Len))
	if err != nil {
		return nil
	}
	return b
}
