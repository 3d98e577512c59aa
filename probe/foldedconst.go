package probe

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// foldedConsts turns into ? an argument of an inline site that the debug
// info computes from constants alone, with operations (LLVM's
// DW_OP_lit1 DW_OP_constu 0x70 DW_OP_xor: an operation kept for a value
// that later became a constant), unless a store of the expansion's code,
// or a store of an immediate elsewhere in the function holding it,
// writes that value (the caller's code may store the call's argument
// before the call: rust-O3 seed 4459 main's su(10, 1, 176) for fn10's
// b = 20^164, which fn10 only reads back). The code folds such a
// computation into an immediate, so no instruction is left to check the
// operations against (see contradicted, droppedOp), and where LLVM
// dropped one of them the value is another: rust-O3 seed 4081 fn11's
// b = a^113 of an odd a, which LLVM computes as (a^112)&-2, given as
// 1^112 = 113 where the code stores the call's 112 (gdb prints 113 too).
func (cc *copyConsts) foldedConsts(s *spec.Site, site *types.InlineSite) {
	var cs *copyStores
	for k := range s.Args {
		f := &s.Args[k]
		if len(f.Chains) != 1 || f.Size <= 0 || f.Size > 8 {
			continue
		}
		v, ok := constExpr(f.Chains[0].Expr)
		if !ok {
			continue
		}
		if cs == nil {
			cs = cc.storesOf(site)
		}
		if !cs.writes(v, f.Size) && !cc.hostStores(site, v, f.Size) {
			f.Chains, f.Unavailable = nil, fmt.Sprintf("the debug info computes it from constants alone (%s = %d), which the code folds: no store of the expansion, nor a store of an immediate in the function holding it, writes that value, so an operation may be left out and the value would be wrong",
				types.OpsString(f.Chains[0].Expr), int64(v))
		}
	}
}

// constExpr is the value of ops when they compute from constants alone
// with at least one arithmetic operation (see oneRegArith).
func constExpr(ops []types.Op) (uint64, bool) {
	n := 0
	for _, o := range ops {
		switch o.Code {
		case types.OpConst:
		case types.OpPlus, types.OpMinus, types.OpMul, types.OpAnd, types.OpOr, types.OpXor, types.OpShl, types.OpShr,
			types.OpShra, types.OpNeg, types.OpNot, types.OpZext, types.OpSext:
			n++
		default:
			return 0, false
		}
	}
	if n == 0 {
		return 0, false
	}
	return evalArith(ops, 0)
}

// writes reports whether a store of the expansion writes c's low size
// bytes at a multiple of size into one of its places.
func (cs *copyStores) writes(c uint64, size int64) bool {
	want := binary.LittleEndian.AppendUint64(nil, c)[:size]
	for _, st := range cs.kinds {
		for _, s := range st {
			for _, v := range s.vals {
				for o := int64(0); o+size <= int64(len(v)); o += size {
					if bytes.Equal(v[o:o+size], want) {
						return true
					}
				}
			}
		}
	}
	return false
}

// hostStores reports whether a store of an immediate in the function
// instance holding site writes c's low size bytes.
func (cc *copyConsts) hostStores(site *types.InlineSite, c uint64, size int64) bool {
	inst := cc.flows.hostOf(site)
	if inst == nil {
		return false
	}
	fl, err := cc.flows.of(inst)
	if err != nil {
		return false
	}
	mask := ^uint64(0) >> (64 - 8*size)
	for _, a := range fl.addrs {
		in := fl.op[a]
		imm, isImm := in.Args[1].(x86asm.Imm)
		if _, st := storeTo(in); st && in.Op == x86asm.MOV && isImm && int64(in.MemBytes) >= size && uint64(int64(imm))&mask == c&mask {
			return true
		}
	}
	return false
}
