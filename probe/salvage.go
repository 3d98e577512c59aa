package probe

import (
	"cmp"
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// salvageOps are the x86 operations with an immediate that compute what a
// DWARF expression's binary operation with a constant computes.
var salvageOps = map[types.OpCode]x86asm.Op{
	types.OpXor: x86asm.XOR, types.OpPlus: x86asm.ADD, types.OpOr: x86asm.OR,
	types.OpAnd: x86asm.AND, types.OpMinus: x86asm.SUB,
}

// salvageWindow bounds how far back from a site the code is read: far
// enough for an unrolled loop's third copy, which uses what the first
// computed (rust-O3 seed 3337: (EDI & -2) ^ 154 made 40 instructions up).
const salvageWindow = 64

// droppedOp checks an expression of the form (register OP constant) or
// ([register+offset] OP constant), the shape an optimiser gives a value it
// computes but keeps in no register, against the code before addr:
//
//   - When the code computes the value from that register (or from a load
//     of that memory, through register copies) with the same operation and
//     constant, but through another operation between them (mov %ebx,%eax;
//     and $-2,%eax; xor $0xea,%eax where the debug info says RBX ^ 0xea),
//     the expression left an operation out: LLVM's salvage of a value the
//     optimiser rewrote (a ^ 235 for an odd a is (a & -2) ^ 234) keeps the
//     last operation only.
//   - When the code applies the operation only with another constant to a
//     copy of the source (mov %r15,%r12; xor $0xca,%r12 where the debug
//     info says R15 ^ 108), and that constant is the expression's composed
//     with the one of another variable the debug info gives there as the
//     source with the same operation (b = R15 ^ 166, and 166 ^ 108 = 202),
//     the expression left out an operation the optimiser folded into that
//     constant: rustc's b = c ^ 166 and a call's a = b ^ 108 are c ^ 202 in
//     the code, and LLVM says c ^ 108. (The code's constant alone proves
//     nothing: GCC computes a nested call's a ^ 60 as RSI ^ 0xbf beside a
//     right RSI ^ 131.)
//
// Every reader of the debug info, gdb too, prints a wrong value. It
// returns why the value is not read, or "".
func (vc *valueChecks) droppedOp(addr uint64, ops []types.Op, size int64) string {
	e, ok := vc.lastOp(addr, ops)
	if !ok {
		return ""
	}
	back := e.fl.dominating(addr, salvageWindow)
	folded := ""
	for i, a := range back {
		in := e.fl.op[a]
		dst, isReg := in.Args[0].(x86asm.Reg)
		imm, isImm := in.Args[1].(x86asm.Imm)
		if in.Op != e.want || !isReg || !isImm {
			continue
		}
		between, at, from, copied := e.chain(back[i+1:], dst, ops)
		if len(between) > 0 && vc.facts.noOps(e.fl, at, size) {
			// The operations between change nothing the code proves
			// (rust-O3 2256: (3x+1) & -4 of an x that makes 3x+1 a
			// multiple of 4).
			between = nil
		}
		switch {
		case int32(imm) != int32(e.k):
			if from != "" && len(between) == 0 && folded == "" && vc.composes(addr, e, int64(imm)) && !e.xoredSince(addr, copied, back, int64(imm), size) {
				folded = fmt.Sprintf("the debug info gives %s, but the code computes %v %#x on a copy of %s (at %#x): an operation folded into that constant is left out, so that value would be wrong",
					types.OpsString(ops), in.Op, int64(imm), from, a)
			}
		case len(between) > 0:
			// Where the value came from need not be found: the
			// same operation and constant after another one is
			// LLVM's salvage (rust-O3 1666: (EDI&-2)^146 in the
			// code, [RSP]^146 in the debug info, a copy of a
			// spilled a in EDI).
			return fmt.Sprintf("the debug info gives %s, but the code applies %s to %s first (%s at %#x): an operation is left out, so that value would be wrong",
				types.OpsString(ops), between[len(between)-1], cmp.Or(from, "the value"), in.Op, a)
		case from == "":
		default:
			return "" // the code computes the expression as it is
		}
	}
	return folded
}

// chain follows what wrote dst up the instructions back (nearest first)
// through operations with an immediate and, for a load, register copies,
// to the expression's source: from names it ("" where the chain ends
// elsewhere or past back), between are the operations on the way there,
// copied is the address of the copy of a register source.
func (e opExpr) chain(back []uint64, dst x86asm.Reg, ops []types.Op) (between []string, at []uint64, from string, copied uint64) {
	cur := x86.Family(dst)
	for _, b := range back {
		bi := e.fl.op[b]
		d, ok := bi.Args[0].(x86asm.Reg)
		if !ok || x86.Family(d) != cur || x86.Writes(e.arch, bi, false)&(1<<cur) == 0 {
			continue // not written there (test $0x1,%al reads RAX only)
		}
		if bi.Op == x86asm.MOV || bi.Op == x86asm.MOVSXD {
			switch s := bi.Args[1].(type) {
			case x86asm.Reg:
				if e.mem == nil {
					if gprName(s) == e.src {
						return between, at, e.src, b
					}
					return between, at, "", 0
				}
				cur = x86.Family(s) // a copy: follow it
				continue
			case x86asm.Mem:
				if e.mem != nil && s.Index == 0 && gprName(s.Base) == e.src && int64(s.Disp) == *e.mem {
					return between, at, types.OpsString(ops[:len(ops)-2]), 0
				}
			}
			return between, at, "", 0
		}
		imm, ok := bi.Args[1].(x86asm.Imm)
		if !ok {
			return between, at, "", 0
		}
		between = append(between, fmt.Sprintf("%v %#x", bi.Op, int64(imm)))
		at = append(at, b)
	}
	return between, at, "", 0
}

// xoredSince reports whether the code changes e's source register
// between its copy at copied and addr by exclusive ors only, with
// constants that make the copy's imm the expression's constant (gcc -O2
// seed 10637: mov %edi,%eax; xor $0x3,%edi; xor $0xc9,%al, where the debug
// info gives RDI^202 after the xor of RDI: 3^202 is 0xc9, the value the
// code computes), every write to it there one of the chain of
// dominators; a 32-bit xor or movslq of itself only for a value of 4
// bytes or fewer, whose constants leave the sign bit alone.
func (e opExpr) xoredSince(addr, copied uint64, back []uint64, imm, size int64) bool {
	if copied == 0 || e.want != x86asm.XOR || e.mem != nil {
		return false
	}
	fam := x86.RegBit(e.src)
	onPath := map[uint64]bool{}
	k, changed := e.k, false
	for _, b := range back {
		if b == copied {
			break
		}
		onPath[b] = true
		in := e.fl.op[b]
		if x86.RegSet(x86.Writes(e.arch, in, false))&fam == 0 {
			continue
		}
		d, _ := in.Args[0].(x86asm.Reg)
		wide := d >= x86asm.RAX && d <= x86asm.R15
		switch v, isImm := in.Args[1].(x86asm.Imm); {
		case in.Op == x86asm.XOR && isImm && (wide || size <= 4 && d >= x86asm.EAX && d <= x86asm.R15L && uint64(v) < 1<<31):
			k, changed = k^int64(v), true
		case in.Op == x86asm.MOVSXD && size <= 4 && in.Args[1] == x86asm.EAX+(d-x86asm.RAX):
		default:
			return false
		}
	}
	for y := range e.fl.between(addr, copied, e.fl.pred) {
		if !onPath[y] && x86.Writes(e.arch, e.fl.op[y], false)&fam != 0 {
			return false
		}
	}
	return changed && int32(k) == int32(imm) && (size <= 4 || k == imm)
}

// composes reports whether the debug info gives, at addr, a variable as
// e's source with e's operation and a constant that, composed with e's,
// makes k: e is that variable OP e.k with the variable's operation left
// out (exclusive or and addition).
func (vc *valueChecks) composes(addr uint64, e opExpr, k int64) bool {
	vars, err := vc.t.varsAt(addr)
	if err != nil {
		return false
	}
	for _, v := range vars {
		ps := v.Loc.Pieces
		if len(ps) != 1 || ps[0].Kind != types.LocValue {
			continue
		}
		src, mem, rest, ok := salvageSource(ps[0].Ops)
		if !ok || src != e.src || (mem == nil) != (e.mem == nil) || mem != nil && *mem != *e.mem ||
			len(rest) != 2 || rest[0].Code != types.OpConst || salvageOps[rest[1].Code] != e.want {
			continue
		}
		switch e.want {
		case x86asm.XOR:
			if int32(rest[0].Value^e.k) == int32(k) {
				return true
			}
		case x86asm.ADD:
			if int32(rest[0].Value+e.k) == int32(k) {
				return true
			}
		}
	}
	return false
}

// opExpr is an expression of the form (source OP constant) at a site
// whose code is decoded: see lastOp.
type opExpr struct {
	fl   *flow
	arch *arch.Arch
	src  string // the register read
	mem  *int64 // the offset loaded from through it, or nil
	want x86asm.Op
	k    int64
}

// lastOp splits an expression (register OP constant) or ([register+offset]
// OP constant) at addr, the operation one of salvageOps.
func (vc *valueChecks) lastOp(addr uint64, ops []types.Op) (opExpr, bool) {
	src, mem, rest, ok := salvageSource(ops)
	if !ok || len(rest) != 2 || rest[0].Code != types.OpConst {
		return opExpr{}, false
	}
	want, ok := salvageOps[rest[1].Code]
	fl := vc.flows.at(addr)
	if !ok || fl == nil {
		return opExpr{}, false
	}
	return opExpr{fl: fl, arch: vc.arch, src: src, mem: mem, want: want, k: rest[0].Value}, true
}

// salvageSource splits an expression into the register it reads, the
// offset of the memory it loads through that register (nil: the
// register's value itself) and the operations after.
func salvageSource(ops []types.Op) (reg string, mem *int64, rest []types.Op, ok bool) {
	if len(ops) == 0 || ops[0].Code != types.OpReg {
		return "", nil, nil, false
	}
	reg, ops = ops[0].Reg, ops[1:]
	var off int64
	switch {
	case len(ops) >= 1 && ops[0].Code == types.OpDeref && ops[0].Value == 8:
		ops = ops[1:]
		mem = &off
	case len(ops) >= 3 && ops[0].Code == types.OpConst && ops[1].Code == types.OpPlus && ops[2].Code == types.OpDeref && ops[2].Value == 8:
		off = ops[0].Value
		ops = ops[3:]
		mem = &off
	}
	return reg, mem, ops, true
}

// dominating are up to n instructions that run before addr on every
// path to it, nearest first: its chain of dominators.
func (fl *flow) dominating(addr uint64, n int) []uint64 {
	d := fl.dominators()
	i, ok := d.idx[addr]
	if !ok {
		return nil
	}
	var out []uint64
	for p := d.idom[i]; p >= 0 && len(out) < n; p = d.idom[p] {
		out = append(out, d.addr[p])
	}
	return out
}

// gprName is the pt_regs name of the 64-bit register r is part of.
func gprName(r x86asm.Reg) string {
	if f := x86.Family(r); f >= 0 && f < len(x86.GPRs) {
		return x86.GPRs[f]
	}
	return ""
}

// cancelled checks an expression for a subtraction or exclusive or of two
// identical reads (a register, or memory through one): LLVM describes a
// value it computes from two values as an expression of both (c*5+2 of
// main's i as (x-y)/-1*5+2 of two induction variables), and when the
// register allocator gave the two one stack slot, the expression reads
// that slot twice: [RSP+40]-[RSP+40] is 0 whatever the slot holds, at
// most one of the two values is there, and every reader of the debug
// info, gdb too, prints one constant for every call. No compiler writes
// a constant so. It returns why the value is not read, or "".
func cancelled(ops []types.Op) string {
	type entry struct {
		s     string
		reads bool // a register or memory is read
	}
	var st []entry
	for _, o := range ops {
		switch o.Code {
		case types.OpReg, types.OpEntry:
			st = append(st, entry{s: o.Reg + "/" + fmt.Sprint(o.Code), reads: true})
			continue
		case types.OpCFA, types.OpAddr, types.OpConst, types.OpParam:
			st = append(st, entry{s: fmt.Sprint(o.Code, ":", o.Value)})
			continue
		case types.OpDup, types.OpOver, types.OpPick, types.OpSkip, types.OpBra, types.OpFail, types.OpSwap, types.OpRot, types.OpDrop:
			return "" // no judgement of an expression that copies or branches
		}
		n := len(st)
		switch o.Code {
		case types.OpDeref, types.OpNeg, types.OpNot, types.OpAbs, types.OpZext, types.OpSext:
			if n < 1 {
				return ""
			}
			st[n-1] = entry{s: fmt.Sprintf("%d:%d(%s)", o.Code, o.Value, st[n-1].s), reads: st[n-1].reads || o.Code == types.OpDeref}
			continue
		}
		if n < 2 {
			return ""
		}
		a, b := st[n-2], st[n-1]
		if (o.Code == types.OpMinus || o.Code == types.OpXor) && a.reads && a.s == b.s {
			return fmt.Sprintf("the debug info gives %s, which reads one place twice and cancels it out (the same whatever it holds): two values were given one place, so that value would be wrong",
				types.OpsString(ops))
		}
		st = append(st[:n-2], entry{s: fmt.Sprintf("(%s %d %s)", a.s, o.Code, b.s), reads: a.reads || b.reads})
	}
	return ""
}
