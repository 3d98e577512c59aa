package bpfprog

import (
	"fmt"
	"sync/atomic"

	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/bpfasm"
	"github.com/binscope/binscope/types"
	"github.com/binscope/binscope/unwind"
)

// exprTop is the stack slot above an expression's stack: entry d of the
// stack machine is the double word at exprTop - 8*(d+1), below every other
// slot the programs use (the unwinder's end at unwind.SlotsEnd, -176).
const exprTop = unwind.SlotsEnd - 16

func exprSlot(d int) int16 { return int16(exprTop - 8*(d+1)) }

// exprCount numbers the compiled expressions, for their labels.
var exprCount atomic.Uint64

// exprInsns compiles an expression (a lowered one: no OpEntry, OpCFA or
// OpParam) into BPF that leaves its value in R1, for a program attached
// at the file address at: registers come from the context (R6), memory
// through bpf_probe_read_user, static addresses are relocated by the
// distance between RIP and at. A faulting read, a division by zero or
// OpFail jumps to fail. R6 to R9 are kept.
//
// The stack machine's depth at each operation is known when compiling
// (types.CheckOps), so each entry has its own slot and the program has no
// loop: branches go forward only.
func exprInsns(a *arch.Arch, ops []types.Op, at uint64, fail string) (asm.Instructions, error) {
	if err := types.CheckOps(ops); err != nil {
		return nil, err
	}
	// Labels unique in the program, which may hold several expressions
	// with the same fail label (a string's pointer and length).
	x := &exprCompiler{a: a, at: at, fail: fail, n: exprCount.Add(1), targets: map[int]int{}, reachable: true}
	for i, o := range ops {
		if o.Code == types.OpSkip || o.Code == types.OpBra {
			x.targets[i+1+int(o.Value)] = -1
		}
	}
	for i := 0; i <= len(ops); i++ {
		if d, ok := x.targets[i]; ok {
			if d >= 0 {
				x.depth, x.reachable = d, true
			}
			// A label on a no-op register move: the next operation's
			// instructions follow it.
			x.in = append(x.in, asm.Mov.Imm(asm.R3, 0).WithSymbol(x.label(i, "")))
		}
		if i == len(ops) {
			break
		}
		if !x.reachable {
			continue
		}
		if err := x.op(i, ops[i]); err != nil {
			return nil, err
		}
	}
	return append(x.in, exprLoad(asm.R1, x.depth-1)), nil
}

// exprCompiler is what exprInsns keeps as it compiles one expression.
type exprCompiler struct {
	a         *arch.Arch
	at        uint64 // the file address the program is attached at
	fail      string // the label a failure jumps to
	n         uint64 // the expression's number, in its labels
	in        asm.Instructions
	depth     int         // of the stack machine, before the next operation
	targets   map[int]int // operation -> depth there, for the branches (-1: not yet known)
	reachable bool        // false after an unconditional jump, up to a target
}

// label is a label unique in the program, for operation i.
func (x *exprCompiler) label(i int, s string) string {
	return fmt.Sprintf("%s_x%d_%d%s", x.fail, x.n, i, s)
}

func exprLoad(r asm.Register, d int) asm.Instruction {
	return asm.LoadMem(r, asm.RFP, exprSlot(d), asm.DWord)
}

func exprStore(d int, r asm.Register) asm.Instruction {
	return asm.StoreMem(asm.RFP, exprSlot(d), r, asm.DWord)
}

// op compiles operation i, o.
func (x *exprCompiler) op(i int, o types.Op) error {
	switch o.Code {
	case types.OpReg, types.OpConst, types.OpAddr:
		return x.push(o)
	case types.OpDeref:
		slot := exprSlot(x.depth - 1)
		x.in = append(x.in,
			asm.LoadMem(asm.R3, asm.RFP, slot, asm.DWord),
			bpfasm.StoreImm64(asm.RFP, slot, 0),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, int32(slot)),
			asm.Mov.Imm(asm.R2, int32(o.Value)),
			asm.FnProbeReadUser.Call(),
			asm.JNE.Imm(asm.R0, 0, x.fail),
		)
	case types.OpNeg, types.OpNot, types.OpAbs, types.OpZext, types.OpSext:
		x.in = append(x.in, exprLoad(asm.R1, x.depth-1))
		x.in = append(x.in, unary(o, x.label(i, "_abs"))...)
		x.in = append(x.in, exprStore(x.depth-1, asm.R1))
	case types.OpDup, types.OpOver, types.OpPick, types.OpDrop, types.OpSwap, types.OpRot:
		x.stack(o)
	case types.OpSkip, types.OpBra, types.OpFail:
		x.jump(i, o)
	case types.OpEntry, types.OpCFA, types.OpParam:
		return fmt.Errorf("%s is not lowered for the site", o.Code)
	default:
		code, err := binaryOp(o.Code, x.label(i, ""), x.fail)
		if err != nil {
			return err
		}
		x.in = append(x.in, exprLoad(asm.R1, x.depth-2), exprLoad(asm.R2, x.depth-1))
		x.in = append(x.in, code...)
		x.in = append(x.in, exprStore(x.depth-2, asm.R1))
		x.depth--
	}
	return nil
}

