package probe

import (
	"fmt"
	"slices"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// staleWindow bounds how far up its dominators from a site the write of a
// register is looked for.
const staleWindow = 512

// staleWrites bounds the writes of the register looked at (each reads the
// variables at a few addresses).
const staleWrites = 8

// staleLook bounds the addresses after a write whose variables are read
// for the one the write moved there.
const staleLook = 8

// stale checks a value the debug info computes from one register (R<<1,
// R*3+1: a caller's argument the callee's code never holds as such)
// against what the code did to that register before addr. It is stale
// when all of these hold: at addr the debug info puts another variable in
// the register, which the last write of the register before addr (on every
// path, updates of that variable in place passed over) moved there; the
// register held before that write a copy of another register, made on
// every path to the write; and control cannot go from that copy to addr
// (not through the copy again) past a write of the other register, which
// thus still holds what the expression was made for. GCC's variable
// tracking keeps such an expression past the write (seed 1080: fn03's a is
// RBX<<1, 2 * fn00's a, which RBX held as a copy of RBP until fn00's r was
// moved there), and every reader of the debug info, gdb too, prints a
// wrong value. A value the code itself computes from what the write left
// in the register (see computes) is read. It returns why the value is not
// read, or "".
func (vc *valueChecks) stale(addr uint64, name string, ops []types.Op) string {
	reg, ok := oneRegister(ops)
	if !ok {
		return ""
	}
	fl, back, k, moved := vc.lastMove(addr, name, reg, ops, "")
	if moved == nil {
		return ""
	}
	// The write moved the variable there: what did the register hold
	// before?
	bit := x86.RegBit(reg)
	w := back[k]
	for _, c := range back[k+1:] {
		if x86.Writes(vc.arch, fl.op[c], false)&bit == 0 {
			continue
		}
		src, ok := copied(fl.op[c])
		if !ok || src == reg || fl.writtenBetween(c, addr, x86.RegBit(src), vc.arch) || recopies(fl.op[w], fl.op[c], src, ops) {
			return ""
		}
		return fmt.Sprintf("the debug info gives %s, but %s holds %s from %#x on (%v writes it there): the expression was made for what %s held before, the copy of %s made at %#x",
			types.OpsString(ops), reg, moved.Name, w, fl.op[w].Op, reg, src, c)
	}
	return ""
}

// lastMove finds, for an expression ops of a value name that reads
// register reg at addr, the last write of reg before addr (on every path:
// back[k] of addr's chain of dominators back, updates of a variable in
// place passed over) when it moved another variable there (moved: the
// debug info puts it in reg after the write, at the nearest address of
// the chain that has one, or at addr), overwriting what reg held, and
// the code does not compute ops' value from what it wrote (see computes,
// with frame). moved is nil otherwise.
func (vc *valueChecks) lastMove(addr uint64, name, reg string, ops []types.Op, frame string) (fl *flow, back []uint64, k int, moved *types.Var) {
	if fl = vc.flows.at(addr); fl == nil {
		return nil, nil, 0, nil
	}
	bit := x86.RegBit(reg)
	back = append([]uint64{addr}, fl.dominating(addr, staleWindow)...)
	writes := 0
	for k = 1; k < len(back); k++ {
		w := back[k]
		if x86.Writes(vc.arch, fl.op[w], false)&bit == 0 {
			continue
		}
		if writes++; writes > staleWrites {
			return nil, nil, 0, nil
		}
		moved = nil
		for j := k - 1; j >= 0 && j >= k-staleLook && moved == nil; j-- {
			moved = vc.inRegAt(back[j], name, reg)
		}
		if moved == nil && frame != "" {
			moved = vc.inRegAt(addr, name, reg) // the site's own
		}
		if moved == nil {
			return nil, nil, 0, nil
		}
		before, err := vc.t.varsAt(w)
		if err != nil {
			return nil, nil, 0, nil
		}
		if v := sameVar(before, moved); v != nil && inReg(v.Loc, reg) {
			continue // an update of the variable where it lives
		}
		if !overwrites(fl.op[w], reg) || vc.computes(fl, w, addr, reg, ops, frame) {
			// The new value is computed from the old (xor $0xec,%rcx
			// where Rust's v2 is b^236 and the call's a is v2^53), or
			// the code makes the value from what w wrote: an
			// expression of the new value may be right.
			return nil, nil, 0, nil
		}
		return fl, back, k, moved
	}
	return nil, nil, 0, nil
}

// staleInCopy checks an expression of v at addr that reads one register
// besides loads of stack slots (see registerAndFrame) against the code and
// the other copies of the expansion it belongs to. An inlined call is one
// call of the source, whose arguments are made of the same variables in
// every copy of its code (an unrolled loop's bodies). It is stale when
// the last write of the register before addr moved another variable there
// (see lastMove: the code does not compute the value from it), and where
// another copy's entry of v's location list reads the register, the debug
// info gives it a third variable: the expression was made for what the
// register held there. GCC gives fn07's c as ([CFA-96]^34)+R12 in the
// fourth copy of fn03's loop after mov %r11,%r12 moved fn03's r into R12,
// where the other copies read R12 as fn03's a (gcc -O3 seed 3521; gdb
// prints the same wrong value). It returns why the value is not read, or
// "".
func (vc *valueChecks) staleInCopy(addr uint64, v *types.Var, ops []types.Op) string {
	if v == nil || v.Inline == "" {
		return ""
	}
	reg, frame, ok := vc.registerAndFrame(addr, ops)
	if !ok {
		return ""
	}
	fl, back, k, moved := vc.lastMove(addr, v.Name, reg, ops, frame)
	if moved == nil {
		return ""
	}
	site := vc.expansionAt(addr, v.Inline)
	if site == nil {
		return ""
	}
	for _, rg := range site.Ranges {
		at := rg[0]
		if at == addr || holds([][2]uint64{rg}, addr) {
			continue
		}
		vars, err := vc.t.varsAt(at)
		if err != nil {
			return ""
		}
		x := sameVar(vars, v)
		if x == nil || !readsReg(x.Loc, reg) {
			continue
		}
		if o := inRegBut(vars, v, reg); o != nil && sameVar([]types.Var{*o}, moved) == nil {
			w := back[k]
			return fmt.Sprintf("the debug info gives %s, but %s holds %s from %#x on (%v writes it there), from which the code computes the value nowhere, and in the copy of this call at %#x the debug info reads %s as %s: the expression was made for what %s held before",
				types.OpsString(ops), reg, moved.Name, w, fl.op[w].Op, at, reg, o.Name, reg)
		}
	}
	return ""
}

// recopies reports whether the write w copies again into the register
// what the copy c put there from src (which nothing writes between): a
// 64-bit copy of both, or the low 32 bits where ops read only those
// (gcc-O2 seed 3438: fn11's b as (RBP<<32)>>a32, RBP a copy of R12, then
// mov %r12d,%ebp: the same low half).
func recopies(w, c x86asm.Inst, src string, ops []types.Op) bool {
	from, ok := w.Args[1].(x86asm.Reg)
	if !ok || gprName(from) != src || w.Op != x86asm.MOV && w.Op != x86asm.MOVSXD {
		return false
	}
	if cf, ok := c.Args[1].(x86asm.Reg); ok && c.Op == x86asm.MOV && from >= x86asm.RAX && from <= x86asm.R15 && cf >= x86asm.RAX && cf <= x86asm.R15 {
		return true
	}
	rest := ops[1:]
	masked := len(rest) >= 2 && rest[0].Code == types.OpConst && rest[0].Value == 0xffffffff && rest[1].Code == types.OpAnd
	return (low32(rest) || masked) && (from >= x86asm.EAX && from <= x86asm.R15L || from >= x86asm.RAX && from <= x86asm.R15)
}

// expansionAt is the innermost expansion of the function named fn whose
// code holds addr, or nil.
func (vc *valueChecks) expansionAt(addr uint64, fn string) *types.InlineSite {
	inst, _ := vc.flows.instanceAt(addr)
	if inst == nil {
		return nil
	}
	var in *types.InlineSite
	for _, s := range inst.Sites {
		if s.Callee != nil && s.Callee.Name == fn && holds(s.Ranges, addr) {
			in = s
		}
	}
	return in
}

// readsReg reports whether l computes its value from register reg: the
// register, or an expression that reads it.
func readsReg(l types.Loc, reg string) bool {
	for _, p := range l.Pieces {
		switch p.Kind {
		case types.LocReg, types.LocMem:
			if p.Reg == reg {
				return true
			}
		case types.LocValue, types.LocAt:
			for _, o := range p.Ops {
				if o.Code == types.OpReg && o.Reg == reg {
					return true
				}
			}
		}
	}
	return false
}

// inRegBut is the variable of vars other than v that is in the whole
// register reg, the last of them, or nil.
func inRegBut(vars []types.Var, v *types.Var, reg string) *types.Var {
	var o *types.Var
	for i := range vars {
		if x := &vars[i]; inReg(x.Loc, reg) && sameVar([]types.Var{*x}, v) == nil {
			o = x
		}
	}
	return o
}

// inRegAt is the variable other than name the debug info puts in the
// whole register reg at addr, the last of them, or nil.
func (vc *valueChecks) inRegAt(addr uint64, name, reg string) *types.Var {
	vars, err := vc.t.varsAt(addr)
	if err != nil {
		return nil
	}
	var moved *types.Var
	for i := range vars {
		if v := &vars[i]; v.Name != name && inReg(v.Loc, reg) {
			moved = v
		}
	}
	return moved
}

// overwrites reports whether in writes reg with a value it computes from
// other registers only: a move or an address computation that does not
// read reg.
func overwrites(in x86asm.Inst, reg string) bool {
	switch in.Op {
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA:
	default:
		return false
	}
	switch a := in.Args[1].(type) {
	case x86asm.Reg:
		return gprName(a) != reg
	case x86asm.Mem:
		return gprName(a.Base) != reg && gprName(a.Index) != reg
	}
	return true
}

// inReg reports whether l is the whole register reg.
func inReg(l types.Loc, reg string) bool {
	return len(l.Pieces) == 1 && l.Pieces[0].Kind == types.LocReg && l.Pieces[0].Reg == reg
}

// sameVar is the variable of vars that v is (its name, scope and line).
func sameVar(vars []types.Var, v *types.Var) *types.Var {
	for i := range vars {
		if x := &vars[i]; x.Name == v.Name && x.Inline == v.Inline && x.DeclLine == v.DeclLine {
			return x
		}
	}
	return nil
}

// copied is the register a move from one general register to another
// reads (the 32-bit forms zero-extend: the value is the same for the
// expression's purposes only when it was so made; any width counts as
// the copy the register held).
func copied(in x86asm.Inst) (string, bool) {
	switch in.Op {
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSXD, x86asm.MOVSX:
	default:
		return "", false
	}
	if _, ok := in.Args[0].(x86asm.Reg); !ok {
		return "", false
	}
	s, ok := in.Args[1].(x86asm.Reg)
	if !ok {
		return "", false
	}
	name := gprName(s)
	return name, name != ""
}

// writtenBetween reports whether control can go from c to addr, passing
// neither again on the way, through an instruction that may write one of
// regs (a call writes those the callee need not keep).
func (fl *flow) writtenBetween(c, addr uint64, regs x86.RegSet, a *arch.Arch) bool {
	from := fl.between(c, addr, fl.succ)
	to := fl.between(addr, c, fl.pred)
	for x := range from {
		if to[x] && x86.Writes(a, fl.op[x], false)&regs != 0 {
			return true
		}
	}
	return len(fl.indirect) > 0
}

// between are the instructions control reaches from x along next (the
// successors or the predecessors) without passing x or y.
func (fl *flow) between(x, y uint64, next map[uint64][]uint64) map[uint64]bool {
	out := map[uint64]bool{}
	work := []uint64{x}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		for _, s := range next[n] {
			if s != x && s != y && !out[s] {
				out[s] = true
				work = append(work, s)
			}
		}
	}
	return out
}

