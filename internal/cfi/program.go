package cfi

import (
	"bytes"
	"math/bits"
)

// regs is the rule set of one location, for the columns kept, and x,
// the rule of the register a Frames.Saved query follows.
type regs struct {
	cfa    CFA
	ra, fp Rule
	x      Rule
}

// maxStates bounds DW_CFA_remember_state nesting (compilers nest one or
// two deep).
const maxStates = 256

// interp runs call frame programs.
type interp struct {
	s     *section
	c     *cie
	cur   regs
	stack []regs
	loc   uint64 // the current location
	lo    uint64 // the FDE's start, base of DW_EH_PE_funcrel
	// Rows are written for [from, to), the piece of the FDE in the table;
	// out is nil while a CIE's instructions run.
	from, to uint64
	out      *[]Row
	// A Frames.Saved query follows register xreg (xon): xinit is its rule
	// after the CIE's instructions, xAt its rule at from.
	xreg       uint64
	xon, xSeen bool
	xinit, xAt Rule
}

// cieProgram runs c's initial instructions into c.init. Locations mean
// nothing there: advances move nowhere.
func (m *interp) cieProgram(s *section, c *cie) error {
	*m = interp{s: s, c: c, cur: c.init, stack: m.stack[:0]}
	if _, err := m.exec(c.prog, c.pend); err != nil {
		return err
	}
	c.init = m.cur
	return nil
}

// fdeProgram runs f's instructions from its CIE's initial rules and
// appends to out the rows of [from, to), a piece of f's range: the first
// at from, with the rules in effect there. It stops once past to.
func (m *interp) fdeProgram(f *fde, from, to uint64, out *[]Row) error {
	*m = interp{s: f.s, c: f.c, cur: f.c.init, stack: m.stack[:0], loc: f.lo, lo: f.lo, from: from, to: to, out: out}
	done, err := m.exec(f.prog, f.end)
	if err != nil {
		return err
	}
	if !done {
		m.emit() // the last rules hold to the FDE's end
	}
	return nil
}

// emit appends the row of the rules at the current location (or at from,
// if that is later), unless the table's last row has the same rules.
func (m *interp) emit() {
	if m.xon && !m.xSeen {
		m.xAt, m.xSeen = m.cur.x, true
	}
	r := Row{PC: max(m.loc, m.from), CFA: m.cur.cfa, RA: m.cur.ra, FP: m.cur.fp, Covered: true}
	rows := *m.out
	if n := len(rows); n > 0 && rows[n-1].sameRules(r) {
		return
	}
	*m.out = append(rows, r)
}

// moveTo sets the location: the rules so far hold from the old one up to
// loc. It reports whether the piece is complete.
func (m *interp) moveTo(loc uint64) bool {
	if loc == m.loc || m.out == nil {
		m.loc = loc
		return false
	}
	if loc > m.from {
		m.emit()
	}
	m.loc = loc
	return loc >= m.to
}

// advance moves the location by delta code alignment units.
func (m *interp) advance(at int, delta uint64) (bool, error) {
	hi, d := bits.Mul64(delta, m.c.codeAlign)
	next := m.loc + d
	if hi != 0 || next < m.loc {
		return false, m.s.errorf(at, "advance past the end of the address space")
	}
	return m.moveTo(next), nil
}

// set puts rule for register reg, if it is a column kept.
func (m *interp) set(reg uint64, rule Rule) {
	if m.xon && reg == m.xreg {
		m.cur.x = rule
	}
	switch reg {
	case m.c.ra:
		m.cur.ra = rule
	case m.s.fp:
		m.cur.fp = rule
	}
}

// restore gives register reg its rule after the CIE's instructions.
func (m *interp) restore(reg uint64) {
	if m.xon && reg == m.xreg {
		m.cur.x = m.xinit
	}
	switch reg {
	case m.c.ra:
		m.cur.ra = m.c.init.ra
	case m.s.fp:
		m.cur.fp = m.c.init.fp
	}
}