// push compiles an operation that pushes a value: a register, a
// constant, a static address relocated by the distance between the
// instruction pointer and at.
func (x *exprCompiler) push(o types.Op) error {
	switch o.Code {
	case types.OpReg:
		off, ok := x.a.PtRegs[o.Reg]
		if !ok {
			return fmt.Errorf("register %s is not in pt_regs", o.Reg)
		}
		x.in = append(x.in, asm.LoadMem(asm.R1, rCtx, off, asm.DWord))
	case types.OpConst:
		x.in = append(x.in, asm.LoadImm(asm.R1, o.Value, asm.DWord))
	case types.OpAddr:
		ip, ok := x.a.PtRegs["RIP"]
		if !ok {
			ip, ok = x.a.PtRegs["PC"]
		}
		if !ok {
			return fmt.Errorf("%s: no instruction pointer in pt_regs", x.a.Name)
		}
		x.in = append(x.in,
			asm.LoadMem(asm.R1, rCtx, ip, asm.DWord),
			asm.LoadImm(asm.R2, o.Value-int64(x.at), asm.DWord),
			asm.Add.Reg(asm.R1, asm.R2))
	}
	x.in = append(x.in, exprStore(x.depth, asm.R1))
	x.depth++
	return nil
}

// stack compiles an operation that moves the stack's entries.
func (x *exprCompiler) stack(o types.Op) {
	d := x.depth
	switch o.Code {
	case types.OpDup, types.OpOver, types.OpPick:
		k := map[types.OpCode]int{types.OpDup: 0, types.OpOver: 1, types.OpPick: int(o.Value)}[o.Code]
		x.in = append(x.in, exprLoad(asm.R1, d-1-k), exprStore(d, asm.R1))
		x.depth++
	case types.OpDrop:
		x.depth--
	case types.OpSwap:
		x.in = append(x.in, exprLoad(asm.R1, d-1), exprLoad(asm.R2, d-2), exprStore(d-1, asm.R2), exprStore(d-2, asm.R1))
	case types.OpRot: // a b c -> c a b
		x.in = append(x.in, exprLoad(asm.R1, d-3), exprLoad(asm.R2, d-2), exprLoad(asm.R3, d-1),
			exprStore(d-3, asm.R3), exprStore(d-2, asm.R1), exprStore(d-1, asm.R2))
	}
}

// jump compiles a branch forward (its target's depth noted) or a jump to
// the fail label.
func (x *exprCompiler) jump(i int, o types.Op) {
	switch o.Code {
	case types.OpSkip:
		to := i + 1 + int(o.Value)
		x.targets[to] = x.depth
		x.in = append(x.in, asm.Ja.Label(x.label(to, "")))
		x.reachable = false
	case types.OpBra:
		x.depth--
		to := i + 1 + int(o.Value)
		x.targets[to] = x.depth
		x.in = append(x.in, exprLoad(asm.R1, x.depth), asm.JNE.Imm(asm.R1, 0, x.label(to, "")))
	case types.OpFail:
		x.in = append(x.in, asm.Ja.Label(x.fail))
		x.reachable = false
	}
}

// unary applies o to R1.
func unary(o types.Op, done string) asm.Instructions {
	switch o.Code {
	case types.OpNeg:
		return asm.Instructions{asm.Neg.Imm(asm.R1, 0)}
	case types.OpNot:
		return asm.Instructions{asm.Xor.Imm(asm.R1, -1)}
	case types.OpAbs:
		return asm.Instructions{asm.JSGE.Imm(asm.R1, 0, done), asm.Neg.Imm(asm.R1, 0), asm.Mov.Reg(asm.R1, asm.R1).WithSymbol(done)}
	}
	shift := int32(64 - 8*o.Value)
	if shift == 0 {
		return nil
	}
	right := asm.RSh
	if o.Code == types.OpSext {
		right = asm.ArSh
	}
	return asm.Instructions{asm.LSh.Imm(asm.R1, shift), right.Imm(asm.R1, shift)}
}

