package probe

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// maxUseWalk bounds the instructions bitsOnly follows from a definition.
const maxUseWalk = 512

// bitsOnly checks a chain that reads a register, as a value: where the
// code last computes that register before addr by arithmetic (an
// addition, LEA, a shift: not a copy or a load) and every use of what it
// computes, on every path until the register is written again, tests
// some of its bits only (test $0x1,%cl), the compiler needs no more of it
// than those bits, and simplifies the computation under them: LLVM
// computes (i*5+2)&1 as (i*5)&1 and gives fn01's c = i*5+2 as that
// register (rust-O3 seed 7092: c read as RCX = 5i, 0 where the call
// passed 2; gdb prints the same), so its other bits need not be the
// variable's. It returns why not to read it, or "".
func (vc *valueChecks) bitsOnly(addr uint64, c spec.Chain, size int64) string {
	regs := chainRegs(c)
	if len(regs) == 0 || size <= 0 || size > 8 {
		return ""
	}
	fl := vc.flows.at(addr)
	if fl == nil || len(fl.indirect) > 0 {
		return ""
	}
	for _, reg := range regs {
		f := x86.Family(regByName(reg))
		if f < 0 {
			continue
		}
		def, ok := vc.arithDef(fl, addr, f)
		if !ok {
			continue
		}
		tests, mask, ok := vc.bitUses(fl, def, f)
		width := ^uint64(0) >> (64 - 8*size)
		if !ok || len(tests) == 0 || mask&width == width {
			continue
		}
		if twin := vc.trimmed(fl, addr, def, f, c, mask); twin != 0 {
			return fmt.Sprintf("the debug info gives %s, but the code computes %s at %#x (%s) only for its bits %#x (%s), and at %#x the value it trims (the same in those bits): the compiler need not compute the rest of it as the value, so that value would be wrong",
				chainText(c), reg, def, strings.ToLower(fl.op[def].Op.String()), mask, strings.Join(tests, ", "), twin)
		}
	}
	return ""
}

// chainRegs are the registers c reads as values (not as an address).
func chainRegs(c spec.Chain) []string {
	if len(c.Expr) == 0 {
		if c.Reg != "" && len(c.Derefs) == 0 && c.Builtin == "" && c.Field == nil {
			return []string{c.Reg}
		}
		return nil
	}
	var out []string
	for _, o := range c.Expr {
		switch o.Code {
		case types.OpReg:
			out = append(out, o.Reg)
		case types.OpDeref, types.OpEntry, types.OpCFA, types.OpAddr, types.OpParam:
			return nil
		}
	}
	return out
}

// chainText is c's form for a message.
func chainText(c spec.Chain) string {
	if len(c.Expr) > 0 {
		return types.OpsString(c.Expr)
	}
	return c.Reg
}

// regByName is the 64-bit register of a pt_regs name, or 0.
func regByName(name string) x86asm.Reg {
	for f, n := range x86.GPRs {
		if n == name {
			return x86asm.RAX + x86asm.Reg(f)
		}
	}
	return 0
}

// arithDef is the instruction that last writes register family f before
// addr on every path to it (dominating it, no other write between), when
// it computes f by arithmetic.
func (vc *valueChecks) arithDef(fl *flow, addr uint64, f int) (uint64, bool) {
	for _, b := range fl.dominating(addr, evalWindow) {
		in := fl.op[b]
		if x86.Writes(vc.arch, in, false)&(1<<f) == 0 {
			continue
		}
		d, ok := in.Args[0].(x86asm.Reg)
		if !ok || x86.Family(d) != f || fl.writtenInto(b, addr, x86.RegSet(1)<<f, vc.facts) {
			return 0, false
		}
		switch in.Op {
		case x86asm.ADD, x86asm.SUB, x86asm.IMUL, x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.INC, x86asm.DEC, x86asm.NEG:
			return b, true
		case x86asm.LEA:
			m, ok := in.Args[1].(x86asm.Mem)
			return b, ok && m.Base != x86asm.RIP && (m.Base != 0 || m.Index != 0)
		}
		return 0, false
	}
	return 0, false
}

