package probe

import (
	"cmp"
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/types"
)

// lowering turns a piece of a location the debug info gives into
// operations a uprobe runs at the site's pc (lower): the CFA from the
// call frame information, an entry value from entryValues, the load LLVM
// leaves out of a spilled value (spilledLoad: spill.go), a vector
// register's value from the general register it was copied from
// (vectorCopy, vectorOps: veccopy.go).
type lowering struct {
	t       *target // the variables the debug info gives at an address (varsAt)
	arch    *arch.Arch
	frames  *frameTable
	flows   *flowIndex
	facts   *codeFacts
	entries *entryValues
}

// exprPiece reports whether p is a location a probe evaluates as an
// expression: one the stack machine computes, a static address, an entry
// value.
func exprPiece(p types.Piece) bool {
	switch p.Kind {
	case types.LocValue, types.LocAt, types.LocAddr, types.LocEntry:
		return true
	}
	return false
}

// lower turns an expression piece into operations a BPF program at pc
// evaluates from its registers and memory: the CFA from the call frame
// information there, an entry value from the register that provably still
// holds it. It returns the operations, whether they compute the address of
// the value (LocAt, LocAddr) rather than the value, why the value cannot
// be read there ("" when it can), and why the operations fail for some
// calls ("" when they fail for none: see fromCallers).
func (lo *lowering) lower(p types.Piece, t types.Type, pc uint64) (ops []types.Op, addr bool, why, fails string) {
	switch p.Kind {
	case types.LocAddr:
		return []types.Op{{Code: types.OpAddr, Value: p.Offset}}, true, "", ""
	case types.LocEntry:
		ops = []types.Op{{Code: types.OpEntry, Reg: p.Reg}}
	case types.LocAt:
		ops, addr = p.Ops, true
	default:
		ops = p.Ops
	}
	if p.Vector {
		sub, why := lo.vectorOps(ops, t, pc)
		if sub == nil {
			return nil, false, fmt.Sprintf("at %s, which reads a vector register: a uprobe cannot%s", types.Loc{Pieces: []types.Piece{p}}, why), ""
		}
		ops = sub
	}
	text := types.OpsString(ops)
	if p.Kind == types.LocValue && slotAddress(ops, lo.arch.SP, lo.framePointer(pc)) {
		if _, ptr := types.Resolve(t).(*types.Pointer); !ptr && t != nil {
			if loaded, _, ok := lo.spilledLoad(ops, pc); ok {
				return lo.lower(types.Piece{Kind: types.LocValue, Ops: loaded}, t, pc)
			}
			return nil, false, fmt.Sprintf("at %s: computed from a stack address without loading from it, not a value of its type (LLVM describes a spilled value so, leaving out the load)", text), ""
		}
	}
	// Each operation becomes one or more: map the old indexes to the new
	// ones for the branches.
	var out []types.Op
	at := make([]int, len(ops)+1)
	for i, o := range ops {
		at[i] = len(out)
		switch o.Code {
		case types.OpCFA:
			reg, off, ok := lo.frames.cfa(pc)
			if !ok {
				return nil, false, fmt.Sprintf("at %s: no call frame information gives the frame's address at %#x", text, pc), ""
			}
			out = append(out, regPlus(reg, off)...)
		case types.OpEntry:
			if ok, _ := lo.entries.entryKept(o.Reg, pc); ok {
				out = append(out, types.Op{Code: types.OpReg, Reg: o.Reg})
				break
			}
			// Changed since the entry: the callers may say what it was.
			reg := o.Reg
			sw, why, f := lo.entries.fromCallers(pc, func(p dwarf.CallParam) bool { return p.Reg == reg },
				fmt.Sprintf("at %s: the value %s had at the function's entry, which the function may change before %#x", text, reg, pc))
			if why != "" {
				return nil, false, why, ""
			}
			out, fails = append(out, sw...), cmp.Or(fails, f)
		case types.OpParam:
			param := uint64(o.Value)
			sw, why, f := lo.entries.fromCallers(pc, func(p dwarf.CallParam) bool { return p.Param == param },
				fmt.Sprintf("at %s: a parameter the compiler removed from this copy", text))
			if why != "" {
				return nil, false, why, ""
			}
			out, fails = append(out, sw...), cmp.Or(fails, f)
		case types.OpReg:
			if _, ok := lo.arch.PtRegs[o.Reg]; !ok {
				return nil, false, fmt.Sprintf("at %s: %s is not in pt_regs", text, o.Reg), ""
			}
			out = append(out, o)
		default:
			out = append(out, o)
		}
	}
	at[len(ops)] = len(out)
	for i, o := range ops {
		if o.Code == types.OpSkip || o.Code == types.OpBra {
			j := at[i] // the branch itself is one operation
			out[j].Value = int64(at[i+1+int(o.Value)] - j - 1)
		}
	}
	if err := types.CheckOps(out); err != nil {
		return nil, false, fmt.Sprintf("at %s: %v", text, err), ""
	}
	return out, addr, "", fails
}

