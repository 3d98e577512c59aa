package types

import (
	"encoding/json"
	"testing"
)

// TestOps: expressions spell as an expression (postfix when they branch),
// survive JSON, and CheckOps refuses what a BPF program could not run.
func TestOps(t *testing.T) {
	reg := func(r string) Op { return Op{Code: OpReg, Reg: r} }
	k := func(v int64) Op { return Op{Code: OpConst, Value: v} }
	for _, c := range []struct {
		ops  []Op
		text string
		bad  bool
	}{
		{[]Op{reg("RDI"), k(3), {Code: OpMul}, k(1), {Code: OpPlus}}, "(RDI*3)+1", false},
		{[]Op{{Code: OpCFA}, k(-68), {Code: OpPlus}, {Code: OpDeref, Value: 4}, k(39), {Code: OpXor}}, "u32[CFA-68]^39", false},
		{[]Op{{Code: OpEntry, Reg: "RSI"}, {Code: OpZext, Value: 4}}, "u32(entry(RSI))", false},
		{[]Op{reg("RDI"), {Code: OpDup}, {Code: OpBra, Value: 1}, {Code: OpFail}}, "RDI dup bra1 fail", false},
		{[]Op{reg("RDI"), {Code: OpPlus}}, "RDI plus", true},                          // one operand short
		{[]Op{reg("RDI"), {Code: OpSkip, Value: -1}}, "RDI skip-1", true},             // backwards
		{[]Op{reg("RDI"), {Code: OpBra, Value: 1}, reg("RSI")}, "RDI bra1 RSI", true}, // depths 0 and 1 join
		{[]Op{{Code: OpDeref, Value: 9}}, "deref9", true},
		{nil, "", true},
	} {
		if got := OpsString(c.ops); got != c.text {
			t.Errorf("%v: %q, want %q", c.ops, got, c.text)
		}
		if err := CheckOps(c.ops); (err != nil) != c.bad {
			t.Errorf("%q: CheckOps %v, want an error %v", c.text, err, c.bad)
		}
		b, err := json.Marshal(c.ops)
		if err != nil {
			t.Fatal(err)
		}
		var back []Op
		if err := json.Unmarshal(b, &back); err != nil || OpsString(back) != c.text {
			t.Errorf("%s: read back %v (%v)", b, back, err)
		}
	}
}