// Call frame instructions (DW_CFA_*), the low six bits of the first three
// holding an operand.
const (
	opAdvanceLoc        = 0x40
	opOffset            = 0x80
	opRestore           = 0xc0
	opNop               = 0x00
	opSetLoc            = 0x01
	opAdvanceLoc1       = 0x02
	opAdvanceLoc2       = 0x03
	opAdvanceLoc4       = 0x04
	opOffsetExtended    = 0x05
	opRestoreExtended   = 0x06
	opUndefined         = 0x07
	opSameValue         = 0x08
	opRegister          = 0x09
	opRememberState     = 0x0a
	opRestoreState      = 0x0b
	opDefCFA            = 0x0c
	opDefCFARegister    = 0x0d
	opDefCFAOffset      = 0x0e
	opDefCFAExpression  = 0x0f
	opExpression        = 0x10
	opOffsetExtendedSF  = 0x11
	opDefCFASF          = 0x12
	opDefCFAOffsetSF    = 0x13
	opValOffset         = 0x14
	opValOffsetSF       = 0x15
	opValExpression     = 0x16
	opMIPSAdvanceLoc8   = 0x1d
	opNegateRAState     = 0x2d // DW_CFA_GNU_window_save on SPARC
	opGNUArgsSize       = 0x2e
	opGNUNegOffsetExt   = 0x2f
	opLLVMDefAspaceCFA  = 0x30
	opLLVMDefAspaceCFAS = 0x31
)

// exec runs the instructions at [off, end) of the section; done reports
// that it stopped past the piece's end. Every instruction consumes at least
// its opcode byte, so the loop ends.
func (m *interp) exec(off, end int) (done bool, err error) {
	c := m.c
	r := m.s.reader(off, end)
	for r.off < r.end && !done {
		at := r.off
		op := r.u8()
		switch op & 0xc0 {
		case opAdvanceLoc:
			done, err = m.advance(at, uint64(op&0x3f))
		case opOffset:
			m.set(uint64(op&0x3f), Rule{Kind: Offset, Offset: int64(r.uleb()) * c.dataAlign})
		case opRestore:
			m.restore(uint64(op & 0x3f))
		default:
			done, err = m.extended(at, op, &r)
		}
		if err != nil {
			return false, err
		}
		if r.bad {
			return false, m.s.errorf(at, "call frame instruction %#x runs past its entry's end", op)
		}
	}
	return done, nil
}

// extended runs the instructions whose opcode is the whole byte.
func (m *interp) extended(at int, op byte, r *reader) (bool, error) {
	c := m.c
	switch op {
	case opNop:
	case opSetLoc:
		loc, msg := m.s.pointer(r, c.fdeEnc, c.addrSize, m.lo, true)
		if msg != "" {
			return false, m.s.errorf(at, "DW_CFA_set_loc: %s", msg)
		}
		if m.out != nil && loc < m.loc {
			return false, m.s.errorf(at, "DW_CFA_set_loc to %#x goes back from %#x", loc, m.loc)
		}
		return m.moveTo(loc), nil
	case opAdvanceLoc1:
		return m.advance(at, r.fixed(1))
	case opAdvanceLoc2:
		return m.advance(at, r.fixed(2))
	case opAdvanceLoc4:
		return m.advance(at, r.fixed(4))
	case opMIPSAdvanceLoc8:
		return m.advance(at, r.fixed(8))
	case opOffsetExtended, opOffsetExtendedSF, opGNUNegOffsetExt, opValOffset, opValOffsetSF, opRestoreExtended,
		opUndefined, opSameValue, opRegister, opExpression, opValExpression:
		return false, m.registerRule(at, op, r)
	case opRememberState:
		if len(m.stack) == maxStates {
			return false, m.s.errorf(at, "DW_CFA_remember_state nested over %d deep", maxStates)
		}
		m.stack = append(m.stack, m.cur)
	case opRestoreState:
		// Every rule kept comes back, the CFA's too (as GCC's unwinder,
		// readelf and LLVM do).
		n := len(m.stack)
		if n == 0 {
			return false, m.s.errorf(at, "DW_CFA_restore_state without DW_CFA_remember_state")
		}
		m.cur, m.stack = m.stack[n-1], m.stack[:n-1]
	case opDefCFA, opLLVMDefAspaceCFA, opDefCFASF, opLLVMDefAspaceCFAS, opDefCFARegister, opDefCFAOffset,
		opDefCFAOffsetSF, opDefCFAExpression:
		return false, m.cfaRule(at, op, r)
	case opNegateRAState:
		// AArch64 pointer authentication (-mbranch-protection=pac-ret):
		// the return address saved from here on carries a signature in
		// its top bits. The rule of where it is does not change; the
		// unwinder strips the signature (it masks every AArch64 return
		// address to the user address bits anyway).
	case opGNUArgsSize:
		r.uleb() // bytes of outgoing arguments pushed: no effect on the CFA
	default:
		return false, m.s.errorf(at, "unknown call frame instruction %#x", op)
	}
	return false, nil
}