// slotAddress reports whether a value expression computes with an address
// in the frame, never loading from it: it reads the stack pointer, the CFA
// or (when fp is set) the frame pointer with a negative offset, and has no
// dereference. No integer is computed so; LLVM describes a spilled value
// so when it drops the load (DW_OP_breg7 RSP+40, DW_OP_convert, ...,
// DW_OP_stack_value).
func slotAddress(ops []types.Op, sp string, fp bool) bool {
	frame := false
	for i, o := range ops {
		switch {
		case o.Code == types.OpDeref:
			return false
		case o.Code == types.OpCFA, o.Code == types.OpReg && o.Reg == sp:
			frame = true
		case fp && o.Code == types.OpReg && o.Reg == "RBP" && i+1 < len(ops) && ops[i+1].Code == types.OpConst && ops[i+1].Value < 0:
			frame = true
		}
	}
	return frame
}

// framePointer reports whether RBP may hold an address in the frame at
// pc. GCC without a frame pointer (-O2, -O3) allocates RBP as any other
// register, and describes a value held as RBP-1 so (gcc -O3 seed 1135 of
// bench/exact: fn10's c, which the calls passed as 1, 8, 15, ...); its
// call frame information then computes the frame's address from RSP.
// Other producers, and GCC code whose frame is computed from RBP, keep
// RBP as the frame pointer.
func (lo *lowering) framePointer(pc uint64) bool {
	if !lo.flows.gnuAt(pc) {
		return true
	}
	reg, _, ok := lo.frames.cfa(pc)
	return !ok || reg == "RBP"
}

// extendsSelf reports whether in writes reg with the low 32 bits it
// already holds, extended: movslq %edx,%rdx, mov %edx,%edx (the
// promotion of an int parameter).
func extendsSelf(reg string) func(x86asm.Inst) bool {
	return func(in x86asm.Inst) bool {
		dst, ok1 := in.Args[0].(x86asm.Reg)
		src, ok2 := in.Args[1].(x86asm.Reg)
		if !ok1 || !ok2 || gprName(dst) != reg || gprName(src) != reg || src < x86asm.EAX || src > x86asm.R15L {
			return false
		}
		switch in.Op {
		case x86asm.MOVSXD:
			return dst >= x86asm.RAX && dst <= x86asm.R15
		case x86asm.MOV:
			return dst == src
		}
		return false
	}
}

// low32 reports whether ops, from the operation after an entry value on,
// use only its low 32 bits: it shifts them up by 32 and back (the
// extension of an int).
func low32(ops []types.Op) bool {
	return len(ops) >= 4 && ops[0].Code == types.OpConst && ops[0].Value == 32 && ops[1].Code == types.OpShl &&
		ops[2].Code == types.OpConst && ops[2].Value == 32 && (ops[3].Code == types.OpShra || ops[3].Code == types.OpShr)
}

// regPlus pushes register reg's value plus off.
func regPlus(reg string, off int64) []types.Op {
	ops := []types.Op{{Code: types.OpReg, Reg: reg}}
	if off != 0 {
		ops = append(ops, types.Op{Code: types.OpConst, Value: off}, types.Op{Code: types.OpPlus})
	}
	return ops
}