// binaryOp computes R1 = R1 op R2; R3 is scratch.
func binaryOp(c types.OpCode, l, fail string) (asm.Instructions, error) {
	simple := map[types.OpCode]asm.ALUOp{types.OpPlus: asm.Add, types.OpMinus: asm.Sub, types.OpMul: asm.Mul,
		types.OpAnd: asm.And, types.OpOr: asm.Or, types.OpXor: asm.Xor, types.OpShl: asm.LSh, types.OpShr: asm.RSh,
		types.OpShra: asm.ArSh, types.OpDivU: asm.Div, types.OpMod: asm.Mod}
	jumps := map[types.OpCode]asm.JumpOp{types.OpEq: asm.JEq, types.OpNe: asm.JNE, types.OpLt: asm.JSLT, types.OpGt: asm.JSGT,
		types.OpLe: asm.JSLE, types.OpGe: asm.JSGE, types.OpLtU: asm.JLT, types.OpGtU: asm.JGT, types.OpLeU: asm.JLE, types.OpGeU: asm.JGE}
	switch {
	case c == types.OpShl || c == types.OpShr || c == types.OpShra:
		// DWARF shifts by any count; BPF masks it: a count of 64 or
		// more shifts everything out (or copies the sign).
		op := simple[c]
		big := asm.Instructions{asm.Mov.Imm(asm.R1, 0)}
		if c == types.OpShra {
			big = asm.Instructions{asm.ArSh.Imm(asm.R1, 63)}
		}
		in := asm.Instructions{asm.JGE.Imm(asm.R2, 64, l+"_big"), op.Reg(asm.R1, asm.R2), asm.Ja.Label(l + "_done")}
		big[0] = big[0].WithSymbol(l + "_big")
		in = append(in, big...)
		return append(in, asm.Mov.Reg(asm.R1, asm.R1).WithSymbol(l+"_done")), nil
	case c == types.OpDivU || c == types.OpMod:
		return asm.Instructions{asm.JEq.Imm(asm.R2, 0, fail), simple[c].Reg(asm.R1, asm.R2)}, nil
	case c == types.OpPlus || c == types.OpMinus || c == types.OpMul || c == types.OpAnd || c == types.OpOr || c == types.OpXor:
		return asm.Instructions{simple[c].Reg(asm.R1, asm.R2)}, nil
	case c == types.OpDiv || c == types.OpModS:
		// Unsigned division of the magnitudes, then the sign: the
		// quotient's is the operands' product's, the remainder's the
		// dividend's.
		in := asm.Instructions{
			asm.JEq.Imm(asm.R2, 0, fail),
			asm.Mov.Imm(asm.R3, 0),
			asm.JSGE.Imm(asm.R1, 0, l+"_a"),
			asm.Neg.Imm(asm.R1, 0),
			asm.Mov.Imm(asm.R3, 1),
			asm.JSGE.Imm(asm.R2, 0, l+"_b").WithSymbol(l + "_a"),
			asm.Neg.Imm(asm.R2, 0),
		}
		if c == types.OpDiv {
			in = append(in, asm.Xor.Imm(asm.R3, 1))
		}
		op := asm.Div
		if c == types.OpModS {
			op = asm.Mod
		}
		return append(in,
			op.Reg(asm.R1, asm.R2).WithSymbol(l+"_b"),
			asm.JEq.Imm(asm.R3, 0, l+"_c"),
			asm.Neg.Imm(asm.R1, 0),
			asm.Mov.Reg(asm.R1, asm.R1).WithSymbol(l+"_c"),
		), nil
	}
	if j, ok := jumps[c]; ok {
		return asm.Instructions{
			asm.Mov.Imm(asm.R3, 1),
			j.Reg(asm.R1, asm.R2, l+"_t"),
			asm.Mov.Imm(asm.R3, 0),
			asm.Mov.Reg(asm.R1, asm.R3).WithSymbol(l + "_t"),
		}, nil
	}
	return nil, fmt.Errorf("operation %s cannot be compiled", c)
}
