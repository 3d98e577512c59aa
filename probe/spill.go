package probe

import (
	"github.com/binscope/binscope/types"
	"golang.org/x/arch/x86/x86asm"
)

// spilledLoad puts back the load LLVM leaves out of a value it describes
// from a spilled one: for a parameter computed from a variable kept in a
// stack slot (`a = (u32)c ^ 39`, c at [RSP+0]), clang writes
// `DW_OP_breg7 RSP+0, DW_OP_convert u64, DW_OP_convert u32, DW_OP_constu
// 39, DW_OP_xor, DW_OP_stack_value`: the slot's address where the slot's
// content belongs. ops must start with the address SP+k and not use the
// frame's address again. The load is put back only where the debug info
// and the code both show that the address itself cannot be the value:
//
//   - a variable in scope at pc lives in memory at exactly SP+k, 8 bytes
//     wide (the slot holds a value, the one the expression starts from);
//   - no instruction of the function copy holding pc makes a stack address
//     a value (an lea from RSP, RSP copied or pushed, compared, added to
//     another register): the address is then no value the program
//     computes, so no argument it passed.
//
// It returns the operations with the 8-byte load after the address, and
// the slot's variable; or why not.
func (lo *lowering) spilledLoad(ops []types.Op, pc uint64) ([]types.Op, string, bool) {
	sp := lo.arch.SP
	if len(ops) < 2 || ops[0].Code != types.OpReg || ops[0].Reg != sp {
		return nil, "", false
	}
	var k int64
	n := 1
	if len(ops) >= 3 && ops[1].Code == types.OpConst && ops[2].Code == types.OpPlus {
		k, n = ops[1].Value, 3
	}
	if n == len(ops) {
		return nil, "", false
	}
	for _, o := range ops[n:] {
		if o.Code == types.OpReg && o.Reg == sp || o.Code == types.OpCFA || o.Code == types.OpDeref ||
			o.Code == types.OpSkip || o.Code == types.OpBra || o.Code == types.OpEntry || o.Code == types.OpParam {
			return nil, "", false
		}
	}
	vars, err := lo.t.varsAt(pc)
	if err != nil {
		return nil, "", false
	}
	slot := ""
	for _, v := range vars {
		if len(v.Loc.Pieces) != 1 {
			continue
		}
		p := v.Loc.Pieces[0]
		if size, _ := types.Sizeof(v.Type); p.Kind == types.LocMem && p.Reg == sp && p.Offset == k && size == 8 {
			slot = v.Name
			break
		}
	}
	if slot == "" {
		return nil, "", false
	}
	fl := lo.flows.at(pc)
	if fl == nil {
		return nil, "", false
	}
	for _, a := range fl.addrs {
		if leaksSP(fl.op[a]) {
			return nil, "", false
		}
	}
	out := append([]types.Op{}, ops[:n]...)
	out = append(out, types.Op{Code: types.OpDeref, Value: 8})
	return append(out, ops[n:]...), slot, true
}

// leaksSP reports whether in may make a stack address a value: it computes
// an address from RSP (lea), or reads RSP as an operand other than the
// stack pointer's own adjustment (sub/add/and of an immediate) or a write
// to it.
func leaksSP(in x86asm.Inst) bool {
	isSP := func(a x86asm.Arg) bool {
		r, ok := a.(x86asm.Reg)
		return ok && (r == x86asm.RSP || r == x86asm.ESP || r == x86asm.SP || r == x86asm.SPB)
	}
	if in.Op == x86asm.LEA {
		if m, ok := in.Args[1].(x86asm.Mem); ok && (m.Base == x86asm.RSP || m.Base == x86asm.ESP || m.Index == x86asm.RSP) {
			return true
		}
	}
	for i, a := range in.Args {
		if a == nil || !isSP(a) {
			continue
		}
		switch {
		case i == 0 && (in.Op == x86asm.SUB || in.Op == x86asm.ADD || in.Op == x86asm.AND):
			if _, imm := in.Args[1].(x86asm.Imm); imm {
				continue
			}
			return true
		case i == 0 && (in.Op == x86asm.MOV || in.Op == x86asm.LEA || in.Op == x86asm.POP):
			continue // RSP written, not read
		}
		return true
	}
	return false
}
