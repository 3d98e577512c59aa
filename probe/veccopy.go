package probe

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// vectorCopy is the general register that holds, at pc, the low size
// bytes of vector register name (X0..X15) an integer is in: every
// instruction that may last write the vector register before pc copies
// a general register into it (movq %rdi,%xmm1; movd %esi,%xmm1 for 4
// bytes or fewer), and that register, or one an earlier mov copied it
// from or to (see copiesOf), holds the same bytes and no path from the
// copy to pc writes it (gcc -O3 seed 3433: fn11's b, which the debug info
// gives as XMM1 for an unrolled loop's copies, where R14 it came from
// still holds it; seed 4016: fn07's c in XMM0, copied from RAX, which
// the code changes, after RBX got its low 4 bytes). width is how many
// low bytes of the vector register it holds (4 or 8; at least size).
// why says why none does.
func (lo *lowering) vectorCopy(pc uint64, name string, size int64) (gpr string, width int64, why string) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "X"))
	if !strings.HasPrefix(name, "X") || err != nil || n < 0 || n > 15 || lo.arch.SP != "RSP" {
		return "", 0, ""
	}
	none := fmt.Sprintf("; no general register holds a copy of it at %#x", pc)
	fl := lo.flows.at(pc)
	if fl == nil {
		return "", 0, none
	}
	xreg := x86asm.X0 + x86asm.Reg(n)
	defs, ok := lo.facts.reachingWrites(fl, pc, xreg)
	if !ok || len(defs) == 0 {
		return "", 0, none
	}
	var held map[int]int64 // per register, how many low bytes it holds on every path
	for i, d := range defs {
		in := fl.op[d]
		src, isReg := in.Args[1].(x86asm.Reg)
		var cands map[int]int64
		switch {
		case !isReg || in.Args[0] != xreg:
			return "", 0, none
		case in.Op == x86asm.MOVQ && src >= x86asm.RAX && src <= x86asm.R15:
			cands = lo.copiesOf(fl, d, x86.Family(src), 8)
		case in.Op == x86asm.MOVD && src >= x86asm.EAX && src <= x86asm.R15L:
			cands = lo.copiesOf(fl, d, x86.Family(src), 4)
		default:
			return "", 0, none
		}
		written := x86.RegSet(0)
		for y := range fl.between(pc, d, fl.pred) {
			written |= x86.Writes(lo.arch, fl.op[y], false)
		}
		for f, w := range cands {
			if written&(1<<f) != 0 || w < size || i > 0 && held[f] == 0 {
				delete(cands, f)
			} else if i > 0 {
				cands[f] = min(w, held[f])
			}
		}
		if held = cands; len(held) == 0 {
			if f := x86.Family(src); written&(1<<f) != 0 {
				return "", 0, fmt.Sprintf("; %s, which %#x copied into it, is written again before %#x", x86.GPRs[f], d, pc)
			}
			return "", 0, none
		}
	}
	best := -1
	for f := range held {
		if best < 0 || held[f] > held[best] || held[f] == held[best] && f < best {
			best = f
		}
	}
	return x86.GPRs[best], held[best], ""
}