// bitUses follows what def leaves in family f down every path until f is
// written again: the bit tests that use it and the bits they test; ok is
// false where any other instruction reads it.
func (vc *valueChecks) bitUses(fl *flow, def uint64, f int) (tests []string, mask uint64, ok bool) {
	seen := map[uint64]bool{}
	queue := append([]uint64(nil), fl.succ[def]...)
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if seen[x] {
			continue
		}
		if seen[x] = true; len(seen) > maxUseWalk {
			return nil, 0, false
		}
		in, known := fl.op[x]
		if !known {
			return nil, 0, false
		}
		if m, isTest := bitTest(in, f); isTest {
			tests, mask = append(tests, fmt.Sprintf("%s at %#x", strings.ToLower(in.Op.String()), x)), mask|m
		} else if in.Op == x86asm.CALL && vc.callReads(x, in, f) || in.Op != x86asm.CALL && readsFamily(in, f) {
			return nil, 0, false
		}
		if x86.Writes(vc.arch, in, false)&(1<<f) != 0 {
			continue
		}
		queue = append(queue, fl.succ[x]...)
	}
	return tests, mask, true
}

// bitTest is the mask of the bits of family f that in tests, when it
// tests an immediate's bits of a register of f and reads it no other way.
func bitTest(in x86asm.Inst, f int) (uint64, bool) {
	d, ok := in.Args[0].(x86asm.Reg)
	imm, isImm := in.Args[1].(x86asm.Imm)
	if !ok || !isImm || x86.Family(d) != f {
		return 0, false
	}
	switch in.Op {
	case x86asm.TEST:
		return uint64(int64(imm)) & regMask(d), true
	case x86asm.BT:
		return 1 << (uint64(imm) & 63), true
	}
	return 0, false
}

// readsFamily reports whether in may read register family f: an operand
// of f it reads, an address through f, or an instruction that reads
// registers it does not name (a call, a return, string operations).
func readsFamily(in x86asm.Inst, f int) bool {
	switch in.Op {
	case 0, x86asm.CALL, x86asm.RET, x86asm.SYSCALL, x86asm.LEAVE, x86asm.ENTER:
		return true
	case x86asm.JMP:
		_, rel := in.Args[0].(x86asm.Rel)
		return !rel
	}
	if x86.Writes(nil, x86asm.Inst{Op: in.Op}, false) != 0 && in.Op != x86asm.PUSH && in.Op != x86asm.POP {
		return true // implicit registers (MUL, CQO, MOVSB, ...)
	}
	for i, a := range in.Args {
		switch a := a.(type) {
		case x86asm.Reg:
			if x86.Family(a) != f {
				continue
			}
			if i == 0 && pureWrite(in.Op) && regMask(a) >= 0xffffffff {
				continue
			}
			return true
		case x86asm.Mem:
			if x86.Family(a.Base) == f || x86.Family(a.Index) == f {
				return true
			}
		}
	}
	return false
}

// pureWrite reports whether op writes its first operand without reading
// it (a 32- or 64-bit register so written loses its old value).
func pureWrite(op x86asm.Op) bool {
	switch op {
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA, x86asm.POP, x86asm.MOVD, x86asm.MOVQ:
		return true
	}
	return false
}

// callReads reports whether the call in at a may read register family f:
// unless it calls a function whose debug info gives the location of each
// of its parameters at its entry, none of them in f (the argument
// registers it takes; fn03(a, b, c) reads no RCX).
func (vc *valueChecks) callReads(a uint64, in x86asm.Inst, f int) bool {
	to, ok := branchTarget(a, in)
	m := vc.t.codeModel()
	if !ok || m == nil {
		return true
	}
	fn := m.Func(to)
	if fn == nil || fn.LowPC != to || fn.Variadic || fn.SymbolOnly {
		return true
	}
	if _, err := vc.t.params(fn); err != nil {
		return true
	}
	for _, p := range fn.Params {
		if len(p.Loc.Pieces) == 0 || readsReg(p.Loc, x86.GPRs[f]) {
			return true
		}
	}
	return false
}