// registerRule runs an instruction that sets the rule of one register.
func (m *interp) registerRule(at int, op byte, r *reader) error {
	c := m.c
	switch op {
	case opOffsetExtended:
		reg := r.uleb()
		m.set(reg, Rule{Kind: Offset, Offset: int64(r.uleb()) * c.dataAlign})
	case opOffsetExtendedSF:
		reg := r.uleb()
		m.set(reg, Rule{Kind: Offset, Offset: r.sleb() * c.dataAlign})
	case opGNUNegOffsetExt:
		reg := r.uleb()
		m.set(reg, Rule{Kind: Offset, Offset: -int64(r.uleb()) * c.dataAlign})
	case opValOffset:
		reg := r.uleb()
		m.set(reg, Rule{Kind: ValOffset, Offset: int64(r.uleb()) * c.dataAlign})
	case opValOffsetSF:
		reg := r.uleb()
		m.set(reg, Rule{Kind: ValOffset, Offset: r.sleb() * c.dataAlign})
	case opRestoreExtended:
		m.restore(r.uleb())
	case opUndefined:
		m.set(r.uleb(), Rule{Kind: Undefined})
	case opSameValue:
		m.set(r.uleb(), Rule{Kind: SameValue})
	case opRegister:
		reg, from := r.uleb(), r.uleb()
		if from > 0xffff {
			return m.s.errorf(at, "DW_CFA_register names register %d", from)
		}
		m.set(reg, Rule{Kind: Register, Reg: uint16(from)})
	case opExpression, opValExpression:
		reg := r.uleb()
		r.block()
		m.set(reg, Rule{Kind: Expression})
	}
	return nil
}

// cfaRule runs an instruction that sets the rule of the CFA.
func (m *interp) cfaRule(at int, op byte, r *reader) error {
	c := m.c
	switch op {
	case opDefCFA, opLLVMDefAspaceCFA:
		reg, o := r.uleb(), r.uleb()
		if op == opLLVMDefAspaceCFA {
			r.uleb() // the address space, GPUs only
		}
		return m.defCFA(at, reg, int64(o))
	case opDefCFASF, opLLVMDefAspaceCFAS:
		reg, o := r.uleb(), r.sleb()
		if op == opLLVMDefAspaceCFAS {
			r.uleb()
		}
		return m.defCFA(at, reg, o*c.dataAlign)
	case opDefCFARegister:
		// The offset stays (an expression's meaningless 0 too).
		reg := r.uleb()
		if reg > 0xffff {
			return m.s.errorf(at, "CFA register %d", reg)
		}
		m.cur.cfa = CFA{Reg: uint16(reg), Offset: m.cur.cfa.Offset}
	case opDefCFAOffset, opDefCFAOffsetSF:
		// Invalid after an expression (DWARF 5 6.4.2.2): ignored there.
		var o int64
		if op == opDefCFAOffsetSF {
			o = r.sleb() * c.dataAlign
		} else {
			o = int64(r.uleb())
		}
		if !m.cur.cfa.Expr {
			m.cur.cfa.Offset = o
		}
	case opDefCFAExpression:
		m.cur.cfa = m.cfaExpression(r.block())
	}
	return nil
}

func (m *interp) defCFA(at int, reg uint64, off int64) error {
	if reg > 0xffff {
		return m.s.errorf(at, "CFA register %d", reg)
	}
	m.cur.cfa = CFA{Reg: uint16(reg), Offset: off}
	return nil
}

// pltCFA is the CFA expression of x86-64 lazy PLT entries, with the
// entry's threshold at pltFromAt:
//
//	DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
//	DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
//
// that is rsp + 8 + (((rip & 15) >= 11) << 3).
var pltCFA = []byte{0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}

const pltFromAt = 6

// cfaExpression is the CFA rule of DW_CFA_def_cfa_expression expr.
func (m *interp) cfaExpression(expr []byte) CFA {
	if m.s.plt && len(expr) == len(pltCFA) && bytes.Equal(expr[:pltFromAt], pltCFA[:pltFromAt]) &&
		bytes.Equal(expr[pltFromAt+1:], pltCFA[pltFromAt+1:]) {
		switch lit := expr[pltFromAt]; lit {
		case 0x3a, 0x3b: // DW_OP_lit10, DW_OP_lit11
			return CFA{Reg: 7, Offset: 8, Expr: true, PLT: true, PLTFrom: lit - 0x30}
		}
	}
	return CFA{Expr: true}
}
