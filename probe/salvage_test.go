package probe

import (
	"strings"
	"testing"

	"github.com/binscope/binscope/types"
)

// TestCancelled: an expression that subtracts or xors one place from
// itself (clang -O2's [RSP+40]-[RSP+40] of two values given one slot, as
// bench/exact's clang-O2 seed 1050 has it) is refused, with why; the same
// shapes over two places, an addition of one place to itself, and
// constants alone are read.
func TestCancelled(t *testing.T) {
	rsp40 := []types.Op{{Code: types.OpReg, Reg: "RSP"}, {Code: types.OpConst, Value: 40}, {Code: types.OpPlus}, {Code: types.OpDeref, Value: 8}}
	rsp48 := []types.Op{{Code: types.OpReg, Reg: "RSP"}, {Code: types.OpConst, Value: 48}, {Code: types.OpPlus}, {Code: types.OpDeref, Value: 8}}
	join := func(parts ...[]types.Op) []types.Op {
		var out []types.Op
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	op := func(c types.OpCode, v int64) []types.Op { return []types.Op{{Code: c, Value: v}} }
	rdi := []types.Op{{Code: types.OpReg, Reg: "RDI"}}
	entryRDI := []types.Op{{Code: types.OpEntry, Reg: "RDI"}}
	tail := join(op(types.OpConst, -1), op(types.OpDiv, 0), op(types.OpConst, 5), op(types.OpMul, 0), op(types.OpConst, 2), op(types.OpPlus, 0), op(types.OpConst, 124), op(types.OpXor, 0))
	for _, c := range []struct {
		ops    []types.Op
		refuse bool
	}{
		{join(rsp40, rsp40, op(types.OpMinus, 0), tail), true},
		{join(rdi, rdi, op(types.OpXor, 0)), true},
		{join(rsp40, rsp48, op(types.OpMinus, 0), tail), false},
		{join(rdi, entryRDI, op(types.OpMinus, 0)), false},
		{join(rsp40, rsp40, op(types.OpPlus, 0)), false},
		{join(op(types.OpConst, 3), op(types.OpConst, 3), op(types.OpMinus, 0)), false},
		{join(rdi, op(types.OpDup, 0), op(types.OpMinus, 0)), false},
	} {
		why := cancelled(c.ops)
		if got := why != ""; got != c.refuse {
			t.Errorf("%s: refused %v, want %v (%s)", types.OpsString(c.ops), got, c.refuse, why)
		}
		if why != "" && !strings.Contains(why, types.OpsString(c.ops)) {
			t.Errorf("%s: why does not name the expression: %s", types.OpsString(c.ops), why)
		}
	}
}