// trimmed looks for the code's computation of the value that f's
// definition at def trims: a register other than f that comes to hold,
// computed from a register f's value is computed from too (see
// linStep), f's value plus a constant k of none of the bits mask tests
// (rust-O3 seed 7092: RDX = 5i+2 at 0x169f1 beside RCX = 5i, tested
// for bit 0). It returns that instruction, or 0 where there is none or
// where the code also computes the chain's value, as far as it is linear
// in f's (RCX+2 of (RCX+2)^118: LLVM's debug info puts back what the code
// left out of f).
func (vc *valueChecks) trimmed(fl *flow, addr, def uint64, f int, c spec.Chain, mask uint64) uint64 {
	ops := c.Expr
	if len(ops) == 0 {
		ops = []types.Op{{Code: types.OpReg, Reg: c.Reg}}
	}
	var e lin
	ok := false
	for i := len(ops); i > 0 && !ok; i-- {
		e, ok = exprLin(ops[:i], x86.GPRs[f], nil)
	}
	back := fl.dominating(addr, evalWindow)
	at := slices.Index(back, def)
	if !ok || e.s != 0 || at < 0 {
		return 0
	}
	twin := uint64(0)
	for g := range x86.GPRs {
		if g == f || x86.GPRs[g] == vc.arch.SP {
			continue
		}
		pf, others := vc.linearFrom(fl, back, at, f, g)
		if pf == nil {
			continue
		}
		want := pf.scaled(e.a)
		want.b += e.b
		for _, o := range others {
			k := o.v.b - pf.b
			if o.v.low32 || pf.low32 {
				k = uint64(uint32(k))
			}
			switch {
			case o.v.same(want):
				return 0
			case o.v.a == pf.a && o.v.s == 0 && pf.s == 0 && k != 0 && k&mask == 0:
				twin = cmp.Or(twin, o.at)
			}
		}
	}
	return twin
}

// heldAt is a linear value an instruction leaves in a register.
type heldAt struct {
	v  lin
	at uint64
}

// linearFrom walks back's instructions (addr's dominators, nearest
// first) forward from the last write of family g before back[at] (f's
// definition), with g's value there the unknown: the value f holds after
// back[at] (nil where it is not linear in g's), and those the
// instructions leave in other registers.
func (vc *valueChecks) linearFrom(fl *flow, back []uint64, at, f, g int) (*lin, []heldAt) {
	w := -1
	for i := at + 1; i < len(back); i++ {
		if x86.Writes(vc.arch, fl.op[back[i]], false)&(1<<g) != 0 {
			w = i
			break
		}
	}
	if w < 0 {
		return nil, nil
	}
	hold := map[int]heldAt{g: {lin{a: 1}, back[w]}}
	var others []heldAt
	var pf *lin
	for i := w - 1; i >= 0; i-- {
		x := back[i]
		in := fl.op[x]
		regs := map[int]lin{}
		for h, v := range hold {
			if !fl.writtenInto(v.at, x, x86.RegSet(1)<<h, vc.facts) {
				regs[h] = v.v
			}
		}
		v, ok := linStep(in, regs, nil)
		for h := range hold {
			if x86.Writes(vc.arch, in, false)&(1<<h) != 0 {
				delete(hold, h)
			}
		}
		if !ok {
			continue
		}
		d := x86.Family(in.Args[0].(x86asm.Reg))
		hold[d] = heldAt{v, x}
		if d != f {
			others = append(others, heldAt{v, x})
		}
		if i == at {
			pf = &v
		}
	}
	return pf, others
}