// copiesOf are the general registers that hold, just before the
// instruction at d, the low bytes of register fam (width of them, 4 or
// 8), with how many they hold: fam itself, and those the straight code
// before d (each instruction with one predecessor) copies it from or to
// by a register mov (movl for 4 bytes), through sign extensions of its
// low 4 bytes (cltq, movslq), and does not write again before d.
func (lo *lowering) copiesOf(fl *flow, d uint64, fam int, width int64) map[int]int64 {
	out := map[int]int64{fam: width}
	t, w, written := fam, width, x86.RegSet(0)
	for x, steps := d, 0; steps < 32 && len(fl.pred[x]) == 1; steps++ {
		y := fl.pred[x][0]
		in := fl.op[y]
		dst, _ := in.Args[0].(x86asm.Reg)
		src, _ := in.Args[1].(x86asm.Reg)
		wide := dst >= x86asm.RAX && dst <= x86asm.R15 && src >= x86asm.RAX && src <= x86asm.R15
		narrow := dst >= x86asm.EAX && dst <= x86asm.R15L && src >= x86asm.EAX && src <= x86asm.R15L
		writes := x86.Writes(lo.arch, in, false)
		switch {
		case writes&(1<<t) == 0:
			if g := x86.Family(dst); in.Op == x86asm.MOV && (wide || narrow) && x86.Family(src) == t && written&(1<<g) == 0 {
				out[g] = max(out[g], min(w, map[bool]int64{true: 8, false: 4}[wide]))
			}
		case in.Op == x86asm.CDQE && t == 0:
			w = min(w, 4)
		case in.Op == x86asm.MOV && (wide || narrow) && x86.Family(dst) == t:
			t = x86.Family(src)
			if narrow {
				w = min(w, 4)
			}
			if written&(1<<t) == 0 {
				out[t] = max(out[t], w)
			}
		case in.Op == x86asm.MOVSXD && x86.Family(dst) == t && src >= x86asm.EAX && src <= x86asm.R15L:
			t, w = x86.Family(src), min(w, 4)
			if written&(1<<t) == 0 {
				out[t] = max(out[t], w)
			}
		default:
			return out
		}
		written |= writes
		x = y
	}
	return out
}

// intLike reports whether t is read as an integer (or a pointer): not a
// floating-point value.
func intLike(t types.Type) bool {
	switch b := types.Resolve(t).(type) {
	case *types.Base:
		return b.Encoding != types.Float && b.Encoding != types.Complex && b.ByteSize <= 8
	case *types.Pointer:
		return true
	}
	return false
}

// vectorOps are ops with each vector register they read replaced by the
// general register that holds a copy of it at pc (see vectorCopy), nil
// when one has none. A copy of only the low 4 bytes serves an integer
// of 4 bytes or fewer whose operations carry no higher bit down
// (addition, multiplication, logic, a left shift: gcc -O3 seed 4016
// fn07's a, (XMM0^56) as u32, where RBX holds XMM0's low 4 bytes), or
// one the expression masks to 4 bytes (fn13's long a, (XMM0^49)&0xffffffff).
// why says why not.
func (lo *lowering) vectorOps(ops []types.Op, t types.Type, pc uint64) ([]types.Op, string) {
	if !intLike(t) {
		return nil, ""
	}
	size, err := types.Sizeof(t)
	if err != nil || size <= 0 {
		return nil, ""
	}
	if n := len(ops); n >= 2 && ops[n-1].Code == types.OpAnd && ops[n-2].Code == types.OpConst && uint64(ops[n-2].Value) <= 0xffffffff ||
		n >= 1 && ops[n-1].Code == types.OpZext && ops[n-1].Value <= 4 {
		size = min(size, 4) // the value keeps only the low 4 bytes
	}
	out := slices.Clone(ops)
	for i, o := range out {
		if o.Code != types.OpReg || !strings.HasPrefix(o.Reg, "X") {
			if o.Code == types.OpEntry && strings.HasPrefix(o.Reg, "X") {
				return nil, ""
			}
			continue
		}
		gpr, width, why := lo.vectorCopy(pc, o.Reg, size)
		if gpr == "" {
			return nil, why
		}
		if width < 8 && !lowBitsRead(ops, width) {
			return nil, fmt.Sprintf("; %s holds only %d bytes of %s, and the expression reads higher ones", gpr, width, o.Reg)
		}
		out[i].Reg = gpr
	}
	return out, ""
}

// lowBitsRead reports whether the low width bytes of what ops compute
// depend only on the low width bytes of the registers they read (see
// lowBitsOnly; no extension of more bytes).
func lowBitsRead(ops []types.Op, width int64) bool {
	for _, o := range ops {
		switch {
		case o.Code == types.OpReg:
		case (o.Code == types.OpZext || o.Code == types.OpSext) && o.Value > width:
			return false
		case !lowBitsOnly([]types.Op{o}):
			return false
		}
	}
	return true
}