// oneRegister is the register an expression computes its value from when
// it reads exactly one, no memory, and does more than name it (a register
// plus an offset, or more arithmetic).
func oneRegister(ops []types.Op) (string, bool) {
	reg := ""
	for _, o := range ops {
		switch o.Code {
		case types.OpReg:
			if reg != "" {
				return "", false
			}
			reg = o.Reg
		case types.OpConst, types.OpPlus, types.OpMinus, types.OpMul, types.OpShl, types.OpShr, types.OpShra,
			types.OpAnd, types.OpOr, types.OpXor, types.OpNeg, types.OpNot, types.OpZext, types.OpSext:
		default:
			return "", false
		}
	}
	return reg, reg != "" && len(ops) > 1
}

// misnamed checks an expression of the form (register OP constant)
// against the code before addr: where the code applies that operation with
// that constant to another register, one the debug info there gives a
// variable, while it gives the expression's register another variable, the
// expression names the wrong one. GCC gives the value of a call's argument
// a^225 as RBX^225 where the code computes it as xor $0xe1,%r12b, a in R12
// and r in RBX (gcc -O3 seed 1302), and every reader of the debug info,
// gdb too, prints r^225. The operation on a copy counts as on the copied
// register, where the debug info gives the copy no variable (gcc -O3
// seed 11217: fn07's a as RBX^244, main's r in RBX, where the code
// computes mov %r14d,%edi; xor $0xf4,%dil, main's a in R14). It returns
// why the value is not read, or "".
func (vc *valueChecks) misnamed(addr uint64, ops []types.Op) string {
	all := ops
	if n := len(ops); n == 7 && low32(ops[3:]) {
		ops = ops[:3] // the low half sign- or zero-extended: fn11's b = fn07's a
	}
	e, ok := vc.lastOp(addr, ops)
	if !ok || e.mem != nil {
		return ""
	}
	reg := e.src
	for _, a := range e.fl.dominating(addr, salvageWindow) {
		in := e.fl.op[a]
		dst, isReg := in.Args[0].(x86asm.Reg)
		imm, isImm := in.Args[1].(x86asm.Imm)
		if in.Op != e.want || !isReg || !isImm || int32(imm) != int32(e.k) || gprName(dst) == reg {
			continue
		}
		if e.fl.writtenBetween(a, addr, x86.RegBit(reg), vc.arch) {
			// The expression's register gets its value after a: the
			// operation there made another value (clang-O2 seed 3538:
			// a loop's add $0x1,%rax before lea (%r14,%r14,2),%r14
			// computes the R14 of fn12's a = R14+1).
			continue
		}
		vars, err := vc.t.varsAt(a)
		if err != nil {
			return ""
		}
		// The operation may work on a copy of the register the debug info
		// names (mov %r14d,%edi; xor $0xf4,%dil with main's a in R14).
		on := gprName(dst)
		if s := vc.copiedInto(e.fl, a, on); s != "" && s != reg && vc.inRegAt(a, "", on) == nil {
			on = s
		}
		var there, named *types.Var
		for i := range vars {
			switch v := &vars[i]; {
			case inReg(v.Loc, on):
				there = v
			case inReg(v.Loc, reg):
				named = v
			}
		}
		if named == nil && on != gprName(dst) {
			named = vc.inRegAt(addr, "", reg) // nothing written between
		}
		if there == nil || named == nil || there.Name == named.Name && there.Inline == named.Inline {
			return ""
		}
		return fmt.Sprintf("the debug info gives %s, but the code computes %v %#x on %s, which holds %s, while %s holds %s (%v at %#x): the expression names the wrong register, so that value would be wrong",
			types.OpsString(all), in.Op, int64(imm), on, there.Name, reg, named.Name, in.Op, a)
	}
	return ""
}

// overwritten checks an expression that loads from a stack slot (the CFA
// or a register the call frame information computes it from, plus
// offsets) against the stores to that slot (see slotWrites). Of a value of
// size bytes (0: unknown) that the rest of the expression computes from
// the load's low bytes only, only those bytes are checked (rust-O3 seed
// 3607: fn07's u32 a as [RSP+156] ^ 0xd6, read as 8 bytes of which a
// 4-byte store fills the first 4). A load further on in the expression
// is checked whole (gcc -O2 seed 12262: main's call of fn10.constprop.0
// at 0x131e gives the removed c as R9 + [CFA-96] read as 4 bytes, where
// an 8-byte store put something else there after the 4-byte one of a;
// gdb prints the same wrong value). It returns why the value is not
// read, or "".
func (ss *slotStores) overwritten(addr uint64, ops []types.Op, size int64) string {
	for i := range ops {
		base, off, n, ok := slotLoad(ops[i:])
		if !ok {
			continue
		}
		slot, ok := ss.cfaSlot(addr, base, off)
		if !ok {
			continue
		}
		if d := slices.IndexFunc(ops, func(o types.Op) bool { return o.Code == types.OpDeref }); i == 0 && size > 0 && size < n && lowBitsOnly(ops[d+1:]) {
			n = size
		}
		if why := ss.slotWrites(addr, slot, n); why != "" {
			return why
		}
	}
	return ""
}

// lowBitsOnly reports whether ops compute, from the value on the stack,
// a value whose low bytes depend on its low bytes only: constants and
// the operations that carry upward only (addition, subtraction,
// multiplication, the bitwise ones, a shift left, an extension).
func lowBitsOnly(ops []types.Op) bool {
	for _, o := range ops {
		switch o.Code {
		case types.OpConst, types.OpPlus, types.OpMinus, types.OpMul, types.OpAnd, types.OpOr, types.OpXor,
			types.OpShl, types.OpNeg, types.OpNot, types.OpZext, types.OpSext:
		default:
			return false
		}
	}
	return true
}

// otherWidth checks a value read from the n bytes at slot against the
// stores to that slot before addr: when the nearest one on every path
// (addr's chain of dominators) writes another width than the load reads,
// and an earlier one there writes that width (past more stores like the
// nearest), the debug info describes
// what the earlier store left there and missed the later one (gcc -O3
// seed 1456: main's i*9+1 given as [CFA-184]*9+1 after an 8-byte store
// gave the slot fn02's r+1; gcc -O2 seed 3100: fn07's a as [CFA-120],
// which main's 4-byte b filled before two 8-byte stores; gdb prints the
// same wrong values). It returns why the value is not read, or "".
func (ss *slotStores) otherWidth(addr uint64, slot, n int64) string {
	fl := ss.flows.at(addr)
	if fl == nil {
		return ""
	}
	var last *x86asm.Inst
	var lastAt uint64
	for _, w := range fl.dominating(addr, staleWindow) {
		if !ss.writesSlot(fl, w, slot, n) {
			continue
		}
		in := fl.op[w]
		mem, _ := storeTo(in)
		at, _ := ss.cfaSlot(w, gprName(mem.Base), int64(mem.Disp))
		if last == nil {
			if at == slot && int64(in.MemBytes) == n {
				return "" // the nearest store writes what is read
			}
			last, lastAt = &in, w
			continue
		}
		switch {
		case at == slot && int64(in.MemBytes) == n:
			return fmt.Sprintf("the debug info gives the %d bytes at CFA%+d, but the %d-byte store at %#x (%v) overwrote the slot after the %d-byte one at %#x: the location was made for what that one left there",
				n, slot, last.MemBytes, lastAt, last.Op, n, w)
		case at != slot || int64(in.MemBytes) != int64(last.MemBytes):
			return ""
		}
	}
	return ""
}

// slotLoad splits an expression that begins with a load of n bytes from a
// register or the CFA plus constants: base ("CFA" or the register), the
// offset, n.
func slotLoad(ops []types.Op) (base string, off, n int64, ok bool) {
	if len(ops) == 0 {
		return "", 0, 0, false
	}
	switch ops[0].Code {
	case types.OpCFA:
		base = "CFA"
	case types.OpReg:
		base = ops[0].Reg
	default:
		return "", 0, 0, false
	}
	i := 1
	for ; i+1 < len(ops) && ops[i].Code == types.OpConst && ops[i+1].Code == types.OpPlus; i += 2 {
		off += ops[i].Value
	}
	if i >= len(ops) || ops[i].Code != types.OpDeref || ops[i].Value <= 0 {
		return "", 0, 0, false
	}
	return base, off, ops[i].Value, true
}

// cfaSlot is the offset from the CFA of the address base+off at pc, base
// the CFA or the register the call frame information computes it from.
func (ss *slotStores) cfaSlot(pc uint64, base string, off int64) (int64, bool) {
	if base == "CFA" {
		return off, true
	}
	reg, k, ok := ss.frames.cfa(pc)
	if !ok || reg != base {
		return 0, false
	}
	return off - k, true
}

// regOps are the x86 operations of two registers that compute what a
// DWARF expression's binary operation of two registers computes, the
// first register the destination.
var regOps = map[types.OpCode]x86asm.Op{
	types.OpPlus: x86asm.ADD, types.OpXor: x86asm.XOR, types.OpOr: x86asm.OR,
	types.OpAnd: x86asm.AND, types.OpMinus: x86asm.SUB,
}

// doubled checks an expression (R1 OP R2) of v at addr against the code:
// when the nearest write of either register on every path to addr is that
// operation done in place (add %r13,%rbx for RBX + R13; for a commutative
// one either way round), neither register written again on a way to the
// site, and the debug info gives v further on, at the end of this entry of
// its location list, as the destination register alone, which control
// reaches from addr without a write of it, the expression was made for
// what the register held before the operation: read now it applies the
// operation twice. LLVM keeps such an entry of fn09's b = a + b past the
// add that made it in fn08 (clang -O2 seed 3440: RBX + R13 at 0x225e
// after add %r13,%rbx at 0x2227, RBX alone from 0x2278 on; gdb prints
// a + 2b too). It returns why the value is not read, or "".
func (vc *valueChecks) doubled(addr uint64, v *types.Var, ops []types.Op) string {
	if v == nil || len(ops) != 3 || ops[0].Code != types.OpReg || ops[1].Code != types.OpReg || v.Loc.To <= addr {
		return ""
	}
	want, ok := regOps[ops[2].Code]
	r1, r2 := ops[0].Reg, ops[1].Reg
	fl := vc.flows.at(addr)
	if !ok || r1 == r2 || fl == nil || !fl.has(v.Loc.To) {
		return ""
	}
	both := x86.RegBit(r1) | x86.RegBit(r2)
	for _, w := range fl.dominating(addr, staleWindow) {
		in := fl.op[w]
		if x86.Writes(vc.arch, in, false)&both == 0 {
			continue
		}
		dst, ok1 := in.Args[0].(x86asm.Reg)
		src, ok2 := in.Args[1].(x86asm.Reg)
		if in.Op != want || !ok1 || !ok2 {
			return ""
		}
		d, s := gprName(dst), gprName(src)
		if !(d == r1 && s == r2 || d == r2 && s == r1 && want != x86asm.SUB) ||
			fl.writtenBetween(w, addr, both, vc.arch) || !vc.aloneLater(fl, addr, v, d) {
			return ""
		}
		return fmt.Sprintf("the debug info gives %s, and %s alone from %#x on, which the code reaches without writing %s; %s at %#x did the operation already: read here the expression applies it twice, so that value would be wrong",
			types.OpsString(ops), d, v.Loc.To, d, in, w)
	}
	return ""
}

// aloneLater reports whether the debug info gives v at the end of its
// location list's entry holding addr as the register reg alone, and
// control goes from addr there on every path without writing reg.
func (vc *valueChecks) aloneLater(fl *flow, addr uint64, v *types.Var, reg string) bool {
	to := v.Loc.To
	vars, err := vc.t.varsAt(to)
	if err != nil || !fl.dominates(addr, to) || fl.writtenBetween(addr, to, x86.RegBit(reg), vc.arch) {
		return false
	}
	w := sameVar(vars, v)
	return w != nil && inReg(w.Loc, reg)
}

// registerAndFrame is the register an expression computes its value from
// besides loads of stack slots (see oneRegister): it reads exactly one
// register other than frame, the one the call frame information computes
// the CFA from at addr, and that one (or the CFA) only plus constants,
// loaded, at least once.
func (vc *valueChecks) registerAndFrame(addr uint64, ops []types.Op) (reg, frame string, ok bool) {
	frame, _, ok = vc.frames.cfa(addr)
	if !ok {
		return "", "", false
	}
	loads := 0
	for i := 0; i < len(ops); i++ {
		if _, end, ok := vc.frameLoad(addr, frame, ops, i); ok {
			i, loads = end, loads+1
			continue
		}
		switch o := ops[i]; o.Code {
		case types.OpReg:
			if reg != "" || o.Reg == frame {
				return "", "", false
			}
			reg = o.Reg
		case types.OpConst, types.OpPlus, types.OpMinus, types.OpMul, types.OpShl, types.OpShr, types.OpShra,
			types.OpAnd, types.OpOr, types.OpXor, types.OpNeg, types.OpNot, types.OpZext, types.OpSext:
		default:
			return "", "", false
		}
	}
	return reg, frame, reg != "" && loads > 0
}
